// AIC lane of block b of nb: y rows [b rows/nb, (b+1) rows/nb) = the same rows of x times w
// (row-major f32). Args: x (rows, cols), w (cols, cols), y (rows, cols), parts.
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
    const float *x = f32(args, 0), *w = f32(args, 1);
    float *y = f32(args, 2);
    uint32_t b = uint32_t(get_block_idx(args)), nb = uint32_t(get_block_num(args));
    for (uint32_t i = b * rows / nb; i < (b + 1) * rows / nb; i++) {
        for (uint32_t j = 0; j < cols; j++) {
            float s = 0.0f;
            for (uint32_t k = 0; k < cols; k++) s += x[i * cols + k] * w[k * cols + j];
            y[i * cols + j] = s;
        }
    }
}
