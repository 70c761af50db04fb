// What the compatibility API refuses at run time, one case per `mode` (the scalar argument):
// 0 a lane set the runtime has no class for, 1 a MANUAL scope, 2 a view outside its tensor,
// 3 a TensorCreateInfo of no elements, 4 get_ref past a submit's outputs.
// Argument: the tensor x (3, 3, 3, 3, 3) f32, then mode. Kernel 0 is never run.
#include "pto_orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &x = args.tensor(0).ref();
    uint32_t two[5] = {2, 2, 2, 2, 2}, far[5] = {2, 0, 0, 0, 0}, none[1] = {0};
    CoreTaskArgs t;
    switch (args.scalar(0)) {
    case 0: {
        MixedKernels lanes;
        lanes.aic_kernel_id = 0;
        lanes.aiv0_kernel_id = 0;
        t.add_input(x);
        rt_submit_task(lanes, t);
        break;
    }
    case 1:
        PTO2_SCOPE(PTO2ScopeMode::MANUAL) { rt_submit_aiv_task(0, t); }
        break;
    case 2:
        t.add_input(x.view(two, far));
        rt_submit_aiv_task(0, t);
        break;
    case 3:
        t.add_output(TensorCreateInfo(none, 1));
        rt_submit_aiv_task(0, t);
        break;
    default: {
        TaskOutputTensors none;
        t.add_input(none.get_ref(0));
        rt_submit_aiv_task(0, t);
    }
    }
}
