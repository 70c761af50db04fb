/* What an orchestration function for libpto_aicpu.so sees: the table of runtime operations
 * (device-sys/src/abi/mod.rs `PtoOrchOps`, same layout; the harness compares the two) and
 * the function's own shape. Tasks, tensor arguments and status codes are the core's
 * (capi/include/pto_runtime.h, generated from the same Rust types).
 *
 * A task names the tiles it reads and writes as tensor arguments (PtoTensorArg: a tile of
 * a buffer and its access): the runtime orders it after every earlier live task whose
 * tile of the same buffer conflicts, and its kernel receives the tensors: their addresses
 * as its first argument words, then the scalar arguments, and their shapes and strides
 * through pto_kernel_tensor (device-sys/aicore/pto_aicore.h). */
#ifndef PTO_AICPU_H
#define PTO_AICPU_H

#include <stdint.h>

#include "pto_runtime.h"

#define PTO_AICPU_ABI 2u

typedef struct PtoOrchOps {
    uint32_t abi; /* PTO_AICPU_ABI */
    uint32_t reserved;
    void *ctx; /* pass back to every operation */
    /* Submits `task`; its id goes to `id` (if not null). PTO_OK (0), or the PtoStatus of
     * the reason it was refused (one per reason; nothing of the task was kept). */
    int32_t (*submit)(void *ctx, const PtoTask *task, uint64_t *id);
    /* Opens a scope: tasks submitted until its end are reclaimed only after it ended. */
    int32_t (*scope_begin)(void *ctx);
    /* Ends the innermost open scope (PTO_ERR_NO_OPEN_SCOPE if none is). */
    int32_t (*scope_end)(void *ctx);
    /* `bytes` of `ring`'s output heap (aligned to `align`, a power of two) for the next task
     * submitted to `ring`; the device address goes to `addr`. */
    int32_t (*alloc)(void *ctx, uint8_t ring, uint64_t bytes, uint64_t align, uint64_t *addr);
    /* A static sentence saying what a status code means (never null). */
    const char *(*status_str)(int32_t code);
} PtoOrchOps;

/* An orchestration function: 0 for success, anything else fails the run (the report's
 * value). */
typedef int32_t (*PtoOrchestrate)(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs);

#endif
