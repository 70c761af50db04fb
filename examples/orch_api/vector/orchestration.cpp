// out = 3 (x + y)^2 + x over f32 vectors, in the C++ runtime's orchestration API.
// Arguments: tensors x, y, out (n elements each). Kernels: 0 add, 1 scale, 2 mul.
//   s = x + y                  (runtime-allocated)
//   d = 3 s                    (runtime-allocated, inner scope; s read as 5 dimensions)
//   p = d * s                  (runtime-allocated, inner scope)
//   out[half] = p[half] + x[half], one task per half, through views
#include "pto_orchestration_api.h"

enum { ADD = 0, SCALE = 1, MUL = 2 };

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig
aicpu_orchestration_config(const ChipTaskArgs &) {
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &x = args.tensor(0).ref();
    const ChipTensor &y = args.tensor(1).ref();
    const ChipTensor &out = args.tensor(2).ref();
    uint32_t n = x.shapes[0];
    LOG_INFO("vector of %u", n);
    if (n % 32 != 0) {
        rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "%u elements: want a multiple of 32", n);
        return;
    }
    uint32_t shape[1] = {n};
    TensorCreateInfo vec(shape, 1, DataType::FLOAT32);

    CoreTaskArgs a0;
    a0.add_input(x, y);
    a0.add_output(vec);
    TaskOutputTensors r0 = rt_submit_aiv_task(ADD, a0);
    const ChipTensor &s = r0.get_ref(0);

    PTO2_SCOPE() {
        uint32_t five[5] = {2, 2, 2, 2, n / 16};
        CoreTaskArgs a1;
        a1.add_input(s.reshape(five, 5));
        a1.add_output(vec);
        a1.add_scalar(3.0f);
        TaskOutputTensors r1 = rt_submit_aiv_task(SCALE, a1);
        const ChipTensor &d = r1.get_ref(0);

        CoreTaskArgs a2;
        a2.add_input(d, s);
        a2.add_output(vec);
        TaskOutputTensors r2 = rt_submit_aiv_task(MUL, a2);
        const ChipTensor &p = r2.get_ref(0);

        uint32_t half[1] = {n / 2};
        for (uint32_t h = 0; h < 2; h++) {
            uint32_t at[1] = {h * (n / 2)};
            CoreTaskArgs a3;
            a3.add_input(p.view(half, at), x.view(half, at));
            a3.add_output(out.view(half, at));
            rt_submit_aiv_task(ADD, a3);
        }
    }
}

}  // extern "C"
