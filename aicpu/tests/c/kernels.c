/* Kernels of the harness, as a user writes them for the chip: `void (*)(int64_t *args)`,
 * tensor addresses then scalars. Built for the host with the executor's shim. */
#include "pto_aicore.h"

/* args: out, n, first. out[i] = first + i. */
void pto_test_fill(int64_t *args) {
    int64_t *out = (int64_t *)(uintptr_t)args[0];
    for (int64_t i = 0; i < args[1]; i++) {
        out[i] = args[2] + i;
    }
}

/* args: a, b, out, n. out[i] = a[i] + b[i]. */
void pto_test_add(int64_t *args) {
    const int64_t *a = (const int64_t *)(uintptr_t)args[0];
    const int64_t *b = (const int64_t *)(uintptr_t)args[1];
    int64_t *out = (int64_t *)(uintptr_t)args[2];
    for (int64_t i = 0; i < args[3]; i++) {
        out[i] = a[i] + b[i];
    }
}

/* args: in, n, out. *out = sum of in[0..n). */
void pto_test_sum(int64_t *args) {
    const int64_t *in = (const int64_t *)(uintptr_t)args[0];
    int64_t s = 0;
    for (int64_t i = 0; i < args[1]; i++) {
        s += in[i];
    }
    *(int64_t *)(uintptr_t)args[2] = s;
}

/* args: code. Fails with `code`. */
void pto_test_fail(int64_t *args) { pto_kernel_fail(args, (uint32_t)args[0]); }

/* args: flag. Spins until *flag is non-zero (the test sets it after the run gave up on
 * this kernel), at most about 30 s. */
void pto_test_hang(int64_t *args) {
    volatile int64_t *flag = (volatile int64_t *)(uintptr_t)args[0];
    uint64_t spins = 0;
    while (*flag == 0 && !pto_host_give_up(++spins)) {
    }
}
