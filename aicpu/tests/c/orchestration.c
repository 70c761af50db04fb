/* The harness's orchestration SO: `pto_orchestrate`, the name libpto_aicpu.so resolves,
 * submits a DAG of `blocks` vector additions and a reduction.
 *
 * args: kernel ids (fill, add, sum), buffers base, n, blocks, then `extra`: 0 nothing,
 * 1 a failing task (kernel id in args[7], code 42), 2 a hanging task (kernel id in
 * args[7], flag address in args[8]), 3 return 7 after submitting the DAG.
 * Block b is a scope: a_b and b_b (n words each, at base + 3 n b words) are filled, c_b
 * (n words of the output heap) is their sum, and the sum of c_b lands at
 * base + 3 n blocks + b. */
#include "pto_aicpu.h"

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs < 7 || ops->abi != PTO_AICPU_ABI) {
        return -100;
    }
    uint32_t k_fill = (uint32_t)args[0], k_add = (uint32_t)args[1], k_sum = (uint32_t)args[2];
    uint64_t base = args[3], n = args[4], blocks = args[5], extra = args[6];
    for (uint64_t b = 0; b < blocks; b++) {
        uint64_t a = base + 8 * (3 * n * b), bb = a + 8 * n, c = 0;
        uint64_t sum = base + 8 * (3 * n * blocks + b);
        uint64_t ids[2], add_id;
        if (ops->scope_begin(ops->ctx) != 0) return -7;
        uint64_t fa[3] = {a, n, b + 1}, fb[3] = {bb, n, 2 * b};
        PtoTask t = {k_fill, 1, 0, fa, 3, 0, 0};
        if (ops->submit(ops->ctx, &t, &ids[0]) != 0) return -1;
        t.args = fb;
        if (ops->submit(ops->ctx, &t, &ids[1]) != 0) return -2;
        /* The heap buffer belongs to the next task of ring 0: the add that writes it. */
        if (ops->alloc(ops->ctx, 0, 8 * n, 64, &c) != 0) return -8;
        uint64_t ad[4] = {a, bb, c, n}, sm[3] = {c, n, sum};
        PtoTask add = {k_add, 0, 0, ad, 4, ids, 2};
        if (ops->submit(ops->ctx, &add, &add_id) != 0) return -3;
        PtoTask s = {k_sum, 1, 0, sm, 3, &add_id, 1};
        if (ops->submit(ops->ctx, &s, 0) != 0) return -4;
        if (ops->scope_end(ops->ctx) != 0) return -9;
    }
    if (extra == 1 && nargs >= 8) {
        uint64_t code = 42;
        PtoTask f = {(uint32_t)args[7], 1, 0, &code, 1, 0, 0};
        if (ops->submit(ops->ctx, &f, 0) != 0) return -5;
    }
    if (extra == 2 && nargs >= 9) {
        PtoTask h = {(uint32_t)args[7], 0, 0, &args[8], 1, 0, 0};
        if (ops->submit(ops->ctx, &h, 0) != 0) return -6;
    }
    return extra == 3 ? 7 : 0;
}
