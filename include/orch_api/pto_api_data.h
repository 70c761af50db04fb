/* Reading and writing one element of a tensor from the orchestration: ops->settle waits
 * for the tasks working on that element (a read: its writers; a write: its readers too),
 * then the bytes are read or written (a write then published with ops->wrote). */
#ifndef PTO_API_DATA_H
#define PTO_API_DATA_H

#include <string.h>

#include "pto_api_tile.h"

/* Element `indices` (ndims of them) of `t`, once every task writing it finished; its bytes
 * zero-extended to a word, as a T (see from_u64). */
/* Recording hook (pto_api_graph.h): a graph function that reads or writes data cannot be
 * recorded; it runs as ordinary tasks instead. */
inline void pto_api_graph_unrecordable(PtoApiRecording *r, const char *why);

template <typename T = uint64_t>
inline T get_tensor_data(const ChipTensor &t, uint32_t ndims, const uint32_t indices[]) {
    if (PtoApiRecording *r = pto_api_state.recording) {
        pto_api_graph_unrecordable(r, "it reads a tensor's data (get_tensor_data)");
        return from_u64<T>(0);
    }
    PtoTensorArg arg;
    if (rt_is_fatal() || !pto_api_element(t, ndims, indices, PtoAccess_READ, &arg, __FUNCTION__)) {
        return from_u64<T>(0);
    }
    if (!pto_api_ok(pto_api_state.ops->settle(pto_api_state.ops->ctx, &arg), __FUNCTION__,
                    "waiting for the element's writers")) {
        return from_u64<T>(0);
    }
    uint64_t w = 0;
    memcpy(&w, reinterpret_cast<const void *>(uintptr_t(arg.base)), arg.elem);
    return from_u64<T>(w);
}

/* Writes `value` (its low bytes, see to_u64) to element `indices` of `t`, once every task
 * reading or writing it finished. */
template <typename T = uint64_t>
inline void set_tensor_data(const ChipTensor &t, uint32_t ndims, const uint32_t indices[],
                            T value) {
    if (PtoApiRecording *r = pto_api_state.recording) {
        pto_api_graph_unrecordable(r, "it writes a tensor's data (set_tensor_data)");
        return;
    }
    PtoTensorArg arg;
    if (rt_is_fatal() || !pto_api_element(t, ndims, indices, PtoAccess_WRITE, &arg, __FUNCTION__)) return;
    if (!pto_api_ok(pto_api_state.ops->settle(pto_api_state.ops->ctx, &arg), __FUNCTION__,
                    "waiting for the element's readers and writers")) {
        return;
    }
    uint64_t w = to_u64(value);
    memcpy(reinterpret_cast<void *>(uintptr_t(arg.base)), &w, arg.elem);
    pto_api_ok(pto_api_state.ops->wrote(pto_api_state.ops->ctx, &arg), __FUNCTION__,
               "publishing the element written");
}

#endif
