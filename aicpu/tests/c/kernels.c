/* Kernels of the harness, as a user writes them for the chip: `void (*)(int64_t *args)`,
 * the task's tensor addresses then its scalars, and the tensors' shapes and strides through
 * `pto_kernel_tensor`. Built for the host with the executor's shim. */
#include "pto_aicore.h"

/* Fails the kernel (code 90 + i) unless tensor `i` exists, has 8-byte elements and the
 * access `want`. */
static PTO_GM const PtoKernelTensor *tensor(int64_t *args, uint32_t i, PtoAccess want) {
    PTO_GM const PtoKernelTensor *t = pto_kernel_tensor(args, i);
    if (t == 0 || t->elem != 8 || t->access != want ||
        (uint64_t)args[i] != t->base) {
        pto_kernel_fail(args, 90 + i);
        return 0;
    }
    return t;
}

/* Element `k` (row-major over the shape) of `t`. */
static PTO_GM int64_t *element(PTO_GM const PtoKernelTensor *t, uint64_t k) {
    uint64_t off = 0;
    for (int d = (int)t->rank - 1; d >= 0; d--) {
        off += (k % t->shape[d]) * t->strides[d];
        k /= t->shape[d];
    }
    return (PTO_GM int64_t *)(uintptr_t)t->base + off;
}

/* tensors: out; scalars: first. out[i] = first + i. */
void pto_test_fill(int64_t *args) {
    PTO_GM const PtoKernelTensor *out = tensor(args, 0, PtoAccess_WRITE);
    if (out == 0) return;
    int64_t first = args[pto_kernel_ntensors(args)];
    for (uint64_t i = 0; i < pto_tensor_elems(out); i++) {
        *element(out, i) = first + (int64_t)i;
    }
}

/* tensors: a, b (read), out. out[i] = a[i] + b[i]. */
void pto_test_add(int64_t *args) {
    PTO_GM const PtoKernelTensor *a = tensor(args, 0, PtoAccess_READ);
    PTO_GM const PtoKernelTensor *b = tensor(args, 1, PtoAccess_READ);
    PTO_GM const PtoKernelTensor *out = tensor(args, 2, PtoAccess_WRITE);
    if (a == 0 || b == 0 || out == 0) return;
    for (uint64_t i = 0; i < pto_tensor_elems(out); i++) {
        *element(out, i) = *element(a, i) + *element(b, i);
    }
}

/* tensors: in (read), out (one word). *out = the sum of in, whatever its shape. */
void pto_test_sum(int64_t *args) {
    PTO_GM const PtoKernelTensor *in = tensor(args, 0, PtoAccess_READ);
    PTO_GM const PtoKernelTensor *out = tensor(args, 1, PtoAccess_WRITE);
    if (in == 0 || out == 0) return;
    int64_t s = 0;
    for (uint64_t i = 0; i < pto_tensor_elems(in); i++) {
        s += *element(in, i);
    }
    *element(out, 0) = s;
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

/* A transfer's start: tensors: out (which the transfer fills); scalars: engine, post,
 * flag. The task completes once engine `engine` completed post `post` (a deferred
 * condition on its watermark); the kernel writes nothing to `out` itself, and sets *flag
 * once it ran (the test's engine then lands the data). */
void pto_test_land(int64_t *args) {
    if (tensor(args, 0, PtoAccess_WRITE) == 0) return;
    uint32_t nt = pto_kernel_ntensors(args);
    pto_kernel_defer(args, 3, (uint64_t)args[nt], (uint64_t)args[nt + 1]);
    __atomic_store_n((int64_t *)(uintptr_t)args[nt + 2], 1, __ATOMIC_RELEASE);
}

/* Registers a condition of a kind no version knows (9): the AICPU must fail the task with a
 * bad-condition error, never wait on it or take it for a condition that holds. */
void pto_test_bad_condition(int64_t *args) { pto_kernel_defer(args, 9, 0, 1); }
