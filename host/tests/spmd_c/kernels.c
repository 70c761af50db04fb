/* The kernels of orchestration.c. Each adds rather than stores, so a block that ran twice
 * shows in the result, and each folds in its block and the block count it was told. */
#include "pto_aicore.h"

static int64_t *words(int64_t *args, uint32_t i) {
    return (int64_t *)(uintptr_t)pto_kernel_tensor(args, i)->base;
}

/* Block b of nb: y[i] += 3 x[i] + 1000 (b + 1) + nb for i in [b n / nb, (b + 1) n / nb). */
void chunk(int64_t *args) {
    const int64_t *x = words(args, 0);
    int64_t *y = words(args, 1);
    uint64_t n = pto_tensor_elems(pto_kernel_tensor(args, 1));
    uint64_t b = pto_kernel_block_idx(args), nb = pto_kernel_block_num(args);
    for (uint64_t i = b * n / nb; i < (b + 1) * n / nb; i++)
        y[i] += 3 * x[i] + 1000 * (int64_t)(b + 1) + (int64_t)nb;
}

/* s[0] = the sum of y. A task of one block is told block 0 of 1, whatever its core's slot
 * held for a block of the task before; anything else fails it. */
void sum(int64_t *args) {
    if (pto_kernel_block_idx(args) != 0 || pto_kernel_block_num(args) != 1) {
        pto_kernel_fail(args, 2);
        return;
    }
    const int64_t *y = words(args, 0);
    uint64_t n = pto_tensor_elems(pto_kernel_tensor(args, 0));
    int64_t t = 0;
    for (uint64_t i = 0; i < n; i++) t += y[i];
    words(args, 1)[0] = t;
}

/* Lane l of block b of nb: m[3 b + l] += 100 nb + 10 b + l + 1. */
void mark(int64_t *args) {
    uint32_t b = pto_kernel_block_idx(args), l = pto_kernel_lane(args);
    words(args, 0)[3 * b + l] += 100 * (int64_t)pto_kernel_block_num(args) + 10 * b + l + 1;
}
