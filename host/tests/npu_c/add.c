/* A kernel as raw code: args a, b, out, n; out[i] = a[i] + b[i]. */
#include "pto_aicore.h"

void kernel_entry(int64_t *args) {
    const int64_t *a = (const int64_t *)(uintptr_t)args[0];
    const int64_t *b = (const int64_t *)(uintptr_t)args[1];
    int64_t *out = (int64_t *)(uintptr_t)args[2];
    for (int64_t i = 0; i < args[3]; i++) out[i] = a[i] + b[i];
}
