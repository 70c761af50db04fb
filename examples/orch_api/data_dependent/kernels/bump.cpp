// acc[0] += by (int64). Args: acc; scalar by.
#include "intrinsic.h"
#include "tensor.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
    __gm__ ChipTensor *t = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
    reinterpret_cast<int64_t *>(t->buffer.addr)[t->start_offset] += args[1];
}
