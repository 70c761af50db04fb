/* The add kernel: tensor 2 = tensor 0 + tensor 1, f32 values of one contiguous shape. */
#include "pto_aicore.h"

/* This kernel's own failure codes (pto_kernel_fail): 16 and up, apart from the simulator's. */
enum { ADD_BAD_TENSORS = 16 };

/* Whether `t` holds contiguous f32 values (one dimension, stride 1). */
static int contiguous_f32(PTO_GM const PtoKernelTensor *t) {
    return t != 0 && t->elem == 4 && t->rank == 1 && t->strides[0] == 1;
}

void pto_kernel_entry(PTO_GM int64_t *args) {
    PTO_GM const PtoKernelTensor *x = pto_kernel_tensor(args, 0);
    PTO_GM const PtoKernelTensor *y = pto_kernel_tensor(args, 1);
    PTO_GM const PtoKernelTensor *z = pto_kernel_tensor(args, 2);
    if (!contiguous_f32(x) || !contiguous_f32(y) || !contiguous_f32(z) ||
        x->shape[0] != z->shape[0] || y->shape[0] != z->shape[0]) {
        pto_kernel_fail(args, ADD_BAD_TENSORS);
        return;
    }
    PTO_GM const float *xs = (PTO_GM const float *)(uintptr_t)x->base;
    PTO_GM const float *ys = (PTO_GM const float *)(uintptr_t)y->base;
    PTO_GM float *zs = (PTO_GM float *)(uintptr_t)z->base;
    for (uint32_t i = 0; i < z->shape[0]; i++) zs[i] = xs[i] + ys[i];
}
