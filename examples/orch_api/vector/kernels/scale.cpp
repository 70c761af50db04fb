// b = k a, elementwise over contiguous f32 views of any rank (args: a, b, the f32 scalar k).
#include "intrinsic.h"
#include "tensor.h"

static float *at(__gm__ int64_t *args, int i) {
    __gm__ ChipTensor *t = reinterpret_cast<__gm__ ChipTensor *>(args[i]);
    return reinterpret_cast<float *>(t->buffer.addr) + t->start_offset;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
    uint64_t n = reinterpret_cast<__gm__ ChipTensor *>(args[0])->numel();
    float k = from_u64<float>(uint64_t(args[2]));
    const float *a = at(args, 0);
    float *b = at(args, 1);
    for (uint64_t i = 0; i < n; i++) b[i] = k * a[i];
}
