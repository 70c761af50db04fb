/* The kernels of orchestration.c: `mark` stores 1 in its one-word tile, `count` sums the
 * marks into its output word. */
#include "pto_aicore.h"

static int64_t *words(int64_t *args, uint32_t i) {
    return (int64_t *)(uintptr_t)pto_kernel_tensor(args, i)->base;
}

void mark(int64_t *args) { words(args, 0)[0] = 1; }

void count(int64_t *args) {
    const int64_t *marks = words(args, 0);
    uint64_t n = pto_tensor_elems(pto_kernel_tensor(args, 0));
    int64_t t = 0;
    for (uint64_t i = 0; i < n; i++) t += marks[i];
    words(args, 1)[0] = t;
}
