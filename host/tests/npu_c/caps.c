/* A program whose tasks need more than the default capacities, with no kernel: DUMMY tasks
 * only, so what it checks does not depend on the kernels' format.
 *
 * args: [0] tasks the joining task depends on (each named by id), [1] scalar arguments of
 * a last task, [2] a buffer's address, [3] a value the orchestration stores in the buffer's
 * first word (so a negative --arg can be seen arriving as its two's complement). A refused
 * submit's status is returned as is. */
#include "pto_aicpu.h"

#define MAX 64

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs < 4 || ops->abi != PTO_AICPU_ABI) return -100;
    uint64_t ndeps = args[0], nscalars = args[1];
    if (ndeps > MAX || nscalars > MAX) return -101;
    uint64_t ids[MAX], scalars[MAX] = {0};
    for (uint64_t i = 0; i < ndeps; i++) {
        PtoTask t = {.class_ = 3 /* DUMMY */};
        int32_t rc = ops->submit(ops->ctx, &t, &ids[i]);
        if (rc != PTO_OK) return rc;
    }
    PtoTask join = {.class_ = 3, .deps = ids, .ndeps = ndeps};
    int32_t rc = ops->submit(ops->ctx, &join, 0);
    if (rc != PTO_OK) return rc;
    PtoTask wide = {.class_ = 3, .args = scalars, .nargs = nscalars};
    rc = ops->submit(ops->ctx, &wide, 0);
    if (rc != PTO_OK) return rc;
    *(volatile int64_t *)(uintptr_t)args[2] = (int64_t)args[3];
    return PTO_OK;
}
