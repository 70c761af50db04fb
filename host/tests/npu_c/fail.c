/* A kernel as raw code: args code; fails the task with `code`. */
#include "pto_aicore.h"

void pto_kernel_entry(int64_t *args) { pto_kernel_fail(args, (uint32_t)args[0]); }
