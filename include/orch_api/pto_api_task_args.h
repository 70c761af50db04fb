/* What an orchestration builds a task from: CoreTaskArgs (its tensors, each with how the
 * task uses it, its scalars, its launch: SPMD blocks and sync start), MixedKernels (a
 * kernel per lane of a cluster), TaskOutputTensors (what a submit returns) and ChipTaskArgs
 * (the orchestration's own arguments). Tensors and create infos are copied in, so a
 * temporary view may be added.
 *
 * A dispatch predicate (set_predicate: one element of a tensor compared with a target when
 * the task is ready) becomes the runtime's own: a task whose predicate is false is skipped,
 * its consumers released. Explicit dependencies cannot be mapped (the runtime finds every
 * dependency through the tensors a task names): their calls fail to compile with a
 * sentence saying so. */
#ifndef PTO_API_TASK_ARGS_H
#define PTO_API_TASK_ARGS_H

#include <stdint.h>

#include <type_traits>

#include "pto_api_tensor.h"

/* Tensors and scalars one task may carry: the runtime's most (a run's limits are lower by
 * default: pto-launch --max-tensors/--max-args, or PTO_ORCHESTRATION_CONFIG). */
constexpr int MAX_TENSOR_ARGS = 32;
constexpr int MAX_SCALAR_ARGS = 32;
constexpr int32_t INVALID_KERNEL_ID = -1;

enum class TensorArgType : int32_t {
    INPUT = 0,           /* read */
    OUTPUT = 1,          /* written, allocated by the runtime from a TensorCreateInfo */
    INOUT = 2,           /* read then written */
    OUTPUT_EXISTING = 3, /* written, an existing tensor */
};

/* The kernel of each lane: the AIC alone, an AIV alone, or all three (a MIX task). */
struct MixedKernels {
    int32_t aic_kernel_id{INVALID_KERNEL_ID};
    int32_t aiv0_kernel_id{INVALID_KERNEL_ID};
    int32_t aiv1_kernel_id{INVALID_KERNEL_ID};
};

/* How a task launches: its SPMD blocks, and whether they must start together. */
struct PTO2LaunchSpec {
    int16_t block_num() const { return block_num_; }
    void set_block_num(int16_t n) { block_num_ = n; }
    bool require_sync_start() const { return require_sync_start_; }
    void set_require_sync_start(bool v) { require_sync_start_ = v; }

private:
    int16_t block_num_{1};
    bool require_sync_start_{false};
};

/* How a dispatch predicate compares its element (sign-extended) with its target; NONE: no
 * predicate. */
enum class PredicateOp : uint8_t { NONE = 0, EQ, NE, GT, LT, GE, LE };

/* The element a predicate reads: element `indices` (ndims of them) of `tensor`, which must
 * outlive the submit, and whose producer must come before the task (a tensor it reads, or
 * the orchestration's own wait), so that the value is current when the task is ready. */
struct CorePredicateOperand {
    const ChipTensor *tensor{nullptr};
    uint32_t ndims{0};
    uint32_t indices[MAX_TENSOR_DIMS]{};
};

/* A task's dispatch predicate: operand OP target (count[e] > 0, say). */
struct CoreTaskPredicate {
    CorePredicateOperand operand;
    PredicateOp op{PredicateOp::NONE};
    int64_t target{0};
};

/* What a graph's recording watches of the scalars (pto_api_graph.h): the boundary whose
 * scalars are the graph's, and those of them read as numbers (bit i: scalar i). Null when
 * nothing is recorded. */
struct PtoApiScalarWatch {
    const void *boundary;
    uint32_t read;
};
inline PtoApiScalarWatch *pto_api_scalar_watch = nullptr;

/* A scalar as CoreTaskArgs::scalar gives it: its value, and which scalar of the recorded
 * graph's boundary it is (0: none; i + 1: scalar i). Added to a task as it is
 * (add_scalar), it is patched by each replay with that call's value; read as a number
 * (converted to uint64_t), its value becomes part of the graph's identity, so another value
 * records again. */
struct PtoApiScalar {
    uint64_t value;
    uint8_t from;

    operator uint64_t() const {
        if (from && pto_api_scalar_watch) pto_api_scalar_watch->read |= 1u << (from - 1);
        return value;
    }
};

/* False, for any types: a static_assert on it fails only when its template is used. */
template <typename... T>
inline constexpr bool pto_api_unmapped = false;

struct CoreTaskArgs {
    struct Slot {
        TensorArgType tag;
        ChipTensor tensor;     /* all but OUTPUT */
        TensorCreateInfo info; /* OUTPUT */
    };

    Slot slots[MAX_TENSOR_ARGS];
    uint64_t scalars[MAX_SCALAR_ARGS];
    /* Per scalar: which scalar of the recorded graph's boundary it passes on (PtoApiScalar's
     * `from`). */
    uint8_t scalar_from[MAX_SCALAR_ARGS]{};
    int32_t ntensors{0};
    int32_t nscalars{0};
    bool has_error{false};
    const char *error_msg{nullptr};
    PTO2LaunchSpec launch_spec;
    CoreTaskPredicate predicate;

    CoreTaskArgs() = default;
    CoreTaskArgs(const CoreTaskArgs &) = delete;
    CoreTaskArgs &operator=(const CoreTaskArgs &) = delete;

    int32_t tensor_count() const { return ntensors; }
    int32_t scalar_count() const { return nscalars; }
    /* Tensor `i` as added (not a TensorCreateInfo output), and scalar `i`: what a graph
     * function reads of its boundary (a PtoApiScalar, which converts to uint64_t). */
    const ChipTensor &tensor(int32_t i) const { return slots[i].tensor; }
    PtoApiScalar scalar(int32_t i) const {
        bool boundary = pto_api_scalar_watch && pto_api_scalar_watch->boundary == this;
        return PtoApiScalar{scalars[i], boundary ? uint8_t(i + 1) : scalar_from[i]};
    }

    template <typename... Ts>
    void add_input(const Ts &...ts) {
        static_assert((std::is_same_v<Ts, ChipTensor> && ...), "add_input takes ChipTensors");
        (add(TensorArgType::INPUT, ts), ...);
    }
    template <typename... Ts>
    void add_inout(const Ts &...ts) {
        static_assert((std::is_same_v<Ts, ChipTensor> && ...), "add_inout takes ChipTensors");
        (add(TensorArgType::INOUT, ts), ...);
    }
    /* Existing tensors (written), or TensorCreateInfos (allocated at submit). */
    template <typename... Ts>
    void add_output(const Ts &...ts) {
        static_assert((std::is_same_v<Ts, ChipTensor> && ...) ||
                          (std::is_same_v<Ts, TensorCreateInfo> && ...),
                      "add_output takes ChipTensors or TensorCreateInfos");
        (add_out(ts), ...);
    }
    template <typename... Ts>
    void add_scalar(Ts... vs) {
        static_assert(((std::is_arithmetic_v<Ts> || std::is_enum_v<Ts> ||
                        std::is_same_v<Ts, PtoApiScalar>) &&
                       ...),
                      "add_scalar takes numbers, enums and scalars of a CoreTaskArgs");
        (push_any(vs), ...);
    }
    void add_scalars(const uint64_t *vs, int n) {
        for (int i = 0; i < n; i++) push_scalar(vs[i]);
    }

    /* A hint that the task may be staged before its producers finish: ignored (correct,
     * only later). */
    void set_allow_early_resolve(bool = true) {}

    template <typename... Ts>
    void add_no_dep(const Ts &...) {
        static_assert(pto_api_unmapped<Ts...>,
                      "add_no_dep: this runtime tracks every tensor a task names; use add_input");
    }
    template <typename... Ts>
    void set_dependencies(const Ts &...) {
        static_assert(pto_api_unmapped<Ts...>,
                      "set_dependencies: this runtime finds dependencies through tensors only "
                      "(docs/orchestration-api.md)");
    }
    /* The task runs only if `pred` holds when it is ready; else it is skipped (no core
     * runs it) and its consumers released. */
    void set_predicate(const CoreTaskPredicate &pred) { predicate = pred; }

    void set_error(const char *msg) {
        if (!has_error) has_error = true, error_msg = msg;
    }

private:
    void add(TensorArgType tag, const ChipTensor &t) {
        if (ntensors >= MAX_TENSOR_ARGS) return set_error("more tensors than MAX_TENSOR_ARGS");
        if (nscalars > 0) return set_error("a tensor added after a scalar");
        slots[ntensors].tag = tag;
        slots[ntensors++].tensor = t;
    }
    void add_out(const ChipTensor &t) { add(TensorArgType::OUTPUT_EXISTING, t); }
    void add_out(const TensorCreateInfo &ci) {
        if (ntensors >= MAX_TENSOR_ARGS) return set_error("more tensors than MAX_TENSOR_ARGS");
        if (nscalars > 0) return set_error("a tensor added after a scalar");
        slots[ntensors].tag = TensorArgType::OUTPUT;
        slots[ntensors++].info = ci;
    }
    void push_scalar(uint64_t w, uint8_t from = 0) {
        if (nscalars >= MAX_SCALAR_ARGS) return set_error("more scalars than MAX_SCALAR_ARGS");
        scalar_from[nscalars] = from;
        scalars[nscalars++] = w;
    }
    /* A scalar of a CoreTaskArgs keeps where it came from (not read as a number). */
    void push_any(PtoApiScalar v) { push_scalar(v.value, v.from); }
    template <typename T>
    void push_any(T v) {
        push_scalar(to_u64(v));
    }
};

/* The tensors a submit allocated (its TensorCreateInfo outputs, in order). */
class TaskOutputTensors {
public:
    bool empty() const { return n_ == 0; }
    uint32_t size() const { return n_; }
    /* Output `i`; past the last, an invalid tensor (a submit naming it is refused). */
    const ChipTensor &get_ref(uint32_t i) const & {
        static const ChipTensor none{};
        return i < n_ ? outs_[i] : none;
    }
    const ChipTensor &get_ref(uint32_t i) const && = delete;
    void push(const ChipTensor &t) {
        if (n_ < MAX_TENSOR_ARGS) outs_[n_++] = t;
    }

private:
    ChipTensor outs_[MAX_TENSOR_ARGS];
    uint32_t n_{0};
};

/* The orchestration's arguments: tensors (`tensor(i).ref()`) then scalars (`scalar(i)`). */
struct ChipTaskArgs {
    struct Ref {
        ChipTensor t;
        const ChipTensor &ref() const { return t; }
    };

    Ref tensors[MAX_TENSOR_ARGS];
    uint64_t scalars[MAX_TENSOR_ARGS + MAX_SCALAR_ARGS];
    int32_t ntensors{0};
    int32_t nscalars{0};

    const Ref &tensor(int32_t i) const { return tensors[i]; }
    uint64_t scalar(int32_t i) const { return scalars[i]; }
    int32_t tensor_count() const { return ntensors; }
    int32_t scalar_count() const { return nscalars; }
};

#endif
