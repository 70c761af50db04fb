/* The orchestration SO of the README ("What a user writes"), line for line
 * (tests/readme.rs checks): one AIV task scales the host's buffer x (args[0], args[1]
 * words) into a buffer of ring 0's output heap, with kernel args[2]. The harness runs it
 * and checks the heap. */
#include <stddef.h>

#include "pto_aicpu.h"

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs < 3) return -100;
    uint64_t x = args[0], n = args[1], y = 0;        /* the host's buffer, its length */
    uint32_t kernel = (uint32_t)args[2];
    if (ops->scope_begin(ops->ctx) != PTO_OK) return -1;
    /* y: n words of ring 0's output heap, for the next task of ring 0 */
    if (ops->alloc(ops->ctx, 0, 8 * n, 64, &y) != PTO_OK) return -2;
    PtoTensorArg t[2] = {
        {x, 8 * n, x, 8, 1, 0 /* read */, 0, {n, 1, 1, 1}, {1, 0, 0, 0}},
        {y, 8 * n, y, 8, 1, 1 /* written */, 0, {n, 1, 1, 1}, {1, 0, 0, 0}},
    };
    uint64_t scale = 3;
    PtoTask task = {.kernel = kernel, .class_ = 1 /* AIV */, .args = &scale, .nargs = 1,
                    .tensors = t, .ntensors = 2};
    int32_t rc = ops->submit(ops->ctx, &task, NULL);
    if (rc != PTO_OK) return rc;                     /* ops->status_str(rc) says why */
    return ops->scope_end(ops->ctx);
}

/* "Running on an NPU": the capacities the SO declares. */
PTO_ORCHESTRATION_CONFIG(.max_deps = 32, .max_tensors = 12, .task_window = 4096);
