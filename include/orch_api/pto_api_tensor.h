/* ChipTensor: a view of a buffer in device memory (its address and bytes, the view's first
 * element, element type, shapes and strides), and what an orchestration builds tensors
 * with: views, reshapes, make_tensor_external, and TensorCreateInfo for an output the
 * runtime allocates. The same layout is what a kernel's tensor arguments point to
 * (pto_kernel_api.h), so it is written once, here; C sees the layout alone (the kernel
 * shim, pto_kernel_shim.c, fills it), C++ its operations too.
 *
 * A view or reshape that does not fit its tensor yields a tensor of no dimensions: the
 * submit that names it is refused, saying so. */
#ifndef PTO_API_TENSOR_H
#define PTO_API_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Dimensions a tensor may have (as many as the runtime's tiles). */
#define PTO_API_MAX_DIMS 5
/* The dtype of a tensor whose element type is not known (DataType::DATA_TYPE_NUM). */
#define PTO_API_DTYPE_UNKNOWN 12

/* The runtime's dtype code (PTO_DTYPE_* of pto_runtime.h; 0: untyped) of each DataType, by
 * its number: FLOAT32 F32, FLOAT16 F16, INT32 I32, INT16 I16, INT8 I8, UINT8 U8, BFLOAT16
 * BF16, INT64 I64, UINT64 U64, UINT16 U16, UINT32 U32, BOOL untyped (one byte). */
#ifdef __cplusplus
#define PTO_API_CONST constexpr
#else
#define PTO_API_CONST const
#endif
static PTO_API_CONST uint8_t pto_api_dtype_codes[PTO_API_DTYPE_UNKNOWN] = {1, 2,  7, 6,  5,  9,
                                                                          3, 8, 12, 10, 11, 0};

#ifdef __cplusplus
#include <algorithm> /* orchestrations of the C++ runtime use std::min/max without it */

#include "pto_api_dtype.h"
#define PTO_API_DTYPE DataType
constexpr int MAX_TENSOR_DIMS = PTO_API_MAX_DIMS;
static_assert(int(DataType::DATA_TYPE_NUM) == PTO_API_DTYPE_UNKNOWN, "unknown dtype");
#else
#define PTO_API_DTYPE uint8_t
#endif

typedef struct PTOBufferHandle {
    uint64_t addr; /* the buffer's first byte (device address) */
    uint64_t size; /* its bytes */
} PTOBufferHandle;

typedef struct ChipTensor {
    PTOBufferHandle buffer;
    uint64_t start_offset; /* elements from the buffer's start to the view's first element */
    uint32_t ndims;        /* 1 to MAX_TENSOR_DIMS; 0 marks an invalid view */
    PTO_API_DTYPE dtype;
    bool is_contiguous; /* strides are the row-major ones of shapes */
    uint8_t reserved[2];
    uint32_t shapes[PTO_API_MAX_DIMS];  /* elements per dimension, outermost first */
    uint32_t strides[PTO_API_MAX_DIMS]; /* elements between neighbours per dimension */

#ifdef __cplusplus

    uint64_t numel() const {
        uint64_t n = 1;
        for (uint32_t i = 0; i < ndims; i++) n *= shapes[i];
        return n;
    }
    uint64_t nbytes() const { return numel() * get_element_size(dtype); }

    /* The buffer's first byte as a T* (not the view's: add start_offset for that). */
    template <typename T>
    T *data_as() const {
        return reinterpret_cast<T *>(static_cast<uintptr_t>(buffer.addr));
    }

    /* Elements from the buffer's start to the element at `indices` (`n` of them). */
    uint64_t compute_flat_offset(const uint32_t indices[], uint32_t n) const {
        uint64_t at = start_offset;
        for (uint32_t d = 0; d < n && d < ndims; d++) at += uint64_t(indices[d]) * strides[d];
        return at;
    }

    /* The sub-block of `view_shapes` starting at `view_offsets` (ndims of each). */
    ChipTensor view(const uint32_t view_shapes[], const uint32_t view_offsets[],
                    bool manual_dep = false) const {
        (void)manual_dep; /* dependencies are always tracked */
        ChipTensor v = *this;
        for (uint32_t i = 0; i < ndims; i++) {
            if (uint64_t(view_offsets[i]) + view_shapes[i] > shapes[i]) return invalid();
            v.start_offset += uint64_t(view_offsets[i]) * strides[i];
            v.shapes[i] = view_shapes[i];
        }
        v.is_contiguous = v.row_major();
        return v;
    }

    /* The same elements as `n` dimensions of `new_shapes` (a contiguous tensor only). */
    ChipTensor reshape(const uint32_t new_shapes[], uint32_t n, bool manual_dep = false) const {
        (void)manual_dep;
        uint64_t total = 1;
        for (uint32_t i = 0; i < n; i++) total *= new_shapes[i];
        if (!is_contiguous || n == 0 || n > MAX_TENSOR_DIMS || total != numel()) return invalid();
        ChipTensor r = *this;
        r.ndims = n;
        r.set_row_major(new_shapes);
        return r;
    }

    /* Dimensions x and y swapped (a strided view). */
    ChipTensor transpose(uint32_t x, uint32_t y, bool manual_dep = false) const {
        (void)manual_dep;
        if (x >= ndims || y >= ndims) return invalid();
        ChipTensor t = *this;
        t.shapes[x] = shapes[y], t.shapes[y] = shapes[x];
        t.strides[x] = strides[y], t.strides[y] = strides[x];
        t.is_contiguous = t.row_major();
        return t;
    }

    /* Shapes `s` (ndims of them) with row-major strides. */
    void set_row_major(const uint32_t s[]) {
        uint32_t stride = 1;
        for (int32_t i = int32_t(ndims) - 1; i >= 0; i--) {
            shapes[i] = s[i];
            strides[i] = stride;
            stride *= s[i];
        }
        for (uint32_t i = ndims; i < MAX_TENSOR_DIMS; i++) shapes[i] = 1, strides[i] = 0;
        is_contiguous = true;
    }

    bool row_major() const {
        uint64_t expected = 1;
        for (int32_t i = int32_t(ndims) - 1; i >= 0; i--) {
            if (strides[i] != expected) return false;
            expected *= shapes[i];
        }
        return true;
    }

    static ChipTensor invalid() { return ChipTensor{}; }
#endif
} ChipTensor;

#ifdef __cplusplus
static_assert(sizeof(ChipTensor) == 72, "ChipTensor: 72 bytes, in C and C++");
#else
_Static_assert(sizeof(ChipTensor) == 72, "ChipTensor: 72 bytes, in C and C++");
#endif

#ifdef __cplusplus

/* A tensor over `ndims` of `shapes` elements of `dtype` at `addr`, row-major, the whole
 * buffer. `manual_dep` and `version` are accepted and ignored: dependencies are always
 * found through the tensors a task names. */
inline ChipTensor make_tensor_external(void *addr, const uint32_t shapes[], uint32_t ndims,
                                       DataType dtype = DataType::FLOAT32,
                                       bool manual_dep = false, int32_t version = 0) {
    (void)manual_dep, (void)version;
    if (ndims == 0 || ndims > MAX_TENSOR_DIMS) return ChipTensor::invalid();
    ChipTensor t{};
    t.ndims = ndims;
    t.dtype = dtype;
    t.set_row_major(shapes);
    t.buffer = {uint64_t(uintptr_t(addr)), t.nbytes()};
    return t;
}

/* An output the runtime allocates when the task naming it is submitted (from the ring's
 * output heap; freed once the task and its consumers finished and its scope ended),
 * optionally filled with an initial value first. */
struct TensorCreateInfo {
    uint32_t shapes[MAX_TENSOR_DIMS];
    uint32_t ndims;
    DataType dtype;
    bool has_initial_value;
    uint64_t initial_value; /* one element's bits, see to_u64 */

    TensorCreateInfo() = default;
    TensorCreateInfo(const uint32_t shapes_in[], uint32_t ndims_in,
                     DataType dtype_in = DataType::FLOAT32, bool manual_dep = false)
        : shapes{}, ndims(ndims_in), dtype(dtype_in), has_initial_value(false),
          initial_value(0) {
        (void)manual_dep;
        for (uint32_t i = 0; i < ndims_in && i < MAX_TENSOR_DIMS; i++) shapes[i] = shapes_in[i];
    }

    template <typename T = uint64_t>
    void set_initial_value(T value) {
        has_initial_value = true;
        initial_value = to_u64(value);
    }

    uint64_t buffer_size_bytes() const {
        uint64_t n = 1;
        for (uint32_t i = 0; i < ndims; i++) n *= shapes[i];
        return n * get_element_size(dtype);
    }
};

#endif /* __cplusplus */

#endif
