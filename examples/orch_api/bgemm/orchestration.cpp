// C = A B for each of a batch of f32 matrices, in the C++ runtime's orchestration API.
// Arguments: tensors A (batch * m rows of k, 2-D), B (batch, k, n), C (batch, m, n); the
// scalar tm (rows per task, dividing m). Kernel 0: gemm on the AIC.
// A is reshaped to (batch, m, k). Each tile of tm rows of C is two tasks: the first half
// of the inner dimension writes the tile, the second adds to it (so the second must wait
// for the first: the runtime finds that through the tile of C both name).
#include "pto_orchestration_api.h"

enum { GEMM = 0 };

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig
aicpu_orchestration_config(const ChipTaskArgs &) {
    return PTO2OrchestrationConfig{.expected_arg_count = 4};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &b_all = args.tensor(1).ref();
    const ChipTensor &c_all = args.tensor(2).ref();
    uint32_t batch = b_all.shapes[0], k = b_all.shapes[1], n = b_all.shapes[2];
    uint32_t m = c_all.shapes[1], tm = uint32_t(args.scalar(0));
    if (tm == 0 || m % tm != 0 || k % 2 != 0) {
        rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "tm %u must divide m %u, k %u be even", tm, m, k);
        return;
    }
    uint32_t shape3[3] = {batch, m, k};
    ChipTensor a_all = args.tensor(0).ref().reshape(shape3, 3);
    uint32_t kh = k / 2;
    for (uint32_t b = 0; b < batch; b++) {
        for (uint32_t row = 0; row < m; row += tm) {
            uint32_t c_shape[3] = {1, tm, n}, c_at[3] = {b, row, 0};
            ChipTensor c = c_all.view(c_shape, c_at);
            for (uint32_t half = 0; half < 2; half++) {
                uint32_t a_shape[3] = {1, tm, kh}, a_at[3] = {b, row, half * kh};
                uint32_t b_shape[3] = {1, kh, n}, b_at[3] = {b, half * kh, 0};
                CoreTaskArgs t;
                t.add_input(a_all.view(a_shape, a_at), b_all.view(b_shape, b_at));
                if (half == 0) {
                    t.add_output(c);
                } else {
                    t.add_inout(c);
                }
                t.add_scalar(half);
                rt_submit_aic_task(GEMM, t);
            }
        }
    }
}

}  // extern "C"
