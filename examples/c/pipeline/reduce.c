/* The reduce kernel: tensor 1 (one f32) = the sum of tensor 0's values, added in double. */
#include "pto_aicore.h"

enum { REDUCE_BAD_TENSORS = 16 };

void pto_kernel_entry(PTO_GM int64_t *args) {
    PTO_GM const PtoKernelTensor *y = pto_kernel_tensor(args, 0);
    PTO_GM const PtoKernelTensor *s = pto_kernel_tensor(args, 1);
    if (y == 0 || s == 0 || y->elem != 4 || s->elem != 4) {
        pto_kernel_fail(args, REDUCE_BAD_TENSORS);
        return;
    }
    PTO_GM const float *ys = (PTO_GM const float *)(uintptr_t)y->base;
    double sum = 0;
    for (uint64_t i = 0; i < pto_tensor_elems(y); i++) sum += ys[i];
    *(PTO_GM float *)(uintptr_t)s->base = (float)sum;
}
