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

#include <stddef.h>
#include <stdint.h>

#include "pto_runtime.h"

#define PTO_AICPU_ABI 4u

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
    /* Waits (bounded by the submit timeout; the run goes on) until no task submitted so far
     * still works on the tile `arg` names (for a read, .access = 0: the tasks writing it;
     * for a write, those reading it too). Then the orchestration may read its bytes (a value
     * a kernel computed, to steer what it submits next) or write them. PTO_ERR_TILE_BUSY
     * names the timeout, PTO_ERR_TILE_CANCELLED a writer that was cancelled. */
    int32_t (*settle)(void *ctx, const PtoTensorArg *arg);
    /* Says the orchestration wrote the tile `arg` names (after settle), before it submits
     * the tasks that read it: on the chip its bytes are written back from the AICPU's cache. */
    int32_t (*wrote)(void *ctx, const PtoTensorArg *arg);
} PtoOrchOps;

/* An orchestration function: 0 for success, anything else fails the run (the report's
 * value). */
typedef int32_t (*PtoOrchestrate)(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs);

/* The capacities an orchestration asks its run to hold (device-sys/src/abi/orch_config.rs
 * `PtoOrchConfig`, same layout). The launcher reads them from the SO's file before anything
 * runs, so they are data, not a function: declare them once, at file scope, with
 *
 *     PTO_ORCHESTRATION_CONFIG(.max_deps = 32, .max_tensors = 12);
 *
 * A field left out (0) takes the launcher's default (pto-launch run: 16 dependencies, 8
 * tensor arguments, 16 scalar arguments, 1024 task slots per ring, a 1 MiB heap per ring);
 * a flag given on pto-launch's command line overrides the declaration. A value past the
 * runtime's limits is refused before the run, naming the field. */
#define PTO_ORCH_CONFIG_ABI 1u

typedef struct PtoOrchConfig {
    uint32_t abi;         /* PTO_ORCH_CONFIG_ABI */
    uint32_t max_deps;    /* dependencies per task, named and found through tensors (1 to 64) */
    uint32_t max_tensors; /* tensor arguments per task (0 to 32) */
    uint32_t max_args;    /* scalar arguments per task (0 to 32; with max_tensors at most 48) */
    uint32_t task_window; /* task slots per ring: a power of two, 4 to 2^20 */
    uint32_t reserved;    /* zero */
    uint64_t heap_bytes;  /* each ring's output heap, bytes (64 to 2^34) */
} PtoOrchConfig;

#ifdef __cplusplus
#define PTO_STATIC_ASSERT static_assert
#define PTO_ORCH_CONFIG_LINKAGE extern "C"
#define PTO_ORCH_CONFIG_EXTERN extern "C"
#else
#define PTO_STATIC_ASSERT _Static_assert
#define PTO_ORCH_CONFIG_LINKAGE
#define PTO_ORCH_CONFIG_EXTERN extern
#endif

PTO_STATIC_ASSERT(sizeof(PtoOrchConfig) == 32, "PtoOrchConfig is 32 bytes");
PTO_STATIC_ASSERT(offsetof(PtoOrchConfig, max_deps) == 4, "max_deps at 4");
PTO_STATIC_ASSERT(offsetof(PtoOrchConfig, max_tensors) == 8, "max_tensors at 8");
PTO_STATIC_ASSERT(offsetof(PtoOrchConfig, max_args) == 12, "max_args at 12");
PTO_STATIC_ASSERT(offsetof(PtoOrchConfig, task_window) == 16, "task_window at 16");
PTO_STATIC_ASSERT(offsetof(PtoOrchConfig, heap_bytes) == 24, "heap_bytes at 24");

/* Defines the SO's `pto_orchestration_config` (exported, and kept however the SO is linked)
 * from designated initialisers of PtoOrchConfig's fields, in their order (C++20 wants it);
 * the fields left out are 0, which C++'s -Wmissing-field-initializers is told. The
 * redeclaration at the end takes the `;` after the macro. */
#define PTO_ORCHESTRATION_CONFIG(...)                                                          \
    _Pragma("GCC diagnostic push")                                                             \
    _Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"")                        \
    PTO_ORCH_CONFIG_LINKAGE __attribute__((used, visibility("default")))                      \
    const PtoOrchConfig pto_orchestration_config = {.abi = PTO_ORCH_CONFIG_ABI, __VA_ARGS__};  \
    _Pragma("GCC diagnostic pop")                                                              \
    PTO_ORCH_CONFIG_EXTERN const PtoOrchConfig pto_orchestration_config

#endif
