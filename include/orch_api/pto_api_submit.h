/* Submitting a task: its lanes' kernels as one of the runtime's classes, its
 * TensorCreateInfo outputs allocated from ring 0's output heap (and filled when they have an
 * initial value), its tensors as tiles, its blocks and sync start. */
#ifndef PTO_API_SUBMIT_H
#define PTO_API_SUBMIT_H

#include <string.h>

#include "pto_api_task_args.h"
#include "pto_api_tile.h"

/* Recording hooks (pto_api_graph.h): an output made while a graph function is counted or
 * recorded, and a task added to the recording instead of submitted. */
inline bool pto_api_graph_create(PtoApiRecording *r, uint64_t bytes, bool initial,
                                 PTOBufferHandle *out);
inline void pto_api_graph_task(PtoApiRecording *r, const PtoTask &t, const uint8_t *from);

enum { PTO_API_AIC = 0, PTO_API_AIV = 1, PTO_API_MIX = 2, PTO_API_DUMMY = 3 };

/* `mk` as the task's class and kernels in `t`; false (the run fatal) for a set of lanes the
 * runtime has no class for. */
inline bool pto_api_lanes(const MixedKernels &mk, PtoTask *t, const char *func) {
    bool c = mk.aic_kernel_id >= 0, v0 = mk.aiv0_kernel_id >= 0, v1 = mk.aiv1_kernel_id >= 0;
    if (c && !v0 && !v1) {
        t->class_ = PTO_API_AIC, t->kernel = uint32_t(mk.aic_kernel_id);
    } else if (!c && v0 != v1) {
        t->class_ = PTO_API_AIV;
        t->kernel = uint32_t(v0 ? mk.aiv0_kernel_id : mk.aiv1_kernel_id);
    } else if (c && v0 && v1) {
        t->class_ = PTO_API_MIX, t->kernel = uint32_t(mk.aic_kernel_id), t->per_lane = 1;
        t->aiv_kernels[0] = uint32_t(mk.aiv0_kernel_id);
        t->aiv_kernels[1] = uint32_t(mk.aiv1_kernel_id);
    } else {
        pto_api_fail(PTO2_ERROR_INVALID_ARGS, func,
                     "kernels AIC %d, AIV0 %d, AIV1 %d: this runtime runs an AIC alone, an AIV "
                     "alone, or all three lanes of a cluster (MIX); give every lane a kernel, "
                     "or none (rt_submit_dummy_task)",
                     mk.aic_kernel_id, mk.aiv0_kernel_id, mk.aiv1_kernel_id);
        return false;
    }
    return true;
}

/* An output of `ci` allocated for the next task, as a tensor. */
inline bool pto_api_create(const TensorCreateInfo &ci, ChipTensor *out, const char *func) {
    const PtoOrchOps *ops = pto_api_state.ops;
    ChipTensor t{};
    if (ci.ndims == 0 || ci.ndims > MAX_TENSOR_DIMS || ci.buffer_size_bytes() == 0) {
        pto_api_fail(PTO2_ERROR_INVALID_ARGS, func,
                     "a TensorCreateInfo of %u dimensions and %llu bytes", ci.ndims,
                     (unsigned long long)ci.buffer_size_bytes());
        return false;
    }
    t.ndims = ci.ndims;
    t.dtype = ci.dtype;
    t.set_row_major(ci.shapes);
    t.buffer.size = ci.buffer_size_bytes();
    if (PtoApiRecording *r = pto_api_state.recording) {
        /* The graph's own buffer, fresh for each instance. */
        if (!pto_api_graph_create(r, t.buffer.size, ci.has_initial_value, &t.buffer)) {
            return false;
        }
        *out = t;
        return true;
    }
    if (!pto_api_ok(ops->alloc(ops->ctx, 0, t.buffer.size, 64, &t.buffer.addr), func,
                    "allocating an output")) {
        return false;
    }
    if (ci.has_initial_value) {
        uint64_t elem = get_element_size(ci.dtype);
        uint8_t *p = reinterpret_cast<uint8_t *>(uintptr_t(t.buffer.addr));
        for (uint64_t at = 0; at < t.buffer.size; at += elem) {
            memcpy(p + at, &ci.initial_value, elem);
        }
        PtoTensorArg whole;
        if (!pto_api_tile(t, PtoAccess_WRITE, &whole, func)) return false;
        if (!pto_api_ok(ops->wrote(ops->ctx, &whole), func, "publishing an initial value")) {
            return false;
        }
    }
    *out = t;
    return true;
}

/* The runtime's predicate for `p` (its element's address and width, the operator, the
 * target, compared signed), in `out`; false (the run failed, saying why) for an element
 * outside its tensor or an unknown operator. */
inline bool pto_api_predicate(const CoreTaskPredicate &p, PtoPredicate *out, const char *func) {
    static const uint8_t ops[] = {0, PTO_CMP_EQ, PTO_CMP_NE, PTO_CMP_GT,
                                  PTO_CMP_LT, PTO_CMP_GE, PTO_CMP_LE};
    uint8_t op = uint8_t(p.op);
    if (op == 0 || op >= sizeof ops) {
        pto_api_fail(PTO2_ERROR_INVALID_ARGS, func, "a predicate operator %u", unsigned(op));
        return false;
    }
    if (p.operand.tensor == nullptr) {
        pto_api_fail(PTO2_ERROR_INVALID_ARGS, func, "a predicate without its tensor");
        return false;
    }
    PtoTensorArg at;
    if (!pto_api_element(*p.operand.tensor, p.operand.ndims, p.operand.indices, PtoAccess_READ,
                         &at, func)) {
        return false;
    }
    *out = PtoPredicate{};
    out->addr = at.base;
    out->target = uint64_t(p.target);
    out->width = uint8_t(at.elem);
    out->op = ops[op];
    out->is_signed = 1;
    return true;
}

/* Submits `a` to run `mk`'s kernels (none: a dummy task, ordered like any other but run by
 * no core); returns its allocated outputs. */
inline TaskOutputTensors pto_api_submit(const MixedKernels *mk, const CoreTaskArgs &a,
                                        const char *func) {
    TaskOutputTensors outs;
    if (rt_is_fatal()) return outs;
    if (a.has_error) {
        pto_api_fail(PTO2_ERROR_INVALID_ARGS, func, "task arguments: %s", a.error_msg);
        return outs;
    }
    PtoTask t{};
    if (!mk) {
        t.class_ = PTO_API_DUMMY;
    } else if (!pto_api_lanes(*mk, &t, func)) {
        return outs;
    }
    int16_t blocks = a.launch_spec.block_num();
    if (blocks < 1) {
        pto_api_fail(PTO2_ERROR_INVALID_ARGS, func, "%d blocks: a task has 1 or more", blocks);
        return outs;
    }
    t.blocks = uint16_t(blocks);
    t.sync_start = a.launch_spec.require_sync_start() ? 1 : 0;
    PtoTensorArg tiles[MAX_TENSOR_ARGS];
    for (int32_t i = 0; i < a.ntensors; i++) {
        const CoreTaskArgs::Slot &s = a.slots[i];
        ChipTensor made;
        const ChipTensor *t_i = &s.tensor;
        if (s.tag == TensorArgType::OUTPUT) {
            if (!pto_api_create(s.info, &made, func)) return TaskOutputTensors{};
            outs.push(made);
            t_i = &made;
        }
        PtoAccess access = s.tag == TensorArgType::INPUT    ? PtoAccess_READ
                           : s.tag == TensorArgType::INOUT ? (PtoAccess)(PtoAccess_READ | PtoAccess_WRITE)
                                                           : PtoAccess_WRITE;
        if (!pto_api_tile(*t_i, access, &tiles[i], func)) return TaskOutputTensors{};
    }
    t.tensors = a.ntensors ? tiles : nullptr;
    t.ntensors = size_t(a.ntensors);
    t.args = a.nscalars ? a.scalars : nullptr;
    t.nargs = size_t(a.nscalars);
    PtoPredicate when;
    if (a.predicate.op != PredicateOp::NONE) {
        if (!pto_api_predicate(a.predicate, &when, func)) return TaskOutputTensors{};
        t.predicate = &when;
    }
    if (PtoApiRecording *r = pto_api_state.recording) {
        pto_api_graph_task(r, t, a.scalar_from);
        return outs;
    }
    const PtoOrchOps *ops = pto_api_state.ops;
    if (!pto_api_ok(ops->submit(ops->ctx, &t, nullptr), func, "submit")) return TaskOutputTensors{};
    return outs;
}

inline TaskOutputTensors rt_submit_task(const MixedKernels &mk, const CoreTaskArgs &a) {
    return pto_api_submit(&mk, a, __FUNCTION__);
}

inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs &a) {
    MixedKernels mk;
    mk.aic_kernel_id = kernel_id;
    return pto_api_submit(&mk, a, __FUNCTION__);
}

inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs &a) {
    MixedKernels mk;
    mk.aiv0_kernel_id = kernel_id;
    return pto_api_submit(&mk, a, __FUNCTION__);
}

/* A task that runs no kernel: ordered after the tasks its tensors wait for, and before the
 * tasks that will wait for its outputs. */
inline TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs &a) {
    return pto_api_submit(nullptr, a, __FUNCTION__);
}

/* Outputs allocated without a kernel to run: a dummy task owns them, so they live until
 * its scope ends, like any task's outputs. */
inline TaskOutputTensors alloc_tensors(const CoreTaskArgs &a) {
    return pto_api_submit(nullptr, a, __FUNCTION__);
}

inline TaskOutputTensors alloc_tensors(const TensorCreateInfo infos[], uint32_t count) {
    CoreTaskArgs a;
    for (uint32_t i = 0; i < count; i++) a.add_output(infos[i]);
    return pto_api_submit(nullptr, a, __FUNCTION__);
}

template <typename... Ts, typename = std::enable_if_t<
                              (sizeof...(Ts) > 0 && (std::is_same_v<Ts, TensorCreateInfo> && ...))>>
inline TaskOutputTensors alloc_tensors(const Ts &...infos) {
    CoreTaskArgs a;
    a.add_output(infos...);
    return pto_api_submit(nullptr, a, __FUNCTION__);
}

#endif
