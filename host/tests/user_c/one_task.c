/* One task of kernel args[0] over n = args[3] int64 words: x (args[1], read) to y (args[2],
 * written). With args[4] != 0 the orchestration itself writes through a bad pointer. Its own
 * error codes are positive, apart from the runtime's statuses (0 or negative). */
#include <stddef.h>

#include "pto_aicpu.h"

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs < 4) return 1001;
    if (nargs > 4 && args[4] != 0) {
        volatile int64_t *bad = (volatile int64_t *)(uintptr_t)args[4];
        *bad = 1;
    }
    uint64_t x = args[1], y = args[2], n = args[3];
    PtoTensorArg t[2] = {
        {.buffer = x, .buffer_len = 8 * n, .base = x, .elem = 8, .rank = 1,
         .access = PtoAccess_READ, .shape = {(uint32_t)n, 1, 1, 1}, .strides = {1, 0, 0, 0}},
        {.buffer = y, .buffer_len = 8 * n, .base = y, .elem = 8, .rank = 1,
         .access = PtoAccess_WRITE, .shape = {(uint32_t)n, 1, 1, 1}, .strides = {1, 0, 0, 0}},
    };
    PtoTask task = {.kernel = (uint32_t)args[0], .class_ = 1, .tensors = t, .ntensors = 2};
    return ops->submit(ops->ctx, &task, NULL);
}
