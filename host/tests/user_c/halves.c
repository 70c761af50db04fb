/* Kernels over half-precision values: tensor 1 = 1.5 x tensor 0, each tile's bytes taken as
 * 2-byte values. scale_f16 computes in _Float16; scale_bf16 computes in float and rounds to
 * bf16 (to nearest, ties to even), as a kernel storing bf16 does. */
#include <string.h>

#include "pto_aicore.h"

static uint64_t halves(const PtoKernelTensor *t) { return pto_tensor_elems(t) * t->elem / 2; }

void scale_f16(int64_t *args) {
    const PtoKernelTensor *x = pto_kernel_tensor(args, 0), *y = pto_kernel_tensor(args, 1);
    const _Float16 *xs = (const _Float16 *)(uintptr_t)x->base;
    _Float16 *ys = (_Float16 *)(uintptr_t)y->base;
    for (uint64_t i = 0; i < halves(x); i++) ys[i] = xs[i] * (_Float16)1.5f;
}

static float from_bf16(uint16_t b) {
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t to_bf16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

void scale_bf16(int64_t *args) {
    const PtoKernelTensor *x = pto_kernel_tensor(args, 0), *y = pto_kernel_tensor(args, 1);
    const uint16_t *xs = (const uint16_t *)(uintptr_t)x->base;
    uint16_t *ys = (uint16_t *)(uintptr_t)y->base;
    for (uint64_t i = 0; i < halves(x); i++) ys[i] = to_bf16(from_bf16(xs[i]) * 1.5f);
}
