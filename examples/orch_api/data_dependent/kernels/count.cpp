// c[0] = how many x[i] >= threshold (int64), or -1 if x is not said to be INT64. Args: x, c;
// scalar threshold.
#include "intrinsic.h"
#include "tensor.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
    __gm__ ChipTensor *xt = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
    __gm__ ChipTensor *ct = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
    const int64_t *x = reinterpret_cast<const int64_t *>(xt->buffer.addr) + xt->start_offset;
    int64_t n = 0;
    for (uint64_t i = 0; i < xt->numel(); i++) n += x[i] >= args[2];
    if (xt->dtype != DataType::INT64) n = -1;
    reinterpret_cast<int64_t *>(ct->buffer.addr)[ct->start_offset] = n;
}
