// Dispatch predicates through the C++ runtime's orchestration API, on data_dependent's
// kernels (0 count, 1 bump, 2 store). Arguments: tensors x (n) int64, out (2) int64; scalars
// threshold, base.
//   c = how many x[i] >= threshold; k = get_tensor_data(c) (the orchestration waits for it)
//   acc = base, then four bumps, each under a predicate on c[0]:
//     + 1 if c > 0 (runs), + 10 if c < 0 (skipped), + 100 if c == k (runs),
//     + 1000 if c != k (skipped)
//   out = {acc, c}: {base + 101, k}
#include "pto_orchestration_api.h"

enum { COUNT = 0, BUMP = 1, STORE = 2 };

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &x = args.tensor(0).ref();
    const ChipTensor &out = args.tensor(1).ref();
    int64_t threshold = int64_t(args.scalar(0)), base = int64_t(args.scalar(1));
    uint32_t one[1] = {1}, first[1] = {0};
    TensorCreateInfo word(one, 1, DataType::INT64);

    CoreTaskArgs counting;
    counting.add_input(x);
    counting.add_output(word);
    counting.add_scalar(threshold);
    TaskOutputTensors counted = rt_submit_aiv_task(COUNT, counting);
    const ChipTensor &c = counted.get_ref(0);
    int64_t k = get_tensor_data<int64_t>(c, 1, first);

    TaskOutputTensors held = alloc_tensors(word);
    const ChipTensor &acc = held.get_ref(0);
    set_tensor_data(acc, 1, first, base);

    struct {
        PredicateOp op;
        int64_t target, by;
    } bumps[4] = {{PredicateOp::GT, 0, 1},
                  {PredicateOp::LT, 0, 10},
                  {PredicateOp::EQ, k, 100},
                  {PredicateOp::NE, k, 1000}};
    for (const auto &b : bumps) {
        CoreTaskArgs bump;
        bump.add_inout(acc);
        bump.add_scalar(b.by);
        CoreTaskPredicate when;
        when.operand.tensor = &c;
        when.operand.ndims = 1;
        when.op = b.op;
        when.target = b.target;
        bump.set_predicate(when);
        rt_submit_aiv_task(BUMP, bump);
    }

    CoreTaskArgs store;
    store.add_input(acc, c);
    store.add_output(out);
    rt_submit_aiv_task(STORE, store);
}
