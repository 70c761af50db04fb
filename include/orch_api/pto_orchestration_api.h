/* The C++ runtime's orchestration API over this runtime's ops table: an orchestration
 * written for it (including "pto_orchestration_api.h" and defining aicpu_orchestration_entry)
 * builds against this directory unchanged, as a shared object pto-launch runs. C++17.
 * What is covered and what is not: docs/orchestration-api.md.
 *
 *   pto_api_dtype.h      element types, to_u64 / from_u64
 *   pto_api_tensor.h     ChipTensor, views, make_tensor_external, TensorCreateInfo
 *   pto_api_task_args.h  CoreTaskArgs, MixedKernels, TaskOutputTensors, ChipTaskArgs
 *   pto_api_log.h        the error model, LOG_*, rt_report_fatal
 *   pto_api_tile.h       a ChipTensor as the runtime's tile
 *   pto_api_submit.h     rt_submit_aic/aiv/task, rt_submit_dummy_task
 *   pto_api_scope.h      PTO2_SCOPE, PTO2_SCOPE_GUARD, rt_scope_begin/end
 *   pto_api_data.h       get_tensor_data, set_tensor_data
 *   pto_api_graph.h      rt_submit_graph: a function's tasks recorded once, replayed per call
 *   pto_api_entry.h      pto_orchestrate: the launcher's words to the entry's arguments */
#ifndef PTO_ORCHESTRATION_API_H
#define PTO_ORCHESTRATION_API_H

#include "pto_api_data.h"
#include "pto_api_graph.h"
#include "pto_api_scope.h"
#include "pto_api_submit.h"
#include "pto_api_entry.h"

#endif
