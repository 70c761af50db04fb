/* y[i] = weight(x[i]) * TABLE[x[i] % 16]: a helper defined before the entry (so at -O0 the
 * entry is not the first code of the file), a `static const` table (in .rodata, reached
 * through a relocation), and a call into libc (memcpy). */
#include <string.h>

#include "pto_aicore.h"

static const int64_t TABLE[16] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};

int64_t weight(int64_t v) { return 2 * v + 1; }

void pto_kernel_entry(int64_t *args) {
    const PtoKernelTensor *x = pto_kernel_tensor(args, 0), *y = pto_kernel_tensor(args, 1);
    if (x == 0 || y == 0) {
        pto_kernel_fail(args, 100);
        return;
    }
    uint64_t n = pto_tensor_elems(x);
    for (uint64_t i = 0; i < n; i++) {
        int64_t v;
        memcpy(&v, (const int64_t *)(uintptr_t)x->base + i, sizeof v);
        int64_t out = weight(v) * TABLE[(uint64_t)v % 16];
        memcpy((int64_t *)(uintptr_t)y->base + i, &out, sizeof out);
    }
}
