/* The square kernel: tensor 1 = tensor 0 squared, value by value (contiguous f32). */
#include "pto_aicore.h"

enum { SQUARE_BAD_TENSORS = 16 };

void pto_kernel_entry(PTO_GM int64_t *args) {
    PTO_GM const PtoKernelTensor *x = pto_kernel_tensor(args, 0);
    PTO_GM const PtoKernelTensor *y = pto_kernel_tensor(args, 1);
    if (x == 0 || y == 0 || x->elem != 4 || y->elem != 4 || x->shape[0] != y->shape[0]) {
        pto_kernel_fail(args, SQUARE_BAD_TENSORS);
        return;
    }
    PTO_GM const float *xs = (PTO_GM const float *)(uintptr_t)x->base;
    PTO_GM float *ys = (PTO_GM float *)(uintptr_t)y->base;
    for (uint32_t i = 0; i < y->shape[0]; i++) ys[i] = xs[i] * xs[i];
}
