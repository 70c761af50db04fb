/* What an orchestration function for libpto_aicpu.so sees: the table of runtime operations
 * (device-sys/src/abi.rs `PtoOrchOps`, same layout) and the function's own shape. Tasks and
 * status codes are the core's (capi/include/pto_runtime.h). */
#ifndef PTO_AICPU_H
#define PTO_AICPU_H

#include <stdint.h>

#include "pto_runtime.h"

#define PTO_AICPU_ABI 1u

typedef struct PtoOrchOps {
    uint32_t abi; /* PTO_AICPU_ABI */
    uint32_t reserved;
    void *ctx; /* pass back to every operation */
    /* Submits `task`; its id goes to `id` (if not null). PTO_OK (0) or a PtoStatus. */
    int32_t (*submit)(void *ctx, const PtoTask *task, uint64_t *id);
    /* Opens a scope: tasks submitted until its end are reclaimed only after it ended. */
    int32_t (*scope_begin)(void *ctx);
    /* Ends the innermost open scope. */
    int32_t (*scope_end)(void *ctx);
    /* `bytes` of `ring`'s output heap (aligned to `align`, a power of two) for the next task
     * submitted to `ring`; the device address goes to `addr`. */
    int32_t (*alloc)(void *ctx, uint8_t ring, uint64_t bytes, uint64_t align, uint64_t *addr);
} PtoOrchOps;

/* An orchestration function: 0 for success, anything else fails the run. */
typedef int32_t (*PtoOrchestrate)(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs);

#endif
