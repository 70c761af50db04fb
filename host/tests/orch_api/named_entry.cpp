// An orchestration with an entry of its own name and no config function, as the C++
// runtime's named entries are: built with -DPTO_ORCHESTRATION_ENTRY=build_sum.
// Arguments: tensors x, y, out (n f32 each). Kernel 0: add (out = x + y).
#include "pto_orchestration_api.h"

extern "C" __attribute__((visibility("default"))) void build_sum(const ChipTaskArgs &args) {
    CoreTaskArgs t;
    t.add_input(args.tensor(0).ref(), args.tensor(1).ref());
    t.add_output(args.tensor(2).ref());
    rt_submit_aiv_task(0, t);
}
