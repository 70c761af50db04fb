/* What the raw kernels share: their tensors through pto_kernel_tensor, always inlined, so
 * that each kernel's file compiles to one function at offset 0 of its `.text`. */
#include "pto_aicore.h"

#define PTO_INLINE static inline __attribute__((always_inline))

/* Tensor `i` of the task if it has 8-byte elements and the access `want`; else the kernel
 * fails with code 90 + i and this is 0. */
PTO_INLINE const PtoKernelTensor *tensor(int64_t *args, uint32_t i, PtoAccess want) {
    const PtoKernelTensor *t = pto_kernel_tensor(args, i);
    if (t == 0 || t->elem != 8 || t->access != want || (uint64_t)args[i] != t->base) {
        pto_kernel_fail(args, 90 + i);
        return 0;
    }
    return t;
}

/* Element `k` (row-major over the shape) of `t`. */
PTO_INLINE int64_t *element(const PtoKernelTensor *t, uint64_t k) {
    uint64_t off = 0;
    for (int d = (int)t->rank - 1; d >= 0; d--) {
        off += (k % t->shape[d]) * t->strides[d];
        k /= t->shape[d];
    }
    return (int64_t *)(uintptr_t)t->base + off;
}
