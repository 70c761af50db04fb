/* The kernel's pto_kernel_entry (what the runtime calls): builds the arguments a kernel of
 * the C++ runtime's interface takes (pto_kernel_api.h) on its stack and calls its
 * kernel_entry. C, because pto_aicore.h is C; link it into every such kernel. */
#include "pto_aicore.h"
#include "../orch_api/pto_api_tensor.h"
#include "pto_kernel_frame.h"

void kernel_entry(PTO_GM int64_t *args);

/* Fail code of a kernel the run gave no tensor descriptors (or one with a stride past 32
 * bits, which the interface's ChipTensor cannot hold). */
#define PTO_API_KERNEL_NO_DESCRIPTORS 0x4150u

typedef struct Frame {
    int64_t words[SPMD_GLOBAL_CONTEXT_INDEX + 1];
    ChipTensor tensors[PTO_SLOT_ARGS];
    LocalContext local;
    GlobalContext global;
} Frame;

/* The API's DataType of the runtime's dtype `code` (pto_api_dtype_codes inverted). */
static uint8_t data_type(uint8_t code) {
    for (uint8_t t = 0; t < PTO_API_DTYPE_UNKNOWN; t++) {
        if (code != 0 && pto_api_dtype_codes[t] == code) return t;
    }
    return PTO_API_DTYPE_UNKNOWN;
}

/* The one place that reads the runtime's descriptors: `args` (as the runtime called the
 * kernel) into `f`. 0 when the run gave no descriptors, or a stride does not fit the
 * interface's 32 bits. */
static int frame(PTO_GM int64_t *args, Frame *f) {
    uint32_t nt = pto_kernel_ntensors(args);
    for (uint32_t i = 0; i < nt && i < PTO_SLOT_ARGS; i++) {
        PTO_GM const PtoKernelTensor *k = pto_kernel_tensor(args, i);
        if (!k || k->rank == 0 || k->rank > PTO_API_MAX_DIMS) return 0;
        ChipTensor *t = &f->tensors[i];
        uint64_t row_major = 1;
        bool contiguous = true;
        *t = (ChipTensor){.buffer = {k->buffer, k->buffer_len},
                          .start_offset = k->start_offset,
                          .ndims = k->rank,
                          .dtype = data_type(k->dtype)};
        for (int d = k->rank - 1; d >= 0; d--) {
            if (k->strides[d] > UINT32_MAX) return 0;
            t->shapes[d] = k->shape[d];
            t->strides[d] = (uint32_t)k->strides[d];
            contiguous = contiguous && k->strides[d] == row_major;
            row_major *= k->shape[d];
        }
        t->is_contiguous = contiguous;
        f->words[i] = (int64_t)(uintptr_t)t;
    }
    for (uint32_t i = nt; i < PTO_SLOT_ARGS; i++) f->words[i] = args[i];
    uint32_t lane = pto_kernel_lane(args), lanes = (pto_kernel_slot(args)->shape >> 8) & 0xffu;
    f->local.block_idx = (int32_t)pto_kernel_block_idx(args);
    f->local.block_num = (int32_t)pto_kernel_block_num(args);
    f->global.sub_block_id = lanes == 3 && lane > 0 ? (int32_t)lane - 1 : 0;
    f->words[SPMD_LOCAL_CONTEXT_INDEX] = (int64_t)(uintptr_t)&f->local;
    f->words[SPMD_GLOBAL_CONTEXT_INDEX] = (int64_t)(uintptr_t)&f->global;
    return 1;
}

void pto_kernel_entry(PTO_GM int64_t *args) {
    Frame f;
    if (!frame(args, &f)) {
        pto_kernel_fail(args, PTO_API_KERNEL_NO_DESCRIPTORS);
        return;
    }
    kernel_entry(f.words);
}
