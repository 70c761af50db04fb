/* caps.c, declaring more dependencies than the runtime allows. */
#include "caps.c"

PTO_ORCHESTRATION_CONFIG(.max_deps = 100);
