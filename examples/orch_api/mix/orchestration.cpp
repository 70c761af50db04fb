// A MIX task with a kernel of its own on each lane of a cluster, as SPMD blocks that start
// together, then a consumer of everything it wrote, in the C++ runtime's orchestration API.
// Arguments: tensors x (rows, cols) f32, w (cols, cols) f32, y (rows, cols) f32, parts
// (blocks * 2) f32, total (1) f32; the scalar blocks (dividing rows).
// Kernels: 0 mix_matmul (AIC lane), 1 mix_sum (AIV0 lane), 2 mix_sumsq (AIV1 lane),
// 3 total (AIV). Block b of the MIX task owns rows [b rows/blocks, (b+1) rows/blocks):
//   AIC:  y[those rows] = x[those rows] w
//   AIV0: parts[2 b + sub_block] = the sum of x over those rows' left half of columns
//   AIV1: parts[2 b + sub_block] = the sum of squares over their right half
// Then total = sum(y) + sum(parts), after every lane of every block.
#include "pto_orchestration_api.h"

enum { MATMUL = 0, SUM = 1, SUMSQ = 2, TOTAL = 3 };

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig
aicpu_orchestration_config(const ChipTaskArgs &) {
    return PTO2OrchestrationConfig{.expected_arg_count = 6};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &x = args.tensor(0).ref();
    const ChipTensor &w = args.tensor(1).ref();
    const ChipTensor &y = args.tensor(2).ref();
    const ChipTensor &parts = args.tensor(3).ref();
    const ChipTensor &total = args.tensor(4).ref();
    int16_t blocks = int16_t(args.scalar(0));

    MixedKernels lanes;
    lanes.aic_kernel_id = MATMUL;
    lanes.aiv0_kernel_id = SUM;
    lanes.aiv1_kernel_id = SUMSQ;
    CoreTaskArgs mix;
    mix.add_input(x, w);
    mix.add_output(y, parts);
    mix.launch_spec.set_block_num(blocks);
    mix.launch_spec.set_require_sync_start(true);
    rt_submit_task(lanes, mix);

    CoreTaskArgs sum;
    sum.add_input(y, parts);
    sum.add_output(total);
    rt_submit_aiv_task(TOTAL, sum);
}

}  // extern "C"
