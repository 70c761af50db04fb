/* The expert kernel of expert e (its scalar argument): for each token that chose it,
 * out[t] = (e + 1) x[t]; for the others, out[t] = -1 (so an output this kernel never wrote
 * shows as zeros). */
#include "pto_aicore.h"

enum { EXPERT_BAD_TENSORS = 16 };

void pto_kernel_entry(PTO_GM int64_t *args) {
    PTO_GM const PtoKernelTensor *route = pto_kernel_tensor(args, 0);
    PTO_GM const PtoKernelTensor *x = pto_kernel_tensor(args, 1);
    PTO_GM const PtoKernelTensor *out = pto_kernel_tensor(args, 3);
    if (route == 0 || x == 0 || out == 0 || x->elem != 4 || out->shape[0] != x->shape[0]) {
        pto_kernel_fail(args, EXPERT_BAD_TENSORS);
        return;
    }
    uint32_t e = (uint32_t)args[4];
    PTO_GM const uint32_t *r = (PTO_GM const uint32_t *)(uintptr_t)route->base;
    PTO_GM const float *xs = (PTO_GM const float *)(uintptr_t)x->base;
    PTO_GM float *o = (PTO_GM float *)(uintptr_t)out->base;
    for (uint32_t t = 0; t < out->shape[0]; t++) o[t] = r[t] == e ? (float)(e + 1) * xs[t] : -1.0f;
}
