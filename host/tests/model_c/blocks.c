/* An orchestration of SPMD blocks, a per-lane MIX task and a read of produced data, through
 * pto-launch run. Arguments: kernels split, count, bump, lanes (args[0..4)); buffers x (n
 * int64, read), y (n int64), c (1 word), z (one word), w (6 words) (args[4..9)); n, blocks,
 * threshold (args[9..12)).
 *   1. `split` over x -> y as `blocks` SPMD blocks: block b writes y[i] = 3 x[i] + 1000 b for
 *      its share of the elements.
 *   2. `count` y -> c: how many y[i] are at least `threshold`.
 *   3. The orchestration waits for c (ops->settle), reads it, and submits that many `bump`
 *      tasks on z, each adding 1.
 *   4. A MIX task of 2 blocks whose AIC lane runs kernel `lanes` and whose AIV lanes run
 *      kernels `lanes` + 1 and `lanes` + 2: each writes its block and lane into w.
 * Its own error codes are positive, apart from the runtime's statuses (0 or negative). */
#include <stddef.h>

#include "pto_aicpu.h"

static PtoTensorArg words(uint64_t base, uint64_t n, PtoAccess access) {
    PtoTensorArg t = {.buffer = base, .buffer_len = 8 * n, .base = base, .elem = 8, .rank = 1,
                      .access = access, .shape = {(uint32_t)n, 1, 1, 1}, .strides = {1, 0, 0, 0}};
    return t;
}

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs < 12) return 1001;
    uint32_t split = (uint32_t)args[0], count = (uint32_t)args[1], bump = (uint32_t)args[2],
             lanes = (uint32_t)args[3];
    uint64_t x = args[4], y = args[5], c = args[6], z = args[7], w = args[8];
    uint64_t n = args[9], threshold = args[11];
    uint16_t blocks = (uint16_t)args[10];

    PtoTensorArg t1[2] = {words(x, n, PtoAccess_READ), words(y, n, PtoAccess_WRITE)};
    PtoTask t = {.kernel = split, .class_ = 1, .blocks = blocks, .tensors = t1, .ntensors = 2};
    int32_t st = ops->submit(ops->ctx, &t, NULL);
    if (st != 0) return st;

    uint64_t scalars[1] = {threshold};
    PtoTensorArg t2[2] = {words(y, n, PtoAccess_READ), words(c, 1, PtoAccess_WRITE)};
    PtoTask counting = {.kernel = count, .class_ = 1, .args = scalars, .nargs = 1,
                        .tensors = t2, .ntensors = 2};
    if ((st = ops->submit(ops->ctx, &counting, NULL)) != 0) return st;

    PtoTensorArg counted = words(c, 1, PtoAccess_READ);
    if ((st = ops->settle(ops->ctx, &counted)) != 0) return st;
    uint64_t k = *(volatile uint64_t *)(uintptr_t)c;
    PtoTensorArg t3[1] = {words(z, 1, PtoAccess_READ | PtoAccess_WRITE)};
    for (uint64_t i = 0; i < k; i++) {
        PtoTask b = {.kernel = bump, .class_ = 1, .tensors = t3, .ntensors = 1};
        if ((st = ops->submit(ops->ctx, &b, NULL)) != 0) return st;
    }

    PtoTensorArg t4[1] = {words(w, 6, PtoAccess_WRITE)};
    PtoTask mix = {.kernel = lanes, .class_ = 2, .blocks = 2, .per_lane = 1,
                   .aiv_kernels = {lanes + 1, lanes + 2}, .tensors = t4, .ntensors = 1};
    return ops->submit(ops->ctx, &mix, NULL);
}
