// Two tokens through LAYERS layers, each layer a graph function recorded once and replayed
// for the second token, in the C++ runtime's orchestration API (rt_submit_graph), with the
// vector example's kernels (0 add, 1 scale, 2 mul).
//   layer(in, w, out; f):  s = in + w   (the graph's own buffer, fresh per call)
//                          out = f s    (f: 0.5 for token 0, 0.25 for token 1)
// Arguments: tensors x (n), w (LAYERS x n), out (n). Token 0 runs x through the layers into
// a runtime-allocated activation, token 1 that activation into out; each layer reads row l
// of w (a view at the same offset for both tokens: the same identity, so token 1 replays).
// The layer passes its scalar f on to the scale task as it is, so f is no part of the
// identity: each replay patches it. Built with -DLAYERS_SCALE_AS_NUMBER, the layer reads f
// as a number first, so each value of f is an identity of its own and records again.
#include "pto_orchestration_api.h"

enum { ADD = 0, SCALE = 1, MUL = 2 };
constexpr uint32_t LAYERS = 3, TOKENS = 2;

namespace {

void layer(const CoreTaskArgs &b) {
    const ChipTensor &in = b.tensor(0), &w = b.tensor(1), &out = b.tensor(2);
#ifdef LAYERS_READ_DATA
    // A function that reads data cannot be recorded: it runs as ordinary tasks each call.
    uint32_t first[1] = {0};
    (void)get_tensor_data<float>(in, 1, first);
#endif
    uint32_t shape[1] = {in.shapes[0]};
    TensorCreateInfo vec(shape, 1, DataType::FLOAT32);
    CoreTaskArgs sum;
    sum.add_input(in, w);
    sum.add_output(vec);
    TaskOutputTensors s = rt_submit_aiv_task(ADD, sum);
    CoreTaskArgs scaled;
    scaled.add_input(s.get_ref(0));
    scaled.add_output(out);
#ifdef LAYERS_SCALE_AS_NUMBER
    uint64_t f = b.scalar(0);
    scaled.add_scalar(f);
#else
    scaled.add_scalar(b.scalar(0));
#endif
    rt_submit_aiv_task(SCALE, scaled);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig
aicpu_orchestration_config(const ChipTaskArgs &) {
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &x = args.tensor(0).ref();
    const ChipTensor &w = args.tensor(1).ref();
    const ChipTensor &out = args.tensor(2).ref();
    uint32_t n = x.shapes[0];
    uint32_t shape[1] = {n};
    TensorCreateInfo vec(shape, 1, DataType::FLOAT32);
    // Between layers and tokens: activations the runtime allocates (existing tensors to the
    // graphs), the last one being out.
    ChipTensor acts[TOKENS * LAYERS];
    for (uint32_t i = 0; i + 1 < TOKENS * LAYERS; i++) {
        TaskOutputTensors made = alloc_tensors(vec);
        acts[i] = made.get_ref(0);
    }
    acts[TOKENS * LAYERS - 1] = out;
    uint32_t row[2] = {1, n};
    uint32_t flat[1] = {n};
    for (uint32_t t = 0; t < TOKENS; t++) {
        for (uint32_t l = 0; l < LAYERS; l++) {
            uint32_t at[2] = {l, 0};
            uint32_t i = t * LAYERS + l;
            CoreTaskArgs b;
            b.add_input(i == 0 ? x : acts[i - 1], w.view(row, at).reshape(flat, 1));
            b.add_output(acts[i]);
            b.add_scalar(t == 0 ? 0.5f : 0.25f);
            rt_submit_graph(&layer, b);
        }
    }
    uint32_t recorded = 0, replayed = 0;
    rt_graph_counts(&recorded, &replayed);
    LOG_INFO("graphs: %u recorded, %u calls replayed", recorded, replayed);
}

}  // extern "C"
