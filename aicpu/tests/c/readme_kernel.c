/* The kernel of the README ("What a user writes"), line for line (tests/readme.rs checks),
 * built for the host with the executor's shim: y = k x. */
#include "pto_aicore.h"

void scale(PTO_GM int64_t *args) {
    PTO_GM const PtoKernelTensor *x = pto_kernel_tensor(args, 0), *y = pto_kernel_tensor(args, 1);
    if (x == 0 || y == 0) { pto_kernel_fail(args, 1); return; }  /* the task fails with 1 */
    int64_t k = args[pto_kernel_ntensors(args)];                  /* the first scalar */
    for (uint64_t i = 0; i < pto_tensor_elems(x); i++)
        ((PTO_GM int64_t *)y->base)[i] = k * ((PTO_GM const int64_t *)x->base)[i];
}
