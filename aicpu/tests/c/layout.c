/* The layout of the C headers as the C compiler sees it, for the harness to compare with
 * the Rust types (tests/harness.rs): sizes and offsets, in a fixed order. */
#include <stddef.h>

#include "pto_aicore.h"
#include "pto_aicpu.h"

#define PUT(x) out[n++] = (uint64_t)(x)

uint32_t pto_test_layout(uint64_t *out) {
    uint32_t n = 0;
    PUT(sizeof(PtoOrchOps));
    PUT(offsetof(PtoOrchOps, ctx));
    PUT(offsetof(PtoOrchOps, submit));
    PUT(offsetof(PtoOrchOps, scope_begin));
    PUT(offsetof(PtoOrchOps, scope_end));
    PUT(offsetof(PtoOrchOps, alloc));
    PUT(offsetof(PtoOrchOps, status_str));
    PUT(offsetof(PtoOrchOps, settle));
    PUT(offsetof(PtoOrchOps, wrote));
    PUT(sizeof(PtoSlot));
    PUT(offsetof(PtoSlot, ntensors));
    PUT(offsetof(PtoSlot, tensors));
    PUT(offsetof(PtoSlot, args));
    PUT(offsetof(PtoSlot, ncond));
    PUT(offsetof(PtoSlot, shape));
    PUT(offsetof(PtoSlot, block));
    PUT(offsetof(PtoSlot, conditions));
    PUT(sizeof(PtoKernelTensor));
    PUT(offsetof(PtoKernelTensor, buffer));
    PUT(offsetof(PtoKernelTensor, buffer_len));
    PUT(offsetof(PtoKernelTensor, start_offset));
    PUT(offsetof(PtoKernelTensor, elem));
    PUT(offsetof(PtoKernelTensor, rank));
    PUT(offsetof(PtoKernelTensor, access));
    PUT(offsetof(PtoKernelTensor, dtype));
    PUT(offsetof(PtoKernelTensor, shape));
    PUT(offsetof(PtoKernelTensor, strides));
    PUT(sizeof(PtoHandshake));
    PUT(offsetof(PtoHandshake, base_token));
    PUT(offsetof(PtoHandshake, aicore_exited));
    PUT(PTO_SLOT_ARGS);
    PUT(PTO_SLOT_CONDITIONS);
    PUT(PTO_AICPU_ABI);
    PUT(sizeof(PtoOrchConfig));
    PUT(offsetof(PtoOrchConfig, max_deps));
    PUT(offsetof(PtoOrchConfig, max_tensors));
    PUT(offsetof(PtoOrchConfig, max_args));
    PUT(offsetof(PtoOrchConfig, task_window));
    PUT(offsetof(PtoOrchConfig, heap_bytes));
    PUT(PTO_ORCH_CONFIG_ABI);
    PUT(PTO_KERNEL_ABI_VERSION);
    PUT(sizeof(PtoRecord));
    PUT(offsetof(PtoRecord, task));
    PUT(offsetof(PtoRecord, kernel));
    PUT(offsetof(PtoRecord, core));
    PUT(offsetof(PtoRecord, class_));
    PUT(offsetof(PtoRecord, scheduler));
    PUT(offsetof(PtoRecord, flags));
    PUT(offsetof(PtoRecord, block));
    PUT(offsetof(PtoRecord, blocks));
    PUT(offsetof(PtoRecord, submit));
    PUT(offsetof(PtoRecord, ready));
    PUT(offsetof(PtoRecord, dispatch));
    PUT(offsetof(PtoRecord, start));
    PUT(offsetof(PtoRecord, end));
    PUT(offsetof(PtoRecord, fin));
    PUT(offsetof(PtoRecord, deferred_done));
    PUT(offsetof(PtoRecord, complete));
    PUT(PtoRecordFlags_CANCELLED);
    PUT(PtoRecordFlags_WRITTEN);
    PUT(PtoRecordFlags_FIN_AT_CLOSE);
    PUT(sizeof(PtoRecordStream));
    PUT(_Alignof(PtoRecordStream));
    PUT(offsetof(PtoRecordStream, produced));
    PUT(offsetof(PtoRecordStream, lost));
    PUT(offsetof(PtoRecordStream, done));
    PUT(offsetof(PtoRecordStream, wait_us));
    PUT(offsetof(PtoRecordStream, collected));
    PUT(PtoRecordStream_DEFAULT_WAIT_US);
    PUT(sizeof(PtoProducers));
    PUT(offsetof(PtoProducers, producers));
    PUT(PtoProducers_PER_ENTRY);
    PUT(offsetof(PtoOrchOps, graph_replay_with));
    PUT(sizeof(PtoReplay));
    PUT(offsetof(PtoReplay, shifts));
    PUT(offsetof(PtoReplay, after));
    PUT(offsetof(PtoReplay, flags));
    PUT(offsetof(PtoReplay, ring));
    return n;
}
