/* What the kernel shim (pto_kernel_shim.c) hands a kernel besides its tensors: where its
 * argument words hold its contexts, and their layouts. C and C++. */
#ifndef PTO_KERNEL_FRAME_H
#define PTO_KERNEL_FRAME_H

#include <stdint.h>

#define SPMD_LOCAL_CONTEXT_INDEX 48
#define SPMD_GLOBAL_CONTEXT_INDEX 49

typedef struct LocalContext {
    int32_t block_idx; /* this execution's SPMD block, 0 up to block_num */
    int32_t block_num; /* the task's blocks */
} LocalContext;

typedef struct GlobalContext {
    int32_t sub_block_id; /* which AIV of its cluster (0 or 1) in a MIX task; else 0 */
} GlobalContext;

#endif
