// out = {acc[0], c[0]} (int64). Args: acc, c, out.
#include "intrinsic.h"
#include "tensor.h"

static int64_t *word(__gm__ int64_t *args, int i) {
    __gm__ ChipTensor *t = reinterpret_cast<__gm__ ChipTensor *>(args[i]);
    return reinterpret_cast<int64_t *>(t->buffer.addr) + t->start_offset;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
    word(args, 2)[0] = word(args, 0)[0];
    word(args, 2)[1] = word(args, 1)[0];
}
