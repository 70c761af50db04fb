/* The fake's AICore side and driver HAL: halMemCtl hands out a register area per device
 * (25 clusters, 8 MiB apart, the subcores 1 MiB apart inside, as the chip's), the occupancy
 * mask comes from halGetDeviceInfoByBuff, rtRegisterAllKernel takes an ELF device binary,
 * and rtKernelLaunchWithHandleV2 runs the AICore executor's host build
 * (device-sys/aicore/executor.cpp, compiled into this library) on 3 threads per block: the
 * block's AIC and its two AIV, each bound to its register window. What the registered ELF
 * holds is not run: the host can build no AICore code. A reset tells every executor still
 * waiting to exit. A core's registers keep what the last run left, as the chip's do. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../pto_cann.h"
#include "../../aicore/pto_aicore.h"
#include "fake_internal.h"

#define CLUSTERS 25
#define CLUSTER_STRIDE (8u << 20)
#define SUBCORE_STRIDE (1u << 20)
#define REG_DMB 0xA0
#define MAX_HANDLES 16
#define MAX_LAUNCHES 16

uint32_t fake_clusters(void);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *regs[16]; /* per driver device: the register area, for the process's life */
static int handles[MAX_HANDLES];

struct aicore_launch {
    int live;
    int device;
    uint32_t blocks, aic;
    PtoHandshake *hs;
};
static struct aicore_launch launches[MAX_LAUNCHES];

static volatile uint32_t *window(int device, uint32_t cluster, uint32_t sub) {
    return (volatile uint32_t *)(regs[device] + (size_t)cluster * CLUSTER_STRIDE +
                                 (size_t)sub * SUBCORE_STRIDE);
}

drvError_t halMemCtl(int type, void *paramValue, size_t paramValueSize, void *outValue,
                     size_t *outSizeRet) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    struct AddrMapInPara *in = paramValue;
    struct AddrMapOutPara *out = outValue;
    if (type != HAL_CTRL_TYPE_ADDR_MAP || !in || paramValueSize != sizeof *in || !out ||
        !outSizeRet || *outSizeRet < sizeof *out || in->addr_type != HAL_ADDR_MAP_TYPE_REG_AIC_CTRL ||
        in->devid >= 16)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: halMemCtl wants CTRL_TYPE_ADDR_MAP of the AIC_CTRL registers");
    size_t len = (size_t)CLUSTERS * CLUSTER_STRIDE;
    pthread_mutex_lock(&mu);
    if (!regs[in->devid]) {
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (p != MAP_FAILED) regs[in->devid] = p;
    }
    uint8_t *base = regs[in->devid];
    pthread_mutex_unlock(&mu);
    if (!base) return FAKE_NO_MEMORY;
    out->ptr = (uintptr_t)base;
    out->len = len;
    *outSizeRet = sizeof *out;
    return DRV_ERROR_NONE;
}

drvError_t halGetDeviceInfoByBuff(uint32_t devId, int32_t moduleType, int32_t infoType,
                                  void *buf, int32_t *size) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    if (devId >= 16 || moduleType != HAL_MODULE_TYPE_AI_CORE || infoType != HAL_INFO_TYPE_OCCUPY ||
        !buf || !size || *size < 8)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: halGetDeviceInfoByBuff wants AI_CORE / OCCUPY");
    uint64_t mask = (1ull << fake_clusters()) - 1;
    memset(buf, 0, (size_t)*size);
    memcpy(buf, &mask, 8);
    return DRV_ERROR_NONE;
}

rtError_t rtRegisterAllKernel(const rtDevBinary_t *bin, void **handle) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    if (!bin || !handle || bin->magic != RT_DEV_BINARY_MAGIC_ELF || !bin->data || bin->length < 4 ||
        memcmp(bin->data, "\x7f" "ELF", 4))
        return fake_error(FAKE_BAD_PARAM, "fake CANN: rtRegisterAllKernel wants an ELF device binary");
    pthread_mutex_lock(&mu);
    int slot = -1;
    for (int i = 0; i < MAX_HANDLES && slot < 0; i++)
        if (!handles[i]) slot = i;
    if (slot >= 0) handles[slot] = 1;
    pthread_mutex_unlock(&mu);
    if (slot < 0) return fake_error(FAKE_FAIL, "fake CANN: too many device binaries");
    fake_live_add(FK_AICORE_BINARY, 1);
    *handle = &handles[slot];
    return 0;
}

static int handle_index(void *h) {
    int *p = h;
    return p >= handles && p < handles + MAX_HANDLES ? (int)(p - handles) : -1;
}

rtError_t rtDevBinaryUnRegister(void *handle) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    int i = handle_index(handle);
    pthread_mutex_lock(&mu);
    int ok = i >= 0 && handles[i];
    if (ok) handles[i] = 0;
    pthread_mutex_unlock(&mu);
    if (!ok) return fake_error(FAKE_BAD_PARAM, "fake CANN: not a registered device binary");
    fake_live_add(FK_AICORE_BINARY, -1);
    return 0;
}

/* Thread `index` of a launch: block index / 3, then AIC, AIV 0, AIV 1. */
static uint32_t core_run(void *ctx, uint32_t index) {
    struct aicore_launch *l = ctx;
    uint32_t block = index / 3, sub = index % 3;
    uint32_t logical = sub == 0 ? block : l->aic + 2 * block + (sub - 1);
    volatile uint32_t *w = window(l->device, block, sub);
    pto_host_bind_core(w, block * 3 + sub);
    pto_aicore_run(&l->hs[logical], block, sub == 0 ? 0u : 1u);
    return 0;
}

static void core_done(void *ctx) {
    struct aicore_launch *l = ctx;
    pthread_mutex_lock(&mu);
    l->live = 0;
    pthread_mutex_unlock(&mu);
}

rtError_t rtKernelLaunchWithHandleV2(void *hdl, uint64_t tilingKey, uint32_t blockDim,
                                     rtArgsEx_t *argsInfo, void *smDesc, rtStream_t stm,
                                     const rtTaskCfgInfo_t *cfgInfo) {
    (void)smDesc;
    if (FAKE_ENTER()) return FAKE_FAIL;
    int hi = handle_index(hdl);
    pthread_mutex_lock(&mu);
    int registered = hi >= 0 && handles[hi];
    pthread_mutex_unlock(&mu);
    if (!registered) return fake_error(FAKE_BAD_PARAM, "fake CANN: not a registered device binary");
    if (tilingKey != 0 || !argsInfo || !argsInfo->args || argsInfo->argsSize != 8)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: the executor takes tiling key 0 and one 8-byte argument");
    if (!cfgInfo || cfgInfo->schemMode != RT_SCHEM_MODE_BATCH)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: the executor launch wants batch scheduling");
    int device = fake_stream_device(stm);
    uint64_t dev_args;
    memcpy(&dev_args, argsInfo->args, 8);
    const PtoAicoreArgs *a = (const PtoAicoreArgs *)(uintptr_t)dev_args;
    if (blockDim == 0 || blockDim > fake_clusters() || !a || a->aic_cores != blockDim || !a->handshakes)
        return fake_error(FAKE_BAD_PARAM,
                          "fake CANN: blockDim %u must be the clusters (1..%u) the executor arguments name",
                          blockDim, fake_clusters());
    pthread_mutex_lock(&mu);
    uint8_t *base = device >= 0 && device < 16 ? regs[device] : NULL;
    struct aicore_launch *l = NULL;
    for (int i = 0; i < MAX_LAUNCHES && !l; i++)
        if (!launches[i].live) l = &launches[i];
    if (l && base) *l = (struct aicore_launch){1, device, blockDim, a->aic_cores, (PtoHandshake *)(uintptr_t)a->handshakes};
    pthread_mutex_unlock(&mu);
    if (!base) return fake_error(FAKE_BAD_PARAM, "fake CANN: no register area mapped (halMemCtl) for device %d", device);
    if (!l) return fake_error(FAKE_FAIL, "fake CANN: too many AICore launches");
    int rc = fake_stream_submit(stm, 3 * blockDim, core_run, l, core_done, 507014);
    if (rc) core_done(l);
    return rc;
}

void fake_aicore_stop_all(int device) {
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAX_LAUNCHES; i++) {
        struct aicore_launch *l = &launches[i];
        if (!l->live || l->device != device) continue;
        for (uint32_t b = 0; b < l->blocks; b++)
            for (uint32_t s = 0; s < 3; s++)
                __atomic_store_n(&window(device, b, s)[REG_DMB / 4], PTO_DMB_EXIT, __ATOMIC_SEQ_CST);
        for (uint32_t c = 0; c < 3 * l->blocks; c++)
            __atomic_store_n(&l->hs[c].aicpu_ready, 1u, __ATOMIC_SEQ_CST);
    }
    pthread_mutex_unlock(&mu);
}
