// Block h: scores[h][t] = scale * q[h] . key[t][h] for the sequence's tokens t < len, where
// token t is row t % page_size of page block_table[t / page_size]. Args: q (1, heads, dim),
// key_cache (pages, page_size, heads, dim), block_table (1, max_pages) int32, scores
// (heads, tokens); scalars scale (f32 bits), len. Views are row-major here.
#include "intrinsic.h"
#include "tensor.h"

template <typename T>
static T *data(__gm__ int64_t *args, int i) {
    __gm__ ChipTensor *t = reinterpret_cast<__gm__ ChipTensor *>(args[i]);
    return reinterpret_cast<T *>(t->buffer.addr) + t->start_offset;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
    __gm__ ChipTensor *kc = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
    uint32_t page_size = kc->shapes[1], heads = kc->shapes[2], dim = kc->shapes[3];
    uint32_t tokens = reinterpret_cast<__gm__ ChipTensor *>(args[3])->shapes[1];
    const float *q = data<float>(args, 0), *key = data<float>(args, 1);
    const int32_t *table = data<int32_t>(args, 2);
    float *scores = data<float>(args, 3);
    float scale = from_u64<float>(uint64_t(args[4]));
    int64_t len = args[5];
    uint32_t h = uint32_t(get_block_idx(args));
    for (int64_t t = 0; t < len; t++) {
        uint64_t page = uint64_t(table[t / page_size]), row = uint64_t(t % page_size);
        const float *k = key + ((page * page_size + row) * heads + h) * dim;
        float s = 0.0f;
        for (uint32_t d = 0; d < dim; d++) s += q[h * dim + d] * k[d];
        scores[h * tokens + t] = scale * s;
    }
}
