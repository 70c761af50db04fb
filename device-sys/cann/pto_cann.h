/* The ACL, runtime, driver HAL and HCCL functions and types the PTO runtime uses, declared
 * from CANN's public prototypes (acl_base_rt.h / acl_rt.h, rt_external_kernel.h /
 * rts_kernel.h / kernel.h, ascend_hal.h, hccl_types.h / hccl.h) so that bindings can be made
 * without CANN installed. Only what the runtime calls is here. Layouts are CANN 8/9's; the
 * Rust side checks their sizes (device-sys/src/cann/layouts.rs). */
#ifndef PTO_CANN_H
#define PTO_CANN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- ACL runtime (libascendcl) ---- */

typedef int aclError;
#define ACL_SUCCESS 0
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000

typedef void *aclrtStream;
typedef void *aclrtDrvMemHandle;

typedef enum aclrtMemLocationType {
    ACL_MEM_LOCATION_TYPE_HOST = 0,
    ACL_MEM_LOCATION_TYPE_DEVICE = 1,
} aclrtMemLocationType;

typedef struct aclrtMemLocation {
    uint32_t id;
    aclrtMemLocationType type;
} aclrtMemLocation;

typedef enum aclrtMemAllocationType {
    ACL_MEM_ALLOCATION_TYPE_PINNED = 0,
} aclrtMemAllocationType;

typedef enum aclrtMemHandleType {
    ACL_MEM_HANDLE_TYPE_NONE = 0,
    ACL_MEM_HANDLE_TYPE_POSIX = 2,
} aclrtMemHandleType;

typedef enum aclrtMemAttr {
    ACL_DDR_MEM = 0,
    ACL_HBM_MEM = 1,
    ACL_DDR_MEM_HUGE = 2,
    ACL_DDR_MEM_NORMAL = 3,
    ACL_HBM_MEM_HUGE = 4,
    ACL_HBM_MEM_NORMAL = 5,
} aclrtMemAttr;

typedef struct aclrtPhysicalMemProp {
    aclrtMemHandleType handleType;
    aclrtMemAllocationType allocationType;
    aclrtMemAttr memAttr;
    aclrtMemLocation location;
    uint64_t reserve;
} aclrtPhysicalMemProp;

typedef enum aclrtMemGranularityOptions {
    ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
    ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1,
} aclrtMemGranularityOptions;

typedef enum aclrtMemAccessFlags {
    ACL_RT_MEM_ACCESS_FLAGS_NONE = 0x0,
    ACL_RT_MEM_ACCESS_FLAGS_READ = 0x1,
    ACL_RT_MEM_ACCESS_FLAGS_READWRITE = 0x3,
} aclrtMemAccessFlags;

typedef struct aclrtMemAccessDesc {
    aclrtMemAccessFlags flags;
    aclrtMemLocation location;
    uint8_t rsv[12];
} aclrtMemAccessDesc;

#define ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL

aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t *deviceId);
aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                          aclrtMemGranularityOptions option,
                                          size_t *granularity);
aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                             const aclrtPhysicalMemProp *prop, uint64_t flags);
aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr,
                                uint64_t flags);
aclError aclrtReleaseMemAddress(void *virPtr);
aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                     uint64_t flags);
aclError aclrtUnmapMem(void *virPtr);
aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count);
aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
                                         uint64_t flags, uint64_t *shareableHandle);
aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                           aclrtDrvMemHandle *handle);
aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum);

/* ---- ACL: memory, streams, timeouts, recovery, messages (acl_rt.h) ---- */

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
} aclrtMemMallocPolicy;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
} aclrtMemcpyKind;

typedef enum aclrtDevResLimitType {
    ACL_RT_DEV_RES_CUBE_CORE = 0,
    ACL_RT_DEV_RES_VECTOR_CORE = 1,
} aclrtDevResLimitType;

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind);
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtDestroyStream(aclrtStream stream);
/* timeout in ms; -1 waits forever */
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout);
aclError aclrtResetDeviceForce(int32_t deviceId);
/* timeout in us (0: the maximum); the one in force goes to actualTimeout */
aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout);
aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type,
                                uint32_t *value);
const char *aclGetRecentErrMsg(void);

/* ---- The runtime (libruntime: rt_external_kernel.h, rts_kernel.h, kernel.h) ---- */

typedef int32_t rtError_t;
typedef void *rtStream_t;
typedef void *rtBinHandle;
typedef void *rtFuncHandle;
#define RT_ERROR_NONE 0

typedef struct rtHostInputInfo {
    uint32_t addrOffset;
    uint32_t dataOffset;
} rtHostInputInfo_t;

/* The launch arguments of an AICPU kernel (48 bytes on CANN 8/9; older releases had u16
 * offsets and no timeout: zero-fill, and check sizes per version). */
typedef struct tagRtAicpuArgsEx {
    void *args;
    rtHostInputInfo_t *hostInputInfoPtr;
    rtHostInputInfo_t *kernelOffsetInfoPtr;
    uint32_t argsSize;
    uint16_t hostInputInfoNum;
    uint16_t kernelOffsetInfoNum;
    uint32_t soNameAddrOffset;
    uint32_t kernelNameAddrOffset;
    bool isNoNeedH2DCopy;
    uint16_t timeout;
    uint8_t reserved;
} rtAicpuArgsEx_t;

typedef struct {
    rtAicpuArgsEx_t baseArgs;
    size_t cpuParamHeadOffset;
    uint32_t rsv[4];
} rtCpuKernelArgs_t;

/* The launch arguments of an AICore kernel. */
typedef struct tagRtArgsEx {
    void *args;
    rtHostInputInfo_t *hostInputInfoPtr;
    uint32_t argsSize;
    uint32_t tilingAddrOffset;
    uint32_t tilingDataOffset;
    uint16_t hostInputInfoNum;
    uint8_t hasTiling;
    uint8_t isNoNeedH2DCopy;
    uint8_t reserved[4];
} rtArgsEx_t;

/* CANN 8/9 layout (16 bytes; older releases: the first 4 bytes only). */
typedef struct tagRtTaskCfgInfo {
    uint8_t qos;
    uint8_t partId;
    uint8_t schemMode; /* 0 normal, 1 batch, 2 sync */
    bool d2dCrossFlag;
    uint32_t blockDimOffset;
    uint8_t dumpflag;
    uint8_t neverTimeout;
    uint8_t rev[2];
    uint32_t localMemorySize;
} rtTaskCfgInfo_t;
#define RT_SCHEM_MODE_BATCH 1

typedef struct TagRtDevBinary {
    uint32_t magic;
    uint32_t version;
    const void *data;
    uint64_t length;
} rtDevBinary_t;
#define RT_DEV_BINARY_MAGIC_ELF 0x43554245u

typedef enum rtLaunchKernelAttrId {
    RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE = 1,
    RT_LAUNCH_KERNEL_ATTR_TIMEOUT = 7,
} rtLaunchKernelAttrId;

typedef union {
    uint8_t schemMode;
    uint16_t timeout;
    uint32_t rsv[4];
} rtLaunchKernelAttrVal_t;

typedef struct {
    rtLaunchKernelAttrId id;
    rtLaunchKernelAttrVal_t value;
} rtLaunchKernelAttr_t;

typedef struct {
    rtLaunchKernelAttr_t *attrs;
    size_t numAttrs;
} rtKernelLaunchCfg_t;

typedef enum rtLoadBinaryOption {
    RT_LOAD_BINARY_OPT_CPU_KERNEL_MODE = 3,
} rtLoadBinaryOption;

typedef union {
    int32_t cpuKernelMode; /* 0: the JSON only (the SO is on the device already) */
    uint32_t rsv[4];
} rtLoadBinaryOptionValue_t;

typedef struct {
    rtLoadBinaryOption optionId;
    rtLoadBinaryOptionValue_t value;
} rtLoadBinaryOption_t;

typedef struct {
    rtLoadBinaryOption_t *options;
    size_t numOpt;
} rtLoadBinaryConfig_t;

/* kernelType 5: KERNEL_TYPE_AICPU_KFC (the extend-kernels path). */
#define RT_KERNEL_TYPE_AICPU_KFC 5u
rtError_t rtAicpuKernelLaunchExWithArgs(uint32_t kernelType, const char *opName,
                                        uint32_t blockDim, const rtAicpuArgsEx_t *argsInfo,
                                        void *smDesc, rtStream_t stm, uint32_t flags);
rtError_t rtsBinaryLoadFromFile(const char *binPath, const rtLoadBinaryConfig_t *optionalCfg,
                                rtBinHandle *handle);
rtError_t rtsBinaryUnload(rtBinHandle binHandle);
rtError_t rtsFuncGetByName(rtBinHandle binHandle, const char *kernelName,
                           rtFuncHandle *funcHandle);
rtError_t rtsLaunchCpuKernel(rtFuncHandle funcHandle, uint32_t blockDim, rtStream_t stm,
                             const rtKernelLaunchCfg_t *cfg, rtCpuKernelArgs_t *argsInfo);
rtError_t rtRegisterAllKernel(const rtDevBinary_t *bin, void **handle);
rtError_t rtDevBinaryUnRegister(void *handle);
rtError_t rtKernelLaunchWithHandleV2(void *hdl, uint64_t tilingKey, uint32_t blockDim,
                                     rtArgsEx_t *argsInfo, void *smDesc, rtStream_t stm,
                                     const rtTaskCfgInfo_t *cfgInfo);

/* ---- The driver HAL (libascend_hal: ascend_hal.h) ---- */

typedef int drvError_t;
#define DRV_ERROR_NONE 0
#define HAL_CTRL_TYPE_ADDR_MAP 0
#define HAL_ADDR_MAP_TYPE_REG_AIC_CTRL 2u
#define HAL_MODULE_TYPE_AI_CORE 4
#define HAL_INFO_TYPE_OCCUPY 8

struct AddrMapInPara {
    unsigned int addr_type;
    unsigned int devid;
};

struct AddrMapOutPara {
    unsigned long long ptr;
    unsigned long long len;
};

/* Takes the driver's device id (ASCEND_RT_VISIBLE_DEVICES translated), not ACL's. */
drvError_t halMemCtl(int type, void *paramValue, size_t paramValueSize, void *outValue,
                     size_t *outSizeRet);
drvError_t halGetDeviceInfoByBuff(uint32_t devId, int32_t moduleType, int32_t infoType,
                                  void *buf, int32_t *size);

/* ---- HCCL (libhccl) ---- */

typedef enum HcclResult {
    HCCL_SUCCESS = 0,
    HCCL_E_PARA = 1,
    HCCL_E_PTR = 2,
    HCCL_E_MEMORY = 3,
    HCCL_E_INTERNAL = 4,
    HCCL_E_NOT_SUPPORT = 5,
    HCCL_E_NOT_FOUND = 6,
    HCCL_E_UNAVAIL = 7,
    HCCL_E_SYSCALL = 8,
    HCCL_E_TIMEOUT = 9,
    HCCL_E_OPEN_FILE_FAILURE = 10,
    HCCL_E_TCP_CONNECT = 11,
    HCCL_E_ROCE_CONNECT = 12,
    HCCL_E_TCP_TRANSFER = 13,
    HCCL_E_ROCE_TRANSFER = 14,
    HCCL_E_RUNTIME = 15,
    HCCL_E_DRV = 16,
    HCCL_E_PROFILING = 17,
    HCCL_E_CCE = 18,
    HCCL_E_NETWORK = 19,
    HCCL_E_AGAIN = 20,
    HCCL_E_REMOTE = 21,
} HcclResult;

typedef void *HcclComm;

#define HCCL_ROOT_INFO_BYTES 4108
typedef struct HcclRootInfo {
    char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo);
HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                HcclComm *comm);
HcclResult HcclCommDestroy(HcclComm comm);

#endif
