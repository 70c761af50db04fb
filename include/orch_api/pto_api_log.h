/* The compatibility API's error model and logging. The first refusal (a submit, alloc,
 * scope or wait the runtime refused, or a task this layer cannot express) logs a sentence
 * and makes the run fatal; every later call does nothing (a submit returns no outputs, a
 * read 0), and the orchestration function returns that code, which fails the run. Logs go
 * to stderr. */
#ifndef PTO_API_LOG_H
#define PTO_API_LOG_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "pto_aicpu.h"

/* Fatal codes of the orchestration itself (the runtime's own statuses are negative). */
#define PTO2_ERROR_NONE 0
#define PTO2_ERROR_INVALID_ARGS 5
#define PTO2_ERROR_TENSOR_WAIT_TIMEOUT 8
#define PTO2_ERROR_EXPLICIT_ORCH_FATAL 9

/* The run this SO orchestrates: one at a time, on one thread. */
struct PtoApiRecording;
struct PtoApiState {
    const PtoOrchOps *ops;
    int32_t fatal; /* 0, or the first fatal code */
    /* While rt_submit_graph counts or records a graph function's tasks: where they go
     * instead of the runtime (null: they are submitted). */
    PtoApiRecording *recording;
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
    if (pto_api_state.fatal == 0) {
        pto_api_state.fatal = code ? code : PTO2_ERROR_EXPLICIT_ORCH_FATAL;
    }
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

#endif
