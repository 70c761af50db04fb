/* The harness's orchestration SO: `pto_orchestrate`, the name libpto_aicpu.so resolves.
 * Every task names its tiles as tensor arguments: the runtime finds the dependencies from
 * them (no task names another by id) and the kernels read them (tests/c/kernels.c).
 *
 * args: kernel ids (fill, add, sum), data base, n, blocks, then `extra`: 0 nothing, 1 a
 * failing task (kernel id in args[7], code 42), 2 a hanging task (kernel id in args[7],
 * flag address in args[8]), 3 return 7 after submitting the DAG, 4 a deferred producer
 * (kernel id in args[7]: engine 0's post 1 lands its output, a flag at args[8] says it
 * ran) and its consumer, 5 the same but the post never lands (args[7], args[8] as in 4),
 * 6 a task whose kernel (args[7]) registers a condition of an unknown kind, 7 after the DAG
 * nothing more, its submissions kept open until an operation is refused (the deadline), 8
 * a task whose kernel (args[7], host/tests/npu_c/wait.c) defers it on the 32-bit word after
 * the sums, which nobody writes (the next word is its flag, then its n-word output), and a
 * consumer writing the sum of that output to the word after it.
 *
 * Block b is a scope: a_b and b_b (n words each, at data + 2 n b words) are filled, c_b
 * (n words of the output heap, summed as an 8 x n/8 tile) is their sum, and the sum of c_b
 * lands in sums[b] (data + 2 n blocks + b words). The deferred producer's buffer d is the
 * n words after the sums, and its consumer writes the sum of d to the word after it. */
#include "pto_aicpu.h"

/* A rank-1 tile of n 8-byte words at `base`, in the buffer [buf, buf + len). */
static PtoTensorArg words(uint64_t buf, uint64_t len, uint64_t base, uint32_t n, PtoAccess access) {
    PtoTensorArg t = {.buffer = buf, .buffer_len = len, .base = base, .elem = 8, .rank = 1,
                      .access = access, .shape = {n, 1, 1, 1, 1}, .strides = {1}};
    return t;
}

/* Submits one task; its status (0: accepted). */
static int32_t submit(const PtoOrchOps *ops, uint32_t kernel, uint8_t class_, const PtoTensorArg *t,
                      size_t nt, const uint64_t *args, size_t nargs) {
    PtoTask task = {.kernel = kernel, .class_ = class_, .args = args, .nargs = nargs,
                    .tensors = t, .ntensors = nt};
    return ops->submit(ops->ctx, &task, 0);
}

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs < 7 || ops->abi != PTO_AICPU_ABI) {
        return -100;
    }
    uint32_t k_fill = (uint32_t)args[0], k_add = (uint32_t)args[1], k_sum = (uint32_t)args[2];
    uint64_t base = args[3], n = args[4], blocks = args[5], extra = args[6];
    uint64_t sums = base + 8 * (2 * n * blocks), sums_len = 8 * blocks;
    for (uint64_t b = 0; b < blocks; b++) {
        uint64_t a = base + 8 * (2 * n * b), bb = a + 8 * n, c = 0;
        if (ops->scope_begin(ops->ctx) != 0) return -7;
        PtoTensorArg ta = words(a, 8 * n, a, (uint32_t)n, PtoAccess_WRITE);
        PtoTensorArg tb = words(bb, 8 * n, bb, (uint32_t)n, PtoAccess_WRITE);
        uint64_t first_a = b + 1, first_b = 2 * b;
        if (submit(ops, k_fill, 1, &ta, 1, &first_a, 1) != 0) return -1;
        if (submit(ops, k_fill, 1, &tb, 1, &first_b, 1) != 0) return -2;
        /* The heap buffer belongs to the next task of ring 0: the add that writes it. */
        if (ops->alloc(ops->ctx, 0, 8 * n, 64, &c) != 0) return -8;
        PtoTensorArg add[3] = {words(a, 8 * n, a, (uint32_t)n, PtoAccess_READ),
                               words(bb, 8 * n, bb, (uint32_t)n, PtoAccess_READ),
                               words(c, 8 * n, c, (uint32_t)n, PtoAccess_WRITE)};
        if (submit(ops, k_add, 0, add, 3, 0, 0) != 0) return -3;
        /* c_b read as a block of 8 rows of n/8 words: the kernel walks shape and strides. */
        PtoTensorArg sum[2] = {
            {.buffer = c, .buffer_len = 8 * n, .base = c, .elem = 8, .rank = 2,
             .access = PtoAccess_READ, .shape = {8, (uint32_t)(n / 8), 1, 1, 1},
             .strides = {n / 8, 1}},
            words(sums, sums_len, sums + 8 * b, 1, PtoAccess_WRITE)};
        if (submit(ops, k_sum, 1, sum, 2, 0, 0) != 0) return -4;
        if (ops->scope_end(ops->ctx) != 0) return -9;
    }
    if (extra == 1 && nargs >= 8) {
        uint64_t code = 42;
        if (submit(ops, (uint32_t)args[7], 1, 0, 0, &code, 1) != 0) return -5;
    }
    if (extra == 2 && nargs >= 9) {
        if (submit(ops, (uint32_t)args[7], 0, 0, 0, &args[8], 1) != 0) return -6;
    }
    if (extra == 6 && nargs >= 8) {
        if (submit(ops, (uint32_t)args[7], 0, 0, 0, 0, 0) != 0) return -15;
    }
    if ((extra == 4 || extra == 5) && nargs >= 9) {
        uint64_t d = sums + sums_len, out = d + 8 * n;
        PtoTensorArg td = words(d, 8 * n, d, (uint32_t)n, PtoAccess_WRITE);
        uint64_t land[3] = {0 /* engine */, 1 /* post */, args[8]};
        if (submit(ops, (uint32_t)args[7], 1, &td, 1, land, 3) != 0) return -10;
        PtoTensorArg use[2] = {words(d, 8 * n, d, (uint32_t)n, PtoAccess_READ),
                               words(out, 8, out, 1, PtoAccess_WRITE)};
        if (submit(ops, k_sum, 0, use, 2, 0, 0) != 0) return -11;
    }
    if (extra == 8 && nargs >= 8) {
        uint64_t word = sums + sums_len, flag = word + 8, d = flag + 8, out = d + 8 * n;
        PtoTensorArg td = words(d, 8 * n, d, (uint32_t)n, PtoAccess_WRITE);
        uint64_t wait[2] = {word, flag};
        if (submit(ops, (uint32_t)args[7], 1, &td, 1, wait, 2) != 0) return -16;
        PtoTensorArg use[2] = {words(d, 8 * n, d, (uint32_t)n, PtoAccess_READ),
                               words(out, 8, out, 1, PtoAccess_WRITE)};
        if (submit(ops, k_sum, 0, use, 2, 0, 0) != 0) return -17;
    }
    /* The status codes say what was refused: a tile outside its buffer (or, once a kernel
     * failed the run, that the run failed: that comes first, and the run reports why). */
    PtoTensorArg outside = words(base, 8, base + 8, 1, PtoAccess_READ);
    PtoTask bad = {.kernel = k_sum, .class_ = 1, .tensors = &outside, .ntensors = 1};
    int32_t st = ops->submit(ops->ctx, &bad, 0);
    if (st == PTO_ERR_RUN || st == PTO_ERR_RUN_FAILING) return 0;
    if (st != PTO_ERR_BAD_TENSOR) return -12;
    if (ops->scope_end(ops->ctx) != PTO_ERR_NO_OPEN_SCOPE) return -13;
    const char *why = ops->status_str(PTO_ERR_BAD_TENSOR);
    if (why == 0 || why[0] == 0) return -14;
    if (extra == 7) {
        /* Starve the schedulers: submit nothing more, only ask the runtime until it says the
         * run is over (the device watchdog). */
        while (ops->scope_begin(ops->ctx) == PTO_OK && ops->scope_end(ops->ctx) == PTO_OK) {
        }
        return 0;
    }
    return extra == 3 ? 7 : 0;
}
