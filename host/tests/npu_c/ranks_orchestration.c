/* The 2-rank test's orchestration SO: each rank puts n words into its peer's window and
 * waits, through deferred completion, for the peer's n words in its own.
 *
 * args: kernel ids (put, wait, sum), this rank's window, the peer's window as mapped here,
 * n, the first value this rank sends, the output word's address. A window holds the
 * counter (u32) at 0, the ready flag (u32) at 64 and n data words at 128.
 *
 * Tasks: wait (its data tile written, deferred on the counter), sum (reads the tile, so it
 * runs once wait completed, i.e. once the peer's data landed) and put (into the peer). */
#include "pto_aicpu.h"

#define COUNTER 0
#define READY 64
#define DATA 128

static PtoTensorArg words(uint64_t base, uint32_t n, PtoAccess access) {
    PtoTensorArg t = {.buffer = base, .buffer_len = 8ull * n, .base = base, .elem = 8,
                      .rank = 1, .access = access, .shape = {n, 1, 1, 1, 1}, .strides = {1}};
    return t;
}

static int32_t submit(const PtoOrchOps *ops, uint32_t kernel, const PtoTensorArg *t, size_t nt,
                      const uint64_t *args, size_t nargs) {
    PtoTask task = {.kernel = kernel, .class_ = 1, .args = args, .nargs = nargs, .tensors = t,
                    .ntensors = nt};
    return ops->submit(ops->ctx, &task, 0);
}

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs < 8 || ops->abi != PTO_AICPU_ABI) return -100;
    uint32_t k_put = (uint32_t)args[0], k_wait = (uint32_t)args[1], k_sum = (uint32_t)args[2];
    uint64_t mine = args[3], peer = args[4], first = args[6], out = args[7];
    uint32_t n = (uint32_t)args[5];
    int32_t rc;
    PtoTensorArg data = words(mine + DATA, n, PtoAccess_WRITE);
    uint64_t wait_args[2] = {mine + COUNTER, peer + READY};
    if ((rc = submit(ops, k_wait, &data, 1, wait_args, 2)) != 0) return rc;
    PtoTensorArg sum[2] = {words(mine + DATA, n, PtoAccess_READ), words(out, 1, PtoAccess_WRITE)};
    if ((rc = submit(ops, k_sum, sum, 2, 0, 0)) != 0) return rc;
    PtoTensorArg to_peer = words(peer + DATA, n, PtoAccess_WRITE);
    uint64_t put_args[3] = {peer + COUNTER, mine + READY, first};
    return submit(ops, k_put, &to_peer, 1, put_args, 3);
}
