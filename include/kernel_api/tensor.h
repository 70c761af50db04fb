/* The name the C++ runtime's kernels include for ChipTensor: pto_kernel_api.h. */
#include "pto_kernel_api.h"
