// c (+)= a b over 3-D f32 views of one matrix each (a: 1 x r x q, b: 1 x q x p, c:
// 1 x r x p, any strides); the scalar says whether to add to c (1) or overwrite it (0).
#include "intrinsic.h"
#include "tensor.h"

static float &el(__gm__ ChipTensor *t, uint32_t i, uint32_t j) {
    float *base = reinterpret_cast<float *>(t->buffer.addr) + t->start_offset;
    return base[uint64_t(i) * t->strides[1] + uint64_t(j) * t->strides[2]];
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
    __gm__ ChipTensor *a = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
    __gm__ ChipTensor *b = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
    __gm__ ChipTensor *c = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
    bool accumulate = args[3] != 0;
    uint32_t r = a->shapes[1], q = a->shapes[2], p = b->shapes[2];
    for (uint32_t i = 0; i < r; i++) {
        for (uint32_t j = 0; j < p; j++) {
            float s = accumulate ? el(c, i, j) : 0.0f;
            for (uint32_t x = 0; x < q; x++) s += el(a, i, x) * el(b, x, j);
            el(c, i, j) = s;
        }
    }
}
