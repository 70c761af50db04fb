/* A kernel as raw code: args out, n, first; out[i] = first + i. */
#include "pto_aicore.h"

void kernel_entry(int64_t *args) {
    int64_t *out = (int64_t *)(uintptr_t)args[0];
    for (int64_t i = 0; i < args[1]; i++) out[i] = args[2] + i;
}
