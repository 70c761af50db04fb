/* What the fake CANN's files share: the call gate (counts calls, fails the ones asked
 * for), the counts of live resources, the recent error message, the codes it returns. */
#ifndef FAKE_INTERNAL_H
#define FAKE_INTERNAL_H

#include <stdint.h>

#define FAKE_FAIL 507899      /* what an injected failure returns */
#define FAKE_BAD_PARAM 107000 /* ACL_ERROR_RT_PARAM_INVALID */
#define FAKE_AICPU_EXCEPTION 507018
#define FAKE_STREAM_TIMEOUT 507046
#define FAKE_NO_MEMORY 207001

/* Live resource kinds (fake_cann_live names them). */
enum fake_kind {
    FK_INIT,
    FK_DEVICE,
    FK_PHYSICAL,
    FK_RESERVED,
    FK_MAPPED,
    FK_COMM,
    FK_MEMORY,
    FK_STREAM,
    FK_CPU_BINARY,
    FK_AICORE_BINARY,
    FK_THREADS,
    FK_COUNT
};

/* Counts a call of `fn`; non-zero if it is one to fail (its message is then set). */
int fake_enter(const char *fn);
#define FAKE_ENTER() fake_enter(__func__)
void fake_live_add(enum fake_kind kind, long delta);
long fake_live_get(enum fake_kind kind);
/* Sets this thread's recent error message (printf-style); returns `code`. */
int fake_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The directory CANN's AICPU process loads kernel SOs from (made on first use). */
const char *fake_preinstall_dir(void);

/* Streams (fake_stream.c): a job runs `threads` calls of `fn(ctx, index)` once the
 * stream's earlier jobs are done; a non-zero return fails the stream with `error_code` at
 * its next synchronisation. `done(ctx)` runs once all calls returned, then `ctx` is
 * forgotten. */
typedef uint32_t (*fake_job_fn)(void *ctx, uint32_t index);
int fake_stream_submit(void *stream, uint32_t threads, fake_job_fn fn, void *ctx,
                       void (*done)(void *ctx), int error_code);
int fake_stream_device(void *stream);

/* The AICore side (fake_aicore.c): stops every executor still waiting (a reset). */
void fake_aicore_stop_all(int device);

#endif
