/* A two-stage pipeline with a fan-in: stage 1 squares x into y, one task per chunk; stage 2
 * is one task that reads all of y and writes the sum of its values to s. The reduce task
 * names y whole, so the runtime makes it wait for every square task (each wrote a tile of
 * y): no task ids are needed.
 *
 * Arguments: the square and reduce kernels' ids, the addresses of x, y and s, and n. */
#include "pto_aicpu.h"

/* This example's own error codes: positive, apart from the runtime's statuses. */
enum { PIPELINE_BAD_ARGS = 1, PIPELINE_BAD_LENGTH = 2 };

#define CHUNK 512u
/* The reduce task depends on every square task, one per chunk: at most 64 (the runtime's
 * limit of dependencies per task), so n is at most 64 chunks. */
#define MAX_CHUNKS 64u

/* The capacities this program needs, read by pto-launch from this file before anything runs
 * (a flag still overrides each): 64 dependencies for the reduce task, and a task window that
 * holds every task of the largest run at once. */
PTO_ORCHESTRATION_CONFIG(.max_deps = MAX_CHUNKS, .task_window = 128);

/* `count` f32 values of the buffer at `buf` (`len` values long) from value `first` on. */
static PtoTensorArg values(uint64_t buf, uint64_t len, uint64_t first, uint32_t count,
                           PtoAccess access) {
    PtoTensorArg t = {
        .buffer = buf,
        .buffer_len = 4 * len,
        .base = buf + 4 * first,
        .elem = 4,
        .rank = 1,
        .access = access,
        .shape = {count, 1, 1, 1},
        .strides = {1, 0, 0, 0},
    };
    return t;
}

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs != 6) return PIPELINE_BAD_ARGS;
    uint32_t square = (uint32_t)args[0], reduce = (uint32_t)args[1];
    uint64_t x = args[2], y = args[3], s = args[4], n = args[5];
    if (n == 0 || n % CHUNK != 0 || n / CHUNK > MAX_CHUNKS) return PIPELINE_BAD_LENGTH;
    /* Stage 1: y[c] = x[c]^2, chunk by chunk. */
    for (uint64_t first = 0; first < n; first += CHUNK) {
        PtoTensorArg tiles[2] = {values(x, n, first, CHUNK, PtoAccess_READ),
                                 values(y, n, first, CHUNK, PtoAccess_WRITE)};
        PtoTask task = {.kernel = square, .class_ = 1, .tensors = tiles, .ntensors = 2};
        int32_t rc = ops->submit(ops->ctx, &task, NULL);
        if (rc != PTO_OK) return rc;
    }
    /* Stage 2: s = sum(y), after every task that wrote a tile of y (the fan-in). */
    PtoTensorArg tiles[2] = {values(y, n, 0, (uint32_t)n, PtoAccess_READ),
                             values(s, 1, 0, 1, PtoAccess_WRITE)};
    PtoTask task = {.kernel = reduce, .class_ = 1, .tensors = tiles, .ntensors = 2};
    return ops->submit(ops->ctx, &task, NULL);
}
