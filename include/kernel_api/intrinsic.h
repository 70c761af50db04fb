/* The name the C++ runtime's kernels include for their contexts: pto_kernel_api.h. */
#include "pto_kernel_api.h"
