/* Two tasks of kernel args[0] over n = args[4] int64 words: the first reads x (args[1]) and
 * writes y (args[2]); the second reads y and writes z (args[3]). With args[5] = 0 the second
 * names y through another buffer (the same bytes from y + 8 on, as if it were an allocation
 * of its own): the runtime orders tasks by tiles of one buffer, so nothing orders the two
 * and the access check must say so. With args[5] = 1 it names y itself. */
#include <stddef.h>

#include "pto_aicpu.h"

static PtoTensorArg words(uint64_t buffer, uint64_t len, uint64_t base, uint64_t n,
                          PtoAccess access) {
    PtoTensorArg t = {.buffer = buffer, .buffer_len = len, .base = base, .elem = 8,
                      .rank = 1, .access = access, .shape = {(uint32_t)n, 1, 1, 1},
                      .strides = {1, 0, 0, 0}};
    return t;
}

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs != 6) return 1001;
    uint32_t kernel = (uint32_t)args[0];
    uint64_t x = args[1], y = args[2], z = args[3], n = args[4];
    PtoTensorArg first[2] = {words(x, 8 * n, x, n, PtoAccess_READ),
                             words(y, 8 * n, y, n, PtoAccess_WRITE)};
    PtoTask a = {.kernel = kernel, .class_ = 1, .tensors = first, .ntensors = 2};
    int32_t rc = ops->submit(ops->ctx, &a, NULL);
    if (rc != PTO_OK) return rc;
    PtoTensorArg second[2] = {
        args[5] ? words(y, 8 * n, y + 8, n - 1, PtoAccess_READ)
                : words(y + 8, 8 * n - 8, y + 8, n - 1, PtoAccess_READ),
        words(z, 8 * n, z, n - 1, PtoAccess_WRITE),
    };
    PtoTask b = {.kernel = kernel, .class_ = 1, .tensors = second, .ntensors = 2};
    return ops->submit(ops->ctx, &b, NULL);
}
