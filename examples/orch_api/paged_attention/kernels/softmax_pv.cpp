// Block h: out[h] = sum over t < len of softmax(scores[h][0..len))[t] * value[t][h], token t
// found as in qk.cpp. Args: scores (heads, tokens), value_cache (pages, page_size, heads,
// dim), block_table (1, max_pages) int32, out (1, heads, dim); scalar len.
#include <math.h>

#include "intrinsic.h"
#include "tensor.h"

template <typename T>
static T *data(__gm__ int64_t *args, int i) {
    __gm__ ChipTensor *t = reinterpret_cast<__gm__ ChipTensor *>(args[i]);
    return reinterpret_cast<T *>(t->buffer.addr) + t->start_offset;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
    __gm__ ChipTensor *vc = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
    uint32_t page_size = vc->shapes[1], heads = vc->shapes[2], dim = vc->shapes[3];
    uint32_t tokens = reinterpret_cast<__gm__ ChipTensor *>(args[0])->shapes[1];
    const float *scores = data<float>(args, 0), *value = data<float>(args, 1);
    const int32_t *table = data<int32_t>(args, 2);
    float *out = data<float>(args, 3);
    int64_t len = args[4];
    uint32_t h = uint32_t(get_block_idx(args));
    const float *s = scores + h * tokens;
    float top = s[0];
    for (int64_t t = 1; t < len; t++) top = s[t] > top ? s[t] : top;
    float sum = 0.0f;
    for (int64_t t = 0; t < len; t++) sum += expf(s[t] - top);
    for (uint32_t d = 0; d < dim; d++) out[h * dim + d] = 0.0f;
    for (int64_t t = 0; t < len; t++) {
        uint64_t page = uint64_t(table[t / page_size]), row = uint64_t(t % page_size);
        const float *v = value + ((page * page_size + row) * heads + h) * dim;
        float p = expf(s[t] - top) / sum;
        for (uint32_t d = 0; d < dim; d++) out[h * dim + d] += p * v[d];
    }
}
