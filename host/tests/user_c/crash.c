/* Kernels that crash, chosen by their entry symbol: a write through a bad pointer, an
 * integer division by zero, a recursion that overflows the stack. */
#include "pto_aicore.h"

void segfault(int64_t *args) {
    volatile int64_t *bad = (volatile int64_t *)(uintptr_t)16;
    *bad = args[0];
}

void divide_by_zero(int64_t *args) {
    volatile int64_t zero = 0;
    const PtoKernelTensor *y = pto_kernel_tensor(args, 1);
    *(volatile int64_t *)(uintptr_t)y->base = args[0] / zero;
}

int64_t deeper(volatile int64_t depth) {
    volatile char frame[4096];
    frame[0] = (char)depth;
    return deeper(depth + 1) + frame[0];
}

void overflow(int64_t *args) {
    const PtoKernelTensor *y = pto_kernel_tensor(args, 1);
    *(volatile int64_t *)(uintptr_t)y->base = deeper(args[0]);
}
