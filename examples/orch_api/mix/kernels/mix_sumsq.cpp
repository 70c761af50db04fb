// AIV1 lane of block b of nb: parts[2 b + sub_block] = the sum of squares of x over rows
// [b rows/nb, (b+1) rows/nb), right half of the columns. Args: x, w, y, parts (f32).
#include "intrinsic.h"
#include "tensor.h"

static __gm__ ChipTensor *tensor(__gm__ int64_t *args, int i) {
    return reinterpret_cast<__gm__ ChipTensor *>(args[i]);
}

static float *f32(__gm__ int64_t *args, int i) {
    return reinterpret_cast<float *>(tensor(args, i)->buffer.addr) + tensor(args, i)->start_offset;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
    uint32_t rows = tensor(args, 0)->shapes[0], cols = tensor(args, 0)->shapes[1];
    const float *x = f32(args, 0);
    uint32_t b = uint32_t(get_block_idx(args)), nb = uint32_t(get_block_num(args));
    float s = 0.0f;
    for (uint32_t i = b * rows / nb; i < (b + 1) * rows / nb; i++) {
        for (uint32_t j = cols / 2; j < cols; j++) s += x[i * cols + j] * x[i * cols + j];
    }
    f32(args, 3)[2 * b + uint32_t(get_sub_block_id(args))] = s;
}
