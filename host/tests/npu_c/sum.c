/* A kernel as raw code: tensors in (read, any shape), out (one word). *out = sum of in. */
#include "tensor.h"

void pto_kernel_entry(int64_t *args) {
    const PtoKernelTensor *in = tensor(args, 0, PtoAccess_READ);
    const PtoKernelTensor *out = tensor(args, 1, PtoAccess_WRITE);
    if (in == 0 || out == 0) return;
    int64_t s = 0;
    for (uint64_t i = 0; i < pto_tensor_elems(in); i++) s += *element(in, i);
    *element(out, 0) = s;
}
