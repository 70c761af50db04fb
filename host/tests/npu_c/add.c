/* A kernel as raw code: tensors a, b (read), out. out[i] = a[i] + b[i]. */
#include "tensor.h"

void pto_kernel_entry(int64_t *args) {
    const PtoKernelTensor *a = tensor(args, 0, PtoAccess_READ);
    const PtoKernelTensor *b = tensor(args, 1, PtoAccess_READ);
    const PtoKernelTensor *out = tensor(args, 2, PtoAccess_WRITE);
    if (a == 0 || b == 0 || out == 0) return;
    for (uint64_t i = 0; i < pto_tensor_elems(out); i++)
        *element(out, i) = *element(a, i) + *element(b, i);
}
