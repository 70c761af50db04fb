/* An orchestration SO that exports its entry under the wrong name: libpto_aicpu.so must
 * refuse it with a clear error (no `pto_orchestrate`). */
#include "pto_aicpu.h"

int32_t pto_orchestrate_v2(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    (void)ops;
    (void)args;
    (void)nargs;
    return 0;
}
