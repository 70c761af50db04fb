/* The C++ runtime's orchestration API over this runtime's ops table: an orchestration
 * written for it (including "pto_orchestration_api.h" and defining aicpu_orchestration_entry)
 * builds against this directory unchanged, as a shared object pto-launch runs. C++17.
 * What is covered and what is not: docs/orchestration-api.md.
 *
 *   pto_api_dtype.h      element types, to_u64 / from_u64
 *   pto_api_tensor.h     ChipTensor, views, make_tensor_external, TensorCreateInfo
 *   pto_api_task_args.h  CoreTaskArgs, MixedKernels, TaskOutputTensors, ChipTaskArgs
 *   pto_api_runtime.h    submits, scopes, get/set_tensor_data, LOG_*, rt_report_fatal
 *   pto_api_entry.h      pto_orchestrate: the launcher's words to the entry's arguments */
#ifndef PTO_ORCHESTRATION_API_H
#define PTO_ORCHESTRATION_API_H

#include "pto_api_runtime.h"
#include "pto_api_entry.h"

#endif
