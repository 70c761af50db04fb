/* caps.c, declaring the capacities it needs. */
#include "caps.c"

PTO_ORCHESTRATION_CONFIG(.max_deps = 32, .max_args = 20, .task_window = 256);
