// An orchestration whose tasks depend on a value a kernel computed, in the C++ runtime's
// orchestration API. Arguments: tensors x (n) int64, out (2) int64; scalars threshold,
// limit, base. Kernels: 0 count (AIV), 1 bump (AIV), 2 store (AIV).
//   c = how many x[i] >= threshold             count, into a runtime-allocated word
//   k = get_tensor_data(c)                     waits for count
//   acc: a word from alloc_tensors (initial value -1), then set_tensor_data(acc, base)
//   k tasks bump: acc += i + 1 (i = 0 .. k-1)  a chain through acc
//   a dummy task on acc                        runs on no core, ordered in the chain
//   out = {acc, c}                             store
// A count past `limit` is refused with rt_report_fatal before anything else is submitted.
#include "pto_orchestration_api.h"

enum { COUNT = 0, BUMP = 1, STORE = 2 };

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig
aicpu_orchestration_config(const ChipTaskArgs &) {
    return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &x = args.tensor(0).ref();
    const ChipTensor &out = args.tensor(1).ref();
    int64_t threshold = int64_t(args.scalar(0)), limit = int64_t(args.scalar(1));
    int64_t base = int64_t(args.scalar(2));
    uint32_t one[1] = {1}, first[1] = {0};
    TensorCreateInfo word(one, 1, DataType::INT64);

    CoreTaskArgs counting;
    counting.add_input(x);
    counting.add_output(word);
    counting.add_scalar(threshold);
    TaskOutputTensors counted = rt_submit_aiv_task(COUNT, counting);
    const ChipTensor &c = counted.get_ref(0);

    int64_t k = get_tensor_data<int64_t>(c, 1, first);
    LOG_INFO("%lld elements reach %lld", (long long)k, (long long)threshold);
    if (k > limit) {
        rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "count %lld is past the limit %lld",
                        (long long)k, (long long)limit);
        return;
    }

    TensorCreateInfo acc_ci(one, 1, DataType::INT64);
    acc_ci.set_initial_value(int64_t(-1));
    TaskOutputTensors held = alloc_tensors(acc_ci);
    const ChipTensor &acc = held.get_ref(0);
    if (get_tensor_data<int64_t>(acc, 1, first) != -1) {
        rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "the initial value was not written");
        return;
    }
    set_tensor_data(acc, 1, first, base);

    for (int64_t i = 0; i < k; i++) {
        CoreTaskArgs bump;
        bump.add_inout(acc);
        bump.add_scalar(i + 1);
        rt_submit_aiv_task(BUMP, bump);
    }

    CoreTaskArgs fence;
    fence.add_inout(acc);
    rt_submit_dummy_task(fence);

    CoreTaskArgs store;
    store.add_input(acc, c);
    store.add_output(out);
    rt_submit_aiv_task(STORE, store);
}

}  // extern "C"
