/* A fake CANN for tests, ACL's device, VMM and HCCL part: the functions of pto_cann.h over
 * host memory (memfd physical memory, mmap'd address ranges). With the other fake_*.c files
 * it is built as one libascendcl.so (libhccl.so, libruntime.so and libascend_hal.so link to
 * the same file), so the runtime's loader, call sequence, error paths and clean-up run for
 * real without an NPU. The gate every call passes, the live counts and the control
 * functions are fake_control.c's.
 *
 * Like CANN, it refuses to free memory that is still mapped or to release a mapped range,
 * so a teardown in the wrong order leaks and the tests see it. Build with -DFAKE_OMIT_MAPMEM
 * to leave aclrtMapMem out (a CANN missing a required symbol), -DFAKE_OMIT_SETPID to leave
 * out aclrtMemSetPidToShareableHandle (an optional one). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../pto_cann.h"
#include "fake_internal.h"

#define FAIL_ACL FAKE_FAIL
#define BAD_PARAM FAKE_BAD_PARAM
#define GRANULARITY 65536u
#define MAX_RANGES 256

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int inited;
static __thread int current_device = -1;

struct physical {
    int fd;
    size_t size;
    int maps;
};

struct range {
    void *va;
    size_t size;
    struct physical *mapped;
};
static struct range ranges[MAX_RANGES];

#define enter() FAKE_ENTER()
#define COUNT(kind, d) fake_live_add(kind, d)

static struct range *find(void *va) {
    for (int i = 0; i < MAX_RANGES; i++)
        if (ranges[i].va == va && va) return &ranges[i];
    return NULL;
}

/* The calling thread's device (-1: none set). */
int fake_current_device(void) { return current_device; }

aclError aclInit(const char *configPath) {
    (void)configPath;
    if (enter()) return FAIL_ACL;
    pthread_mutex_lock(&mu);
    int again = inited;
    inited = 1;
    pthread_mutex_unlock(&mu);
    if (!again) COUNT(FK_INIT, 1);
    return again ? ACL_ERROR_REPEAT_INITIALIZE : ACL_SUCCESS;
}

aclError aclFinalize(void) {
    if (enter()) return FAIL_ACL;
    pthread_mutex_lock(&mu);
    int was = inited;
    inited = 0;
    pthread_mutex_unlock(&mu);
    if (was) COUNT(FK_INIT, -1);
    return ACL_SUCCESS;
}

static long dev_refs[16];

aclError aclrtSetDevice(int32_t deviceId) {
    if (enter()) return FAIL_ACL;
    if (deviceId < 0 || deviceId > 15)
        return fake_error(BAD_PARAM, "fake CANN: no device %d", (int)deviceId);
    current_device = deviceId;
    pthread_mutex_lock(&mu);
    dev_refs[deviceId]++;
    pthread_mutex_unlock(&mu);
    COUNT(FK_DEVICE, 1);
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
    if (enter()) return FAIL_ACL;
    if (deviceId < 0 || deviceId > 15) return BAD_PARAM;
    pthread_mutex_lock(&mu);
    int had = dev_refs[deviceId] > 0;
    if (had) dev_refs[deviceId]--;
    pthread_mutex_unlock(&mu);
    if (!had) return fake_error(BAD_PARAM, "fake CANN: device %d was not set", (int)deviceId);
    COUNT(FK_DEVICE, -1);
    return ACL_SUCCESS;
}

/* Drops every reference to the device and stops its cores (the executors still waiting
 * are told to exit; a kernel that hangs keeps its thread until it returns). */
aclError aclrtResetDeviceForce(int32_t deviceId) {
    if (enter()) return FAIL_ACL;
    if (deviceId < 0 || deviceId > 15) return BAD_PARAM;
    fake_aicore_stop_all(deviceId);
    pthread_mutex_lock(&mu);
    long n = dev_refs[deviceId];
    dev_refs[deviceId] = 0;
    pthread_mutex_unlock(&mu);
    COUNT(FK_DEVICE, -n);
    return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId) {
    if (enter()) return FAIL_ACL;
    if (!deviceId || current_device < 0) return BAD_PARAM;
    *deviceId = current_device;
    return ACL_SUCCESS;
}

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                          aclrtMemGranularityOptions option, size_t *granularity) {
    (void)option;
    if (enter()) return FAIL_ACL;
    if (!prop || !granularity) return BAD_PARAM;
    *granularity = GRANULARITY;
    return ACL_SUCCESS;
}

static aclError new_physical(int fd, size_t size, aclrtDrvMemHandle *handle) {
    struct physical *p = calloc(1, sizeof *p);
    if (!p) return FAIL_ACL;
    p->fd = fd;
    p->size = size;
    *handle = p;
    COUNT(FK_PHYSICAL, 1);
    return ACL_SUCCESS;
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                             const aclrtPhysicalMemProp *prop, uint64_t flags) {
    (void)flags;
    if (enter()) return FAIL_ACL;
    if (!handle || !prop || size == 0 || size % GRANULARITY) return BAD_PARAM;
    int fd = memfd_create("fake-cann-hbm", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) return FAIL_ACL;
    return new_physical(fd, size, handle);
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
    if (enter()) return FAIL_ACL;
    struct physical *p = handle;
    if (!p) return BAD_PARAM;
    if (p->maps > 0) return BAD_PARAM; /* still mapped: refused, as CANN does */
    close(p->fd);
    free(p);
    COUNT(FK_PHYSICAL, -1);
    return ACL_SUCCESS;
}

aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr,
                                uint64_t flags) {
    (void)alignment, (void)expectPtr, (void)flags;
    if (enter()) return FAIL_ACL;
    if (!virPtr || size == 0) return BAD_PARAM;
    void *va = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (va == MAP_FAILED) return FAIL_ACL;
    pthread_mutex_lock(&mu);
    struct range *r = NULL;
    for (int i = 0; i < MAX_RANGES && !r; i++)
        if (!ranges[i].va) r = &ranges[i];
    if (r) {
        *r = (struct range){va, size, NULL};
        COUNT(FK_RESERVED, 1);
    }
    pthread_mutex_unlock(&mu);
    if (!r) {
        munmap(va, size);
        return FAIL_ACL;
    }
    *virPtr = va;
    return ACL_SUCCESS;
}

aclError aclrtReleaseMemAddress(void *virPtr) {
    if (enter()) return FAIL_ACL;
    pthread_mutex_lock(&mu);
    struct range *r = find(virPtr);
    aclError e = ACL_SUCCESS;
    if (!r || r->mapped) e = BAD_PARAM; /* unknown, or still mapped */
    else {
        munmap(r->va, r->size);
        r->va = NULL;
        COUNT(FK_RESERVED, -1);
    }
    pthread_mutex_unlock(&mu);
    return e;
}

#ifndef FAKE_OMIT_MAPMEM
aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                     uint64_t flags) {
    (void)flags;
    if (enter()) return FAIL_ACL;
    struct physical *p = handle;
    pthread_mutex_lock(&mu);
    struct range *r = find(virPtr);
    aclError e = ACL_SUCCESS;
    if (!r || !p || r->mapped || size != r->size || offset + size > p->size) e = BAD_PARAM;
    else if (mmap(virPtr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd,
                  (off_t)offset) == MAP_FAILED)
        e = FAIL_ACL;
    else {
        r->mapped = p;
        p->maps++;
        COUNT(FK_MAPPED, 1);
    }
    pthread_mutex_unlock(&mu);
    return e;
}
#endif

aclError aclrtUnmapMem(void *virPtr) {
    if (enter()) return FAIL_ACL;
    pthread_mutex_lock(&mu);
    struct range *r = find(virPtr);
    aclError e = ACL_SUCCESS;
    if (!r || !r->mapped) e = BAD_PARAM;
    else {
        mmap(r->va, r->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        r->mapped->maps--;
        r->mapped = NULL;
        COUNT(FK_MAPPED, -1);
    }
    pthread_mutex_unlock(&mu);
    return e;
}

/* The driver's id of logical device `d` under ASCEND_RT_VISIBLE_DEVICES (-1: not visible). */
static long driver_id(int d) {
    const char *v = getenv("ASCEND_RT_VISIBLE_DEVICES");
    if (!v || !*v) return d;
    for (int i = 0; *v; i++) {
        char *end;
        long id = strtol(v, &end, 10);
        if (end == v) return -1;
        if (i == d) return id;
        v = *end == ',' ? end + 1 : end;
    }
    return -1;
}

aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count) {
    if (enter()) return FAIL_ACL;
    /* CANN 9 on A2/A3: the access descriptor takes the driver's id, not ACL's. */
    if (desc && count > 0 && (long)desc->location.id != driver_id(current_device))
        return fake_error(BAD_PARAM, "fake CANN: aclrtMemSetAccess location id %u is not the driver id %ld of device %d",
                          desc->location.id, driver_id(current_device), current_device);
    pthread_mutex_lock(&mu);
    struct range *r = find(virPtr);
    aclError e = (!r || !r->mapped || size != r->size || !desc || count == 0) ? BAD_PARAM
                                                                               : ACL_SUCCESS;
    pthread_mutex_unlock(&mu);
    return e;
}

aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
                                         uint64_t flags, uint64_t *shareableHandle) {
    (void)handleType, (void)flags;
    if (enter()) return FAIL_ACL;
    struct physical *p = handle;
    if (!p || !shareableHandle) return BAD_PARAM;
    *shareableHandle = ((uint64_t)getpid() << 32) | (uint32_t)p->fd;
    return ACL_SUCCESS;
}

aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                           aclrtDrvMemHandle *handle) {
    (void)deviceId;
    if (enter()) return FAIL_ACL;
    if (!handle) return BAD_PARAM;
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/fd/%u", (unsigned)(shareableHandle >> 32),
             (unsigned)(shareableHandle & 0xffffffffu));
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return BAD_PARAM;
    off_t size = lseek(fd, 0, SEEK_END);
    return new_physical(fd, (size_t)size, handle);
}

#ifndef FAKE_OMIT_SETPID
aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum) {
    (void)shareableHandle, (void)pid, (void)pidNum;
    if (enter()) return FAIL_ACL;
    return ACL_SUCCESS;
}
#endif

/* ---- HCCL ---- */

static const char ROOT_MAGIC[8] = "FAKEROOT";

HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo) {
    if (enter()) return HCCL_E_INTERNAL;
    if (!rootInfo) return HCCL_E_PTR;
    memset(rootInfo, 0, sizeof *rootInfo);
    memcpy(rootInfo->internal, ROOT_MAGIC, sizeof ROOT_MAGIC);
    return HCCL_SUCCESS;
}

HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                HcclComm *comm) {
    if (enter()) return HCCL_E_INTERNAL;
    if (!rootInfo || !comm) return HCCL_E_PTR;
    if (memcmp(rootInfo->internal, ROOT_MAGIC, sizeof ROOT_MAGIC) || rank >= nRanks)
        return HCCL_E_PARA;
    *comm = malloc(1);
    COUNT(FK_COMM, 1);
    return HCCL_SUCCESS;
}

HcclResult HcclCommDestroy(HcclComm comm) {
    if (enter()) return HCCL_E_INTERNAL;
    if (!comm) return HCCL_E_PTR;
    free(comm);
    COUNT(FK_COMM, -1);
    return HCCL_SUCCESS;
}
