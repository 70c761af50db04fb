/* A program that takes an output buffer of args[0] bytes from ring args[1]'s heap for a
 * DUMMY task of that ring: how much of the heap one ring gets. A refusal's status is
 * returned as is. */
#include "pto_aicpu.h"

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs < 2 || ops->abi != PTO_AICPU_ABI) return -100;
    uint64_t addr = 0;
    int32_t rc = ops->alloc(ops->ctx, (uint8_t)args[1], args[0], 1, &addr);
    if (rc != PTO_OK) return rc;
    PtoTask t = {.class_ = 3 /* DUMMY */, .ring = (uint8_t)args[1]};
    return ops->submit(ops->ctx, &t, 0);
}
