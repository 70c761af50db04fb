/* A kernel as raw code: args in, n, out; *out = the sum of in[0..n). */
#include "pto_aicore.h"

void kernel_entry(int64_t *args) {
    const int64_t *in = (const int64_t *)(uintptr_t)args[0];
    int64_t s = 0;
    for (int64_t i = 0; i < args[1]; i++) s += in[i];
    *(int64_t *)(uintptr_t)args[2] = s;
}
