/* A ChipTensor as the runtime's tile (PtoTensorArg): the buffer it belongs to (what the
 * runtime orders tasks by), the view's first element, element size, shapes and strides.
 * The runtime's tiles have 4 dimensions; a fifth is folded away when one dimension is 1 or
 * two neighbours are contiguous, and refused otherwise. */
#ifndef PTO_API_TILE_H
#define PTO_API_TILE_H

#include "pto_api_log.h"
#include "pto_api_tensor.h"

/* `t` as a tile of `access` (0 read, 1 written, 2 both) in `out`; false (the run fatal,
 * saying why) if it is none. */
inline bool pto_api_tile(const ChipTensor &t, uint8_t access, PtoTensorArg *out,
                         const char *func) {
    uint64_t elem = get_element_size(t.dtype);
    if (t.ndims == 0 || t.ndims > MAX_TENSOR_DIMS) {
        pto_api_fail(PTO2_ERROR_INVALID_ARGS, func,
                     "a tensor of %u dimensions: a view or reshape that did not fit its tensor, "
                     "or get_ref past a submit's outputs",
                     t.ndims);
        return false;
    }
    if (elem == 0) {
        pto_api_fail(PTO2_ERROR_INVALID_ARGS, func, "a tensor of unknown dtype %u",
                     unsigned(t.dtype));
        return false;
    }
    uint32_t rank = t.ndims;
    uint32_t shape[MAX_TENSOR_DIMS];
    uint64_t stride[MAX_TENSOR_DIMS];
    for (uint32_t d = 0; d < rank; d++) shape[d] = t.shapes[d], stride[d] = t.strides[d];
    while (rank > 4) {
        uint32_t d = 0; /* drop a dimension of 1, or merge d into d + 1 when contiguous */
        while (d + 1 < rank && shape[d] != 1 && stride[d] != stride[d + 1] * shape[d + 1]) d++;
        if (d + 1 == rank) {
            pto_api_fail(PTO2_ERROR_INVALID_ARGS, func,
                         "a 5-dimensional view with no dimension of 1 and no two contiguous "
                         "neighbours: the runtime's tiles have 4 dimensions");
            return false;
        }
        if (shape[d] != 1) shape[d + 1] *= shape[d];
        for (uint32_t k = d; k + 1 < rank; k++) shape[k] = shape[k + 1], stride[k] = stride[k + 1];
        rank--;
    }
    *out = PtoTensorArg{};
    out->buffer = t.buffer.addr;
    out->buffer_len = t.buffer.size;
    out->base = t.buffer.addr + t.start_offset * elem;
    out->elem = uint32_t(elem);
    out->rank = uint8_t(rank);
    out->access = access;
    for (uint32_t d = 0; d < 4; d++) {
        out->shape[d] = d < rank ? shape[d] : 1;
        out->strides[d] = d < rank ? stride[d] : 0;
    }
    return true;
}

/* The one element `indices` (ndims of them) of `t`, as a tile of `access`. */
inline bool pto_api_element(const ChipTensor &t, uint32_t ndims, const uint32_t indices[],
                            uint8_t access, PtoTensorArg *out, const char *func) {
    if (!pto_api_tile(t, access, out, func)) return false;
    for (uint32_t d = 0; d < ndims; d++) {
        if (d >= t.ndims || indices[d] >= t.shapes[d]) {
            pto_api_fail(PTO2_ERROR_INVALID_ARGS, func,
                         "index %u of dimension %u is outside the tensor (%u dimensions)",
                         d < ndims ? indices[d] : 0, d, t.ndims);
            return false;
        }
    }
    out->base = t.buffer.addr + t.compute_flat_offset(indices, ndims) * out->elem;
    out->rank = 1;
    out->shape[0] = 1, out->shape[1] = 1, out->shape[2] = 1, out->shape[3] = 1;
    out->strides[0] = 1, out->strides[1] = 0, out->strides[2] = 0, out->strides[3] = 0;
    return true;
}

#endif
