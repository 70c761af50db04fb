/* The compatibility API's calls, over the runtime's orchestration ops table (pto_aicpu.h):
 * submits, scopes, reading and writing a tensor's element, logging and fatal errors.
 *
 * Errors: the first refusal (a submit, alloc, scope or settle the runtime refused, or a task
 * this layer cannot express) logs a sentence and makes the run fatal; every later call does
 * nothing (a submit returns no outputs, a read 0), and the orchestration function returns
 * that code, which fails the run. */
#ifndef PTO_API_RUNTIME_H
#define PTO_API_RUNTIME_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pto_aicpu.h"
#include "pto_api_task_args.h"

/* Fatal codes of the orchestration itself (the runtime's own statuses are negative). */
#define PTO2_ERROR_NONE 0
#define PTO2_ERROR_INVALID_ARGS 5
#define PTO2_ERROR_TENSOR_WAIT_TIMEOUT 8
#define PTO2_ERROR_EXPLICIT_ORCH_FATAL 9

enum class PTO2ScopeMode : uint8_t { AUTO = 0, MANUAL = 1 };

/* The run this SO orchestrates: one at a time, on one thread. */
struct PtoApiState {
    const PtoOrchOps *ops;
    int32_t fatal; /* 0, or the first fatal code */
};
inline PtoApiState pto_api_state;

inline void pto_api_vlog(const char *level, const char *func, const char *fmt, va_list ap) {
    fprintf(stderr, "[orchestration] %s %s: ", level, func);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

__attribute__((format(printf, 3, 4))) inline void pto_api_log(const char *level,
                                                              const char *func,
                                                              const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pto_api_vlog(level, func, fmt, ap);
    va_end(ap);
}

/* Makes the run fatal with `code` (0 becomes PTO2_ERROR_EXPLICIT_ORCH_FATAL), saying why;
 * only the first code is kept. */
__attribute__((format(printf, 3, 4))) inline void pto_api_fail(int32_t code, const char *func,
                                                               const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pto_api_vlog("FATAL", func, fmt, ap);
    va_end(ap);
    if (pto_api_state.fatal == 0) pto_api_state.fatal = code ? code : PTO2_ERROR_EXPLICIT_ORCH_FATAL;
}

inline bool rt_is_fatal() { return pto_api_state.fatal != 0; }

/* False (and the run fatal, naming `what` and the runtime's sentence) unless `st` is 0. */
inline bool pto_api_ok(int32_t st, const char *func, const char *what) {
    if (st == 0) return true;
    pto_api_fail(st, func, "%s refused: %s (%d)", what, pto_api_state.ops->status_str(st), st);
    return false;
}

#define LOG_ERROR(fmt, ...) pto_api_log("ERROR", __FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_WARN(fmt, ...) pto_api_log("WARN", __FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_INFO(fmt, ...) pto_api_log("INFO", __FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_TIMING(fmt, ...) pto_api_log("TIMING", __FUNCTION__, fmt, ##__VA_ARGS__)
#ifdef PTO_API_LOG_DEBUG
#define LOG_DEBUG(fmt, ...) pto_api_log("DEBUG", __FUNCTION__, fmt, ##__VA_ARGS__)
#else
#define LOG_DEBUG(fmt, ...) ((void)0)
#endif
#define rt_report_fatal(code, fmt, ...) pto_api_fail((code), __FUNCTION__, fmt, ##__VA_ARGS__)

#include "pto_api_tile.h"
#include "pto_api_submit.h"

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

/* Element `indices` (ndims of them) of `t`, once every task writing it finished; its bytes
 * zero-extended to a word, as a T (see from_u64). */
template <typename T = uint64_t>
inline T get_tensor_data(const ChipTensor &t, uint32_t ndims, const uint32_t indices[]) {
    PtoTensorArg arg;
    if (rt_is_fatal() || !pto_api_element(t, ndims, indices, 0, &arg, __FUNCTION__)) {
        return from_u64<T>(0);
    }
    if (!pto_api_ok(pto_api_state.ops->settle(pto_api_state.ops->ctx, &arg), __FUNCTION__,
                    "waiting for the element's writers")) {
        return from_u64<T>(0);
    }
    uint64_t w = 0;
    memcpy(&w, reinterpret_cast<const void *>(uintptr_t(arg.base)), arg.elem);
    return from_u64<T>(w);
}

/* Writes `value` (its low bytes, see to_u64) to element `indices` of `t`, once every task
 * reading or writing it finished. */
template <typename T = uint64_t>
inline void set_tensor_data(const ChipTensor &t, uint32_t ndims, const uint32_t indices[],
                            T value) {
    PtoTensorArg arg;
    if (rt_is_fatal() || !pto_api_element(t, ndims, indices, 1, &arg, __FUNCTION__)) return;
    if (!pto_api_ok(pto_api_state.ops->settle(pto_api_state.ops->ctx, &arg), __FUNCTION__,
                    "waiting for the element's readers and writers")) {
        return;
    }
    uint64_t w = to_u64(value);
    memcpy(reinterpret_cast<void *>(uintptr_t(arg.base)), &w, arg.elem);
    pto_api_ok(pto_api_state.ops->wrote(pto_api_state.ops->ctx, &arg), __FUNCTION__,
               "publishing the element written");
}

#endif
