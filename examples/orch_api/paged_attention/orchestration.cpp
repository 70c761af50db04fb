// Paged attention (decode: one query token per sequence) in the C++ runtime's orchestration
// API, one SPMD block per head. Arguments: tensors query (batch, heads, dim) f32,
// key_cache and value_cache (pages, page_size, heads, dim) f32, block_table (batch,
// max_pages) int32, context_lens (batch) int32, out (batch, heads, dim) f32; the scalar
// scale (f32 bits). Kernels: 0 qk (AIC), 1 softmax_pv (AIV).
// Per sequence b:
//   scores (heads, max_pages * page_size) = scale q_b . k_t   qk, a block per head
//   out[b] = softmax(scores) v                              softmax_pv, a block per head
// The orchestration reads each sequence's length (get_tensor_data) to skip empty ones and to
// pass it to the kernels.
#include "pto_orchestration_api.h"

enum { QK = 0, SOFTMAX_PV = 1 };

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig
aicpu_orchestration_config(const ChipTaskArgs &) {
    return PTO2OrchestrationConfig{.expected_arg_count = 7};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &query = args.tensor(0).ref();
    const ChipTensor &key_cache = args.tensor(1).ref();
    const ChipTensor &value_cache = args.tensor(2).ref();
    const ChipTensor &block_table = args.tensor(3).ref();
    const ChipTensor &context_lens = args.tensor(4).ref();
    const ChipTensor &out = args.tensor(5).ref();
    uint64_t scale = args.scalar(0);
    uint32_t batch = query.shapes[0], heads = query.shapes[1], dim = query.shapes[2];
    uint32_t page_size = key_cache.shapes[1], max_pages = block_table.shapes[1];

    for (uint32_t b = 0; b < batch; b++) {
        uint32_t idx[1] = {b};
        int32_t len = get_tensor_data<int32_t>(context_lens, 1, idx);
        if (len <= 0) continue;
        if (uint32_t(len) > max_pages * page_size) {
            rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "sequence %u: %d tokens past its pages", b,
                            len);
            return;
        }
        PTO2_SCOPE() {
            uint32_t q_shape[3] = {1, heads, dim}, at[3] = {b, 0, 0};
            uint32_t bt_shape[2] = {1, max_pages}, bt_at[2] = {b, 0};
            ChipTensor table = block_table.view(bt_shape, bt_at);
            uint32_t s_shape[2] = {heads, max_pages * page_size};
            TensorCreateInfo scores_ci(s_shape, 2, DataType::FLOAT32);

            CoreTaskArgs qk;
            qk.add_input(query.view(q_shape, at), key_cache, table);
            qk.add_output(scores_ci);
            qk.add_scalar(scale, len);
            qk.launch_spec.set_block_num(int16_t(heads));
            TaskOutputTensors r = rt_submit_aic_task(QK, qk);

            CoreTaskArgs pv;
            pv.add_input(r.get_ref(0), value_cache, table);
            pv.add_output(out.view(q_shape, at));
            pv.add_scalar(len);
            pv.launch_spec.set_block_num(int16_t(heads));
            rt_submit_aiv_task(SOFTMAX_PV, pv);
        }
    }
}

}  // extern "C"
