/* A kernel as raw code: tensors out (the peer's window, written); scalars the peer's
 * counter, this rank's ready flag, the first value. Once the peer's consumer is waiting
 * (it sets `ready` here), out[i] = first + i, then the peer's counter is bumped (release):
 * the data lands before the word the peer waits on. Gives up with code 7 after 2^34 spins. */
#include "tensor.h"

void pto_kernel_entry(int64_t *args) {
    const PtoKernelTensor *out = tensor(args, 0, PtoAccess_WRITE);
    if (out == 0) return;
    uint32_t nt = pto_kernel_ntensors(args);
    uint32_t *counter = (uint32_t *)(uintptr_t)args[nt];
    uint32_t *ready = (uint32_t *)(uintptr_t)args[nt + 1];
    int64_t first = args[nt + 2];
    for (uint64_t spins = 0; __atomic_load_n(ready, __ATOMIC_ACQUIRE) == 0; spins++) {
        if (spins == (1ull << 34)) {
            pto_kernel_fail(args, 7);
            return;
        }
    }
    for (uint64_t i = 0; i < pto_tensor_elems(out); i++) *element(out, i) = first + (int64_t)i;
    __atomic_fetch_add(counter, 1u, __ATOMIC_RELEASE);
}
