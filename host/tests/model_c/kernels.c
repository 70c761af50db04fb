/* The kernels of blocks.c: split, count, bump, and a kernel per MIX lane. */
#include "pto_aicore.h"

static int64_t *words(int64_t *args, uint32_t i) {
    return (int64_t *)(uintptr_t)pto_kernel_tensor(args, i)->base;
}

void split(int64_t *args) {
    const int64_t *x = words(args, 0);
    int64_t *y = words(args, 1);
    uint64_t n = pto_tensor_elems(pto_kernel_tensor(args, 0));
    uint64_t b = pto_kernel_block_idx(args), nb = pto_kernel_block_num(args);
    for (uint64_t i = b * n / nb; i < (b + 1) * n / nb; i++) y[i] = 3 * x[i] + 1000 * (int64_t)b;
}

void count(int64_t *args) {
    const int64_t *y = words(args, 0);
    int64_t *c = words(args, 1);
    uint64_t n = pto_tensor_elems(pto_kernel_tensor(args, 0));
    int64_t threshold = args[pto_kernel_ntensors(args)];
    int64_t k = 0;
    for (uint64_t i = 0; i < n; i++) k += y[i] >= threshold;
    c[0] = k;
}

void bump(int64_t *args) { words(args, 0)[0] += 1; }

static void lane(int64_t *args, int64_t marker) {
    uint32_t at = pto_kernel_block_idx(args) * 3 + pto_kernel_lane(args);
    words(args, 0)[at] = marker + at;
}

void cube(int64_t *args) { lane(args, 100); }
void vec_a(int64_t *args) { lane(args, 200); }
void vec_b(int64_t *args) { lane(args, 300); }
