/* Element types of the compatibility API, and the bit casts between a value and the 64-bit
 * word it travels in (a scalar argument, a get/set_tensor_data value). Shared by the
 * orchestration side (pto_orchestration_api.h) and the kernel side (pto_kernel_api.h).
 * C++17. */
#ifndef PTO_API_DTYPE_H
#define PTO_API_DTYPE_H

#include <stdint.h>

#include <type_traits>

/* The element types, numbered as the launcher's argument words give them. */
enum class DataType : uint8_t {
    FLOAT32 = 0,
    FLOAT16 = 1,
    INT32 = 2,
    INT16 = 3,
    INT8 = 4,
    UINT8 = 5,
    BFLOAT16 = 6,
    INT64 = 7,
    UINT64 = 8,
    UINT16 = 9,
    UINT32 = 10,
    BOOL = 11,
    DATA_TYPE_NUM = 12,
};

/* Bytes per element of `t`; 0 for a value that is no type. */
inline uint64_t get_element_size(DataType t) {
    switch (t) {
    case DataType::INT8:
    case DataType::UINT8:
    case DataType::BOOL:
        return 1;
    case DataType::FLOAT16:
    case DataType::INT16:
    case DataType::BFLOAT16:
    case DataType::UINT16:
        return 2;
    case DataType::FLOAT32:
    case DataType::INT32:
    case DataType::UINT32:
        return 4;
    case DataType::INT64:
    case DataType::UINT64:
        return 8;
    default:
        return 0;
    }
}

/* A value as a word: a floating-point value keeps its bits (zero-extended), an integer or
 * enum converts (a signed one sign-extends). The builtin copy needs no libc (kernels built
 * freestanding reach these too). */
template <typename T>
inline uint64_t to_u64(T value) {
    static_assert(sizeof(T) <= 8, "to_u64: a value of at most 8 bytes");
    if constexpr (std::is_floating_point_v<T>) {
        uint64_t w = 0;
        __builtin_memcpy(&w, &value, sizeof(T));
        return w;
    } else if constexpr (std::is_enum_v<T>) {
        return static_cast<uint64_t>(static_cast<std::underlying_type_t<T>>(value));
    } else {
        return static_cast<uint64_t>(value);
    }
}

/* The inverse of to_u64: the low bytes of `w` as a T. */
template <typename T>
inline T from_u64(uint64_t w) {
    static_assert(sizeof(T) <= 8, "from_u64: a value of at most 8 bytes");
    if constexpr (std::is_floating_point_v<T>) {
        T v;
        __builtin_memcpy(&v, &w, sizeof(T));
        return v;
    } else {
        return static_cast<T>(w);
    }
}

#endif
