/* The combine kernel: y[t] = out[route[t]][t], each token's result from its expert's output
 * (out is EXPERTS rows of T values). */
#include "pto_aicore.h"

enum { COMBINE_BAD_TENSORS = 16 };

void pto_kernel_entry(PTO_GM int64_t *args) {
    PTO_GM const PtoKernelTensor *route = pto_kernel_tensor(args, 0);
    PTO_GM const PtoKernelTensor *out = pto_kernel_tensor(args, 1);
    PTO_GM const PtoKernelTensor *y = pto_kernel_tensor(args, 2);
    if (route == 0 || out == 0 || y == 0 || y->elem != 4 || route->shape[0] != y->shape[0]) {
        pto_kernel_fail(args, COMBINE_BAD_TENSORS);
        return;
    }
    uint32_t n = y->shape[0];
    PTO_GM const uint32_t *r = (PTO_GM const uint32_t *)(uintptr_t)route->base;
    PTO_GM const float *o = (PTO_GM const float *)(uintptr_t)out->base;
    PTO_GM float *ys = (PTO_GM float *)(uintptr_t)y->base;
    for (uint32_t t = 0; t < n; t++) {
        if ((uint64_t)r[t] * n >= out->shape[0]) {
            pto_kernel_fail(args, COMBINE_BAD_TENSORS + 1);
            return;
        }
        ys[t] = o[(uint64_t)r[t] * n + t];
    }
}
