/* The count kernel: counts[e] = how many of the route's tokens chose expert e (u32). */
#include "pto_aicore.h"

enum { COUNT_BAD_TENSORS = 16 };

void pto_kernel_entry(PTO_GM int64_t *args) {
    PTO_GM const PtoKernelTensor *route = pto_kernel_tensor(args, 0);
    PTO_GM const PtoKernelTensor *counts = pto_kernel_tensor(args, 1);
    if (route == 0 || counts == 0 || route->elem != 4 || counts->elem != 4) {
        pto_kernel_fail(args, COUNT_BAD_TENSORS);
        return;
    }
    PTO_GM const uint32_t *r = (PTO_GM const uint32_t *)(uintptr_t)route->base;
    PTO_GM uint32_t *c = (PTO_GM uint32_t *)(uintptr_t)counts->base;
    for (uint32_t e = 0; e < counts->shape[0]; e++) c[e] = 0;
    for (uint32_t t = 0; t < route->shape[0]; t++) {
        if (r[t] < counts->shape[0]) c[r[t]]++;
    }
}
