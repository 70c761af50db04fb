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
} PtoOrchOps;

/* An orchestration function: 0 for success, anything else fails the run. */
typedef int32_t (*PtoOrchestrate)(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs);

#endif
