// The resident AICore executor: announces the core in its handshake block, waits for the
// AICPU to hand it its payload slots, then runs the kernel of every token the AICPU writes
// to DATA_MAIN_BASE and reports ACK and FIN in COND, until the AICPU sends the exit.
//
// Each token's outcome goes to its slot's result word before its FIN (COND carries a token
// and a phase only). The AICPU may write the next token to DATA_MAIN_BASE while this core
// still runs one, and the one after as soon as it saw this core's FIN: so when the register
// moved two tokens ahead, the one in between (whose slot has the other parity) runs first.
//
// The source is C as much as C++, so the host C compiler builds it for the tests (`-x c`).
#include "pto_aicore.h"

static uint32_t pto_next(uint32_t t) { return t >= PTO_TOKEN_LAST ? 1u : t + 1u; }

static void pto_run_one(PTO_GM PtoSlot *slot, uint32_t token) {
    pto_dcci_in(slot, sizeof(PtoSlot));
    pto_barrier();
    if (slot->tensors != 0) {
        pto_dcci_in((PTO_GM void *)(uintptr_t)slot->tensors,
                    (size_t)slot->ntensors * sizeof(PtoKernelTensor));
    }
    slot->fail_code = 0;
    slot->ncond = 0;
    pto_write_cond(token); // ACK
    uint64_t fn = slot->kernel_addr;
    uint32_t code;
    if (fn == 0) {
        code = PTO_FAIL_NO_KERNEL;
    } else {
        int profile = (slot->shape >> 24) & 1u;
        if (profile) {
            slot->times[0] = pto_clock();
        }
        ((PtoKernel)(uintptr_t)fn)((PTO_GM int64_t *)slot->args);
        if (profile) {
            slot->times[1] = pto_clock();
        }
        code = slot->fail_code;
    }
    uint64_t result = token;
    if (code != 0) {
        result |= (uint64_t)1u << 31 | (uint64_t)code << 32;
    }
    slot->result = result;
    pto_dcci_out(slot, sizeof(PtoSlot));
    pto_barrier();
    pto_write_cond(PTO_COND_FIN | token);
}

PTO_EXECUTOR_FN void pto_aicore_run(PTO_GM PtoHandshake *hs, uint32_t block_idx, uint32_t core_type) {
    hs->core_type = core_type;
    hs->physical_core_id = pto_core_id() & 0xFFFu;
    pto_barrier();
    hs->aicore_done = block_idx + 1u;
    pto_dcci_out(hs, sizeof(PtoHandshake));

    uint64_t spins = 0;
    for (;;) {
        pto_dcci_in(hs, sizeof(PtoHandshake));
        if (hs->aicpu_ready != 0) {
            break;
        }
        if (pto_give_up(++spins)) {
            return;
        }
    }
    pto_barrier();
    PTO_GM PtoSlot *slots = (PTO_GM PtoSlot *)(uintptr_t)hs->task;
    uint32_t last = hs->base_token;

    spins = 0;
    for (;;) {
        uint32_t v = pto_read_dmb();
        if (v == PTO_DMB_EXIT) {
            // This run's exit, told apart from an earlier run's acknowledgement in COND.
            hs->aicore_exited = 1u;
            pto_dcci_out(hs, sizeof(PtoHandshake));
            pto_barrier();
            pto_write_cond(PTO_COND_EXIT_ACK);
            return;
        }
        if (v == 0 || v == last || v > PTO_TOKEN_LAST) {
            if (pto_give_up(++spins)) {
                return;
            }
            continue;
        }
        spins = 0;
        uint32_t t = pto_next(last);
        if (t != v && pto_next(t) != v) {
            t = v; // not a step the AICPU takes: run what it names
        }
        for (;;) {
            pto_run_one(&slots[t & 1u], t);
            last = t;
            if (t == v) {
                break;
            }
            t = pto_next(t);
        }
    }
}
