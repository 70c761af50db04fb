/* The C++ runtime's kernel interface over this runtime's: a kernel file defines
 *
 *     extern "C" void kernel_entry(int64_t *args)
 *
 * where args[i] (i below the task's tensors) points to a ChipTensor (pto_api_tensor.h:
 * buffer address and bytes, start_offset in elements, shapes, strides), the scalars follow,
 * and get_block_idx / get_block_num / get_sub_block_id read the execution's context. Link
 * pto_kernel_shim.c (C) into each kernel: its pto_kernel_entry, what the runtime calls,
 * translates the runtime's arguments and calls kernel_entry. C++17.
 *
 * A tensor's dtype is the orchestration's, or DataType::DATA_TYPE_NUM (unknown) when the
 * task did not say (a C orchestration's untyped tile). */
#ifndef PTO_KERNEL_API_H
#define PTO_KERNEL_API_H

#include <stdint.h>

#include "../orch_api/pto_api_tensor.h"
#include "pto_kernel_frame.h"

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__
#endif

static inline int32_t get_block_idx(__gm__ int64_t *args) {
    return reinterpret_cast<LocalContext *>(args[SPMD_LOCAL_CONTEXT_INDEX])->block_idx;
}
static inline int32_t get_block_num(__gm__ int64_t *args) {
    return reinterpret_cast<LocalContext *>(args[SPMD_LOCAL_CONTEXT_INDEX])->block_num;
}
static inline int32_t get_sub_block_id(__gm__ int64_t *args) {
    return reinterpret_cast<GlobalContext *>(args[SPMD_GLOBAL_CONTEXT_INDEX])->sub_block_id;
}

extern "C" void kernel_entry(__gm__ int64_t *args);

#endif
