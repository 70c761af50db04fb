/* A kernel as raw code: args flag; spins while *flag is 0 (the test sets it once the host
 * gave up on the run), at most 2^36 spins. */
#include "pto_aicore.h"

void pto_kernel_entry(int64_t *args) {
    volatile int64_t *flag = (volatile int64_t *)(uintptr_t)args[0];
    for (uint64_t spins = 0; *flag == 0 && spins < (1ull << 36); spins++) {
    }
}
