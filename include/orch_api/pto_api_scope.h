/* Scopes: the tasks submitted inside one are reclaimed (and their runtime-allocated outputs
 * freed) only once it ended. AUTO only: a MANUAL scope is refused at run time. */
#ifndef PTO_API_SCOPE_H
#define PTO_API_SCOPE_H

#include "pto_api_log.h"

enum class PTO2ScopeMode : uint8_t { AUTO = 0, MANUAL = 1 };

inline void rt_scope_begin(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
    if (rt_is_fatal()) return;
    if (mode != PTO2ScopeMode::AUTO) {
        pto_api_fail(PTO2_ERROR_INVALID_ARGS, __FUNCTION__,
                     "a MANUAL scope: this runtime finds dependencies through tensors only, "
                     "so it has no scope without them (docs/orchestration-api.md)");
        return;
    }
    pto_api_ok(pto_api_state.ops->scope_begin(pto_api_state.ops->ctx), __FUNCTION__,
               "scope begin");
}

inline void rt_scope_end() {
    if (rt_is_fatal()) return;
    pto_api_ok(pto_api_state.ops->scope_end(pto_api_state.ops->ctx), __FUNCTION__, "scope end");
}

/* A scope from its construction to its destruction. */
class PTO2ScopeGuard {
public:
    explicit PTO2ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
        rt_scope_begin(mode);
        open_ = !rt_is_fatal();
    }
    ~PTO2ScopeGuard() {
        if (open_) rt_scope_end();
    }
    PTO2ScopeGuard(const PTO2ScopeGuard &) = delete;
    PTO2ScopeGuard &operator=(const PTO2ScopeGuard &) = delete;

private:
    bool open_;
};

#define PTO_API_CAT2(a, b) a##b
#define PTO_API_CAT(a, b) PTO_API_CAT2(a, b)
/* A scope until the end of the enclosing block. */
#define PTO2_SCOPE_GUARD(...) \
    [[maybe_unused]] PTO2ScopeGuard PTO_API_CAT(pto_api_scope_, __COUNTER__) { __VA_ARGS__ }
/* A scope around the statement or block that follows. */
#define PTO2_SCOPE(...) \
    if (PTO2ScopeGuard PTO_API_CAT(pto_api_scope_, __COUNTER__){__VA_ARGS__}; true)

#endif
