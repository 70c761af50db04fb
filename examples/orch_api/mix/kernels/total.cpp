// total[0] = the sum of y and of parts (f32). Args: y, parts, total.
#include "intrinsic.h"
#include "tensor.h"

static __gm__ ChipTensor *tensor(__gm__ int64_t *args, int i) {
    return reinterpret_cast<__gm__ ChipTensor *>(args[i]);
}

static float *f32(__gm__ int64_t *args, int i) {
    return reinterpret_cast<float *>(tensor(args, i)->buffer.addr) + tensor(args, i)->start_offset;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
    float s = 0.0f;
    for (int i = 0; i < 2; i++) {
        const float *v = f32(args, i);
        for (uint64_t k = 0; k < tensor(args, i)->numel(); k++) s += v[k];
    }
    f32(args, 2)[0] = s;
}
