/* SPMD blocks from C, through pto-launch run. Arguments: kernels chunk, sum, mark
 * (args[0..3)); buffers x (n int64, read), y (n int64, read and written), s (1 word),
 * m (6 words) (args[3..7)); n and the vector task's blocks (args[7..9)).
 *   1. `chunk` over x and y as `blocks` AIV blocks (0 means 1): each block adds to its own
 *      contiguous share of y.
 *   2. `sum` y -> s, one block, after every block of `chunk` (it reads what they wrote).
 *   3. `mark` on m as a MIX task of 2 blocks, the same kernel on the three lanes of each.
 * A refused submit's status is returned as it came; the program's own errors are positive. */
#include <stddef.h>

#include "pto_aicpu.h"

static PtoTensorArg words(uint64_t base, uint64_t n, PtoAccess access) {
    PtoTensorArg t = {.buffer = base, .buffer_len = 8 * n, .base = base, .elem = 8, .rank = 1,
                      .access = access, .shape = {(uint32_t)n, 1, 1, 1}, .strides = {1, 0, 0, 0}};
    return t;
}

#define IN PtoAccess_READ
#define OUT PtoAccess_WRITE
#define INOUT (PtoAccess_READ | PtoAccess_WRITE)
enum { CLASS_AIV = 1, CLASS_MIX = 2 };

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs != 9) return 1;
    uint32_t chunk = (uint32_t)args[0], sum = (uint32_t)args[1], mark = (uint32_t)args[2];
    uint64_t x = args[3], y = args[4], s = args[5], m = args[6], n = args[7];
    if (args[8] > UINT16_MAX) return 2;
    uint16_t blocks = (uint16_t)args[8];

    PtoTensorArg t1[2] = {words(x, n, IN), words(y, n, INOUT)};
    PtoTask spread = {.kernel = chunk, .class_ = CLASS_AIV, .blocks = blocks, .tensors = t1,
                      .ntensors = 2};
    int32_t st = ops->submit(ops->ctx, &spread, NULL);
    if (st != 0) return st;

    PtoTensorArg t2[2] = {words(y, n, IN), words(s, 1, OUT)};
    PtoTask total = {.kernel = sum, .class_ = CLASS_AIV, .tensors = t2, .ntensors = 2};
    if ((st = ops->submit(ops->ctx, &total, NULL)) != 0) return st;

    PtoTensorArg t3[1] = {words(m, 6, INOUT)};
    PtoTask marks = {.kernel = mark, .class_ = CLASS_MIX, .blocks = 2, .tensors = t3,
                     .ntensors = 1};
    return ops->submit(ops->ctx, &marks, NULL);
}
