/* z = x + y for n f32 values, one add task per chunk of CHUNK values. Each task names the
 * tiles it reads and writes, and nothing else: tasks of different chunks share no byte, so
 * the runtime lets them all run at once.
 *
 * Arguments (pto-launch's --arg, in order): the add kernel's id, the addresses of x, y and
 * z, and n. */
#include "pto_aicpu.h"

/* This example's own error codes. They are positive, so none can be mistaken for a runtime
 * status: PTO_OK is 0 and every PTO_ERR_* is negative. */
enum { VECTOR_ADD_BAD_ARGS = 1, VECTOR_ADD_BAD_LENGTH = 2 };

#define CHUNK 1024u

/* `count` f32 values of the buffer at `buf` (`n` values long) from value `first` on, used
 * as `access` (PtoAccess_READ, PtoAccess_WRITE). */
static PtoTensorArg chunk(uint64_t buf, uint64_t n, uint64_t first, uint32_t count,
                          PtoAccess access) {
    PtoTensorArg t = {
        .buffer = buf,
        .buffer_len = 4 * n,
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
    if (nargs != 5) return VECTOR_ADD_BAD_ARGS;
    uint32_t add = (uint32_t)args[0];
    uint64_t x = args[1], y = args[2], z = args[3], n = args[4];
    if (n == 0 || n % CHUNK != 0) return VECTOR_ADD_BAD_LENGTH;
    for (uint64_t first = 0; first < n; first += CHUNK) {
        PtoTensorArg tiles[3] = {
            chunk(x, n, first, CHUNK, PtoAccess_READ),
            chunk(y, n, first, CHUNK, PtoAccess_READ),
            chunk(z, n, first, CHUNK, PtoAccess_WRITE),
        };
        PtoTask task = {.kernel = add, .class_ = 1 /* AIV */, .tensors = tiles, .ntensors = 3};
        int32_t rc = ops->submit(ops->ctx, &task, NULL);
        if (rc != PTO_OK) return rc; /* ops->status_str(rc) says why */
    }
    return PTO_OK;
}
