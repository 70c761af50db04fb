/* The fake's device memory: aclrtMalloc, aclrtFree, aclrtMemcpy, aclrtMemset over host
 * memory (the fake's "device" is this process). Allocations are executable, so kernel code
 * uploaded as raw bytes (only `.text`, as on the chip) runs on the host CPU. Freeing an
 * address that is not an allocation is refused, and live allocations are counted. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "../pto_cann.h"
#include "fake_internal.h"

#define MAX_ALLOCS 1024

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t len;
} allocs[MAX_ALLOCS];

/* The allocation holding [p, p + n), or -1. */
static int holding(const void *p, size_t n) {
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < MAX_ALLOCS; i++) {
        uintptr_t b = (uintptr_t)allocs[i].p;
        if (b && a >= b && a + n <= b + allocs[i].len) return i;
    }
    return -1;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    (void)policy;
    if (FAKE_ENTER()) return FAKE_FAIL;
    if (!devPtr || size == 0) return fake_error(FAKE_BAD_PARAM, "fake CANN: aclrtMalloc(%zu)", size);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return fake_error(FAKE_NO_MEMORY, "fake CANN: %zu bytes of device memory not available", size);
    pthread_mutex_lock(&mu);
    int slot = -1;
    for (int i = 0; i < MAX_ALLOCS && slot < 0; i++)
        if (!allocs[i].p) slot = i;
    if (slot >= 0) {
        allocs[slot].p = p;
        allocs[slot].len = size;
    }
    pthread_mutex_unlock(&mu);
    if (slot < 0) {
        munmap(p, size);
        return fake_error(FAKE_NO_MEMORY, "fake CANN: too many allocations");
    }
    fake_live_add(FK_MEMORY, 1);
    *devPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFree(void *devPtr) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    pthread_mutex_lock(&mu);
    int i = holding(devPtr, 1);
    int ok = i >= 0 && allocs[i].p == devPtr;
    size_t len = ok ? allocs[i].len : 0;
    if (ok) allocs[i].p = NULL;
    pthread_mutex_unlock(&mu);
    if (!ok) return fake_error(FAKE_BAD_PARAM, "fake CANN: aclrtFree(%p): not an allocation", devPtr);
    munmap(devPtr, len);
    fake_live_add(FK_MEMORY, -1);
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    if (!dst || !src || count > destMax)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: aclrtMemcpy of %zu bytes into %zu", count,
                          destMax);
    pthread_mutex_lock(&mu);
    int dev_ok = kind == ACL_MEMCPY_HOST_TO_DEVICE   ? holding(dst, count) >= 0
                 : kind == ACL_MEMCPY_DEVICE_TO_HOST ? holding(src, count) >= 0
                 : kind == ACL_MEMCPY_DEVICE_TO_DEVICE
                     ? holding(src, count) >= 0 && holding(dst, count) >= 0
                     : 1;
    pthread_mutex_unlock(&mu);
    if (!dev_ok)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: aclrtMemcpy: the device side is not device memory");
    memmove(dst, src, count);
    return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    pthread_mutex_lock(&mu);
    int ok = devPtr && count <= maxCount && holding(devPtr, count) >= 0;
    pthread_mutex_unlock(&mu);
    if (!ok) return fake_error(FAKE_BAD_PARAM, "fake CANN: aclrtMemset outside device memory");
    memset(devPtr, value, count);
    return ACL_SUCCESS;
}
