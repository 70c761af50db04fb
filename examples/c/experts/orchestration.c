/* Mixture-of-experts routing with predicated tasks: each of T tokens chose one of EXPERTS
 * experts (`route`). A `count` task counts the tokens of each expert; then one `expert`
 * task per expert, each carrying a predicate "this expert's count > 0", read when the task
 * is about to be dispatched: an expert no token chose is skipped (no core runs it, its
 * output stays untouched) and the tasks after it run all the same. A `combine` task then
 * gathers each token's result from its expert's output.
 *
 * Arguments (pto-launch's --arg, in order): the kernel ids of count, expert and combine;
 * the addresses of route (T u32), x (T f32), counts (EXPERTS u32), out (EXPERTS x T f32)
 * and y (T f32); and T. */
#include "pto_aicpu.h"

enum { EXPERTS_BAD_ARGS = 1 };

#define EXPERTS 8

/* `n` elements of `elem` bytes of the buffer at `buf` (`len` bytes long) from byte `at` on,
 * used as `access`. */
static PtoTensorArg tile(uint64_t buf, uint64_t len, uint64_t at, uint32_t n, uint32_t elem,
                         PtoAccess access) {
    PtoTensorArg t = {
        .buffer = buf,
        .buffer_len = len,
        .base = buf + at,
        .elem = elem,
        .rank = 1,
        .access = access,
        .shape = {n, 1, 1, 1},
        .strides = {1, 0, 0, 0},
    };
    return t;
}

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs != 9 || args[8] == 0 || args[8] > 1u << 20) return EXPERTS_BAD_ARGS;
    uint32_t count = (uint32_t)args[0], expert_kernel = (uint32_t)args[1];
    uint32_t combine = (uint32_t)args[2];
    uint64_t route = args[3], x = args[4], counts = args[5], out = args[6], y = args[7];
    uint32_t n = (uint32_t)args[8];
    uint64_t tokens = 4ull * n, slab = 4ull * n;

    PtoTensorArg counting[2] = {
        tile(route, tokens, 0, n, 4, PtoAccess_READ),
        tile(counts, 4 * EXPERTS, 0, EXPERTS, 4, PtoAccess_WRITE),
    };
    PtoTask c = {.kernel = count, .class_ = 1, .tensors = counting, .ntensors = 2};
    int32_t rc = ops->submit(ops->ctx, &c, NULL);
    if (rc != PTO_OK) return rc;

    for (uint64_t expert = 0; expert < EXPERTS; expert++) {
        /* Reading its count makes the count task this task's producer: the predicate reads
         * the value that task wrote. */
        PtoTensorArg tiles[4] = {
            tile(route, tokens, 0, n, 4, PtoAccess_READ),
            tile(x, tokens, 0, n, 4, PtoAccess_READ),
            tile(counts, 4 * EXPERTS, 4 * expert, 1, 4, PtoAccess_READ),
            tile(out, slab * EXPERTS, slab * expert, n, 4, PtoAccess_WRITE),
        };
        PtoPredicate chosen = {.addr = counts + 4 * expert, .width = 4, .op = PTO_CMP_GT,
                               .target = 0};
        PtoTask t = {.kernel = expert_kernel, .class_ = 1, .tensors = tiles, .ntensors = 4,
                     .args = &expert, .nargs = 1, .predicate = &chosen};
        rc = ops->submit(ops->ctx, &t, NULL);
        if (rc != PTO_OK) return rc;
    }

    PtoTensorArg gather[3] = {
        tile(route, tokens, 0, n, 4, PtoAccess_READ),
        tile(out, slab * EXPERTS, 0, n * EXPERTS, 4, PtoAccess_READ),
        tile(y, tokens, 0, n, 4, PtoAccess_WRITE),
    };
    PtoTask g = {.kernel = combine, .class_ = 1, .tensors = gather, .ntensors = 3};
    return ops->submit(ops->ctx, &g, NULL);
}
