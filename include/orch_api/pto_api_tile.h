/* A ChipTensor as the runtime's tile (PtoTensorArg): the buffer it belongs to (what the
 * runtime orders tasks by), the view's first element, element size and type, shapes and
 * strides (up to 5 dimensions, as the API's). */
#ifndef PTO_API_TILE_H
#define PTO_API_TILE_H

#include "pto_api_log.h"
#include "pto_api_tensor.h"

static_assert(sizeof(((PtoTensorArg *)nullptr)->shape) / sizeof(uint32_t) == PTO_API_MAX_DIMS,
              "a tile has as many dimensions as a ChipTensor");
static_assert(pto_api_dtype_codes[int(DataType::FLOAT32)] == PTO_DTYPE_F32 &&
                  pto_api_dtype_codes[int(DataType::FLOAT16)] == PTO_DTYPE_F16 &&
                  pto_api_dtype_codes[int(DataType::INT32)] == PTO_DTYPE_I32 &&
                  pto_api_dtype_codes[int(DataType::INT16)] == PTO_DTYPE_I16 &&
                  pto_api_dtype_codes[int(DataType::INT8)] == PTO_DTYPE_I8 &&
                  pto_api_dtype_codes[int(DataType::UINT8)] == PTO_DTYPE_U8 &&
                  pto_api_dtype_codes[int(DataType::BFLOAT16)] == PTO_DTYPE_BF16 &&
                  pto_api_dtype_codes[int(DataType::INT64)] == PTO_DTYPE_I64 &&
                  pto_api_dtype_codes[int(DataType::UINT64)] == PTO_DTYPE_U64 &&
                  pto_api_dtype_codes[int(DataType::UINT16)] == PTO_DTYPE_U16 &&
                  pto_api_dtype_codes[int(DataType::UINT32)] == PTO_DTYPE_U32,
              "DataType's codes are the runtime's");

/* `t` as a tile of `access` (PtoAccess_READ, PtoAccess_WRITE or both) in `out`; false (the run fatal,
 * saying why) if it is none. */
inline bool pto_api_tile(const ChipTensor &t, PtoAccess access, PtoTensorArg *out,
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
    *out = PtoTensorArg{};
    out->buffer = t.buffer.addr;
    out->buffer_len = t.buffer.size;
    out->base = t.buffer.addr + t.start_offset * elem;
    out->elem = uint32_t(elem);
    out->rank = uint8_t(t.ndims);
    out->access = access;
    out->dtype = pto_api_dtype_codes[uint8_t(t.dtype)];
    for (uint32_t d = 0; d < PTO_API_MAX_DIMS; d++) {
        out->shape[d] = d < t.ndims ? t.shapes[d] : 1;
        out->strides[d] = d < t.ndims ? t.strides[d] : 0;
    }
    return true;
}

/* The one element `indices` (ndims of them) of `t`, as a tile of `access`. */
inline bool pto_api_element(const ChipTensor &t, uint32_t ndims, const uint32_t indices[],
                            PtoAccess access, PtoTensorArg *out, const char *func) {
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
    for (uint32_t d = 0; d < PTO_API_MAX_DIMS; d++) out->shape[d] = 1, out->strides[d] = d == 0;
    return true;
}

#endif
