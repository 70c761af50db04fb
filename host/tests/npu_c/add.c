/* A kernel as raw code: tensors a, b (read), out. out[i] = a[i] + b[i]. */
#include "tensor.h"

void pto_kernel_entry(int64_t *args) {
    const PtoKernelTensor *a = tensor(args, 0, 0), *b = tensor(args, 1, 0);
    const PtoKernelTensor *out = tensor(args, 2, 1);
    if (a == 0 || b == 0 || out == 0) return;
    for (uint64_t i = 0; i < pto_tensor_elems(out); i++)
        *element(out, i) = *element(a, i) + *element(b, i);
}
