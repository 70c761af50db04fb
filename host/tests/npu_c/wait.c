/* A kernel as raw code: tensors data (this rank's window, written by the peer); scalars this
 * rank's counter, the peer's ready flag. Tells the peer it waits (ready = 1), then makes the
 * task deferred on `*counter >= 1` (a 32-bit counter): its consumers start only once the
 * peer's data landed. */
#include "tensor.h"

void pto_kernel_entry(int64_t *args) {
    const PtoKernelTensor *data = tensor(args, 0, PtoAccess_WRITE);
    if (data == 0) return;
    uint32_t nt = pto_kernel_ntensors(args);
    uint64_t counter = (uint64_t)args[nt];
    uint32_t *peer_ready = (uint32_t *)(uintptr_t)args[nt + 1];
    pto_kernel_defer(args, 1, counter, 1);
    __atomic_store_n(peer_ready, 1u, __ATOMIC_RELEASE);
}
