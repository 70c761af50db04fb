/* The orchestration function the launcher calls (pto_orchestrate, pto_aicpu.h), defined
 * weak so any one source of the SO that includes pto_orchestration_api.h provides it. It
 * reads the orchestration's arguments from the launcher's words, checks their count against
 * aicpu_orchestration_config (when the SO defines it), and calls the entry inside a scope.
 *
 * The words (pto-launch run --arg, in order):
 *   ntensors, then per tensor: address, dtype (DataType's number), ndims, ndims shapes,
 *   then the scalars (every word left).
 * A tensor is its whole buffer, row-major; nothing checks it against the buffer's bytes.
 *
 * The entry is `aicpu_orchestration_entry` unless PTO_ORCHESTRATION_ENTRY names another
 * (e.g. -DPTO_ORCHESTRATION_ENTRY=build_paged_attention on the compiler's command line). */
#ifndef PTO_API_ENTRY_H
#define PTO_API_ENTRY_H

#include "pto_api_graph.h"
#include "pto_api_scope.h"
#include "pto_api_task_args.h"

#ifndef PTO_ORCHESTRATION_ENTRY
#define PTO_ORCHESTRATION_ENTRY aicpu_orchestration_entry
#endif

/* The orchestration's aicpu_orchestration_config is this adapter's to call (for the argument
 * count), not the launcher's: the launcher reads capacities as data before anything runs
 * (PTO_ORCHESTRATION_CONFIG in pto_aicpu.h, which an orchestration may add) and refuses an SO
 * exporting the function under that name. So the name is taken here. */
#define aicpu_orchestration_config pto_api_orchestration_config

struct PTO2OrchestrationConfig {
    int expected_arg_count; /* tensors and scalars the entry takes */
};

extern "C" void PTO_ORCHESTRATION_ENTRY(const ChipTaskArgs &args);
extern "C" __attribute__((weak)) PTO2OrchestrationConfig
aicpu_orchestration_config(const ChipTaskArgs &args);

/* `w[0..n)` as the orchestration's arguments in `a`; a sentence saying what is wrong, or
 * null. */
inline const char *pto_api_read_args(const uint64_t *w, uint32_t n, ChipTaskArgs *a) {
    if (n == 0) return "no argument words: the first says how many tensors follow";
    uint64_t nt = w[0];
    if (nt > MAX_TENSOR_ARGS) return "more tensors than MAX_TENSOR_ARGS";
    uint32_t at = 1;
    for (uint64_t i = 0; i < nt; i++) {
        if (at + 3 > n) return "a tensor's address, dtype or ndims is missing";
        uint64_t addr = w[at], dtype = w[at + 1], ndims = w[at + 2];
        at += 3;
        if (ndims == 0 || ndims > MAX_TENSOR_DIMS) return "a tensor's ndims is not 1 to 5";
        if (dtype >= uint64_t(DataType::DATA_TYPE_NUM)) return "a tensor's dtype is unknown";
        if (at + ndims > n) return "a tensor's shapes are missing";
        uint32_t shapes[MAX_TENSOR_DIMS];
        for (uint64_t d = 0; d < ndims; d++) {
            if (w[at + d] == 0 || w[at + d] > UINT32_MAX) return "a tensor's shape is 0 or too big";
            shapes[d] = uint32_t(w[at + d]);
        }
        at += uint32_t(ndims);
        a->tensors[i].t = make_tensor_external(reinterpret_cast<void *>(uintptr_t(addr)), shapes,
                                               uint32_t(ndims), DataType(dtype));
    }
    a->ntensors = int32_t(nt);
    if (n - at > MAX_TENSOR_ARGS + MAX_SCALAR_ARGS) return "too many scalar words";
    for (; at < n; at++) a->scalars[a->nscalars++] = w[at];
    return nullptr;
}

extern "C" __attribute__((weak, visibility("default"))) int32_t
pto_orchestrate(const PtoOrchOps *ops, const uint64_t *words, uint32_t nwords) {
    pto_api_state = PtoApiState{ops, 0, nullptr};
    if (ops->abi != PTO_AICPU_ABI) {
        pto_api_log("FATAL", __FUNCTION__, "ops table ABI %u, this header's %u", ops->abi,
                    PTO_AICPU_ABI);
        return PTO2_ERROR_INVALID_ARGS;
    }
    ChipTaskArgs args;
    if (const char *why = pto_api_read_args(words, nwords, &args)) {
        pto_api_log("FATAL", __FUNCTION__, "orchestration arguments: %s", why);
        return PTO2_ERROR_INVALID_ARGS;
    }
    if (aicpu_orchestration_config) {
        int want = aicpu_orchestration_config(args).expected_arg_count;
        int got = args.ntensors + args.nscalars;
        if (want != got) {
            pto_api_log("FATAL", __FUNCTION__,
                        "%d arguments (%d tensors, %d scalars); aicpu_orchestration_config "
                        "expects %d",
                        got, args.ntensors, args.nscalars, want);
            return PTO2_ERROR_INVALID_ARGS;
        }
    }
    {
        PTO2ScopeGuard outer;
        PTO_ORCHESTRATION_ENTRY(args);
    }
    pto_api_graphs_close();
    return pto_api_state.fatal;
}

#endif
