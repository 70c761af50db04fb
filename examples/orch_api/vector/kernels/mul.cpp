// c = a * b, elementwise over f32 views (args: a, b, c).
#include "intrinsic.h"
#include "tensor.h"

static float *at(__gm__ int64_t *args, int i) {
    __gm__ ChipTensor *t = reinterpret_cast<__gm__ ChipTensor *>(args[i]);
    return reinterpret_cast<float *>(t->buffer.addr) + t->start_offset;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
    uint64_t n = reinterpret_cast<__gm__ ChipTensor *>(args[2])->numel();
    const float *a = at(args, 0), *b = at(args, 1);
    float *c = at(args, 2);
    for (uint64_t i = 0; i < n; i++) c[i] = a[i] * b[i];
}
