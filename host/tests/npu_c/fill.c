/* A kernel as raw code: tensors out; scalars first. out[i] = first + i. */
#include "tensor.h"

void pto_kernel_entry(int64_t *args) {
    const PtoKernelTensor *out = tensor(args, 0, PtoAccess_WRITE);
    if (out == 0) return;
    int64_t first = args[pto_kernel_ntensors(args)];
    for (uint64_t i = 0; i < pto_tensor_elems(out); i++) *element(out, i) = first + (int64_t)i;
}
