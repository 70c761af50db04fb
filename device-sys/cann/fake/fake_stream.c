/* The fake's streams: launches run asynchronously, in order per stream, each on its own
 * threads; synchronising waits (bounded) for them and reports the first failure: the job's
 * error code (507018 for an AICPU kernel that returned non-zero), 507014 for a job that ran
 * past the op-execute timeout, 507046 when the stream did not finish in time. Also the
 * device-wide calls around streams: synchronising the device, the op-execute timeout, the
 * cores a stream may use. Destroying a stream waits (bounded) for its jobs; one that does
 * not end in time stays counted as live, so a test sees it. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../pto_cann.h"
#include "fake_internal.h"

#define MAX_STREAMS 64
#define DESTROY_WAIT_MS 10000

int fake_current_device(void);

struct stream {
    int device;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t submitted, finished; /* jobs, in order */
    uint64_t running_since_ns;    /* start of the job running now (0: none) */
    int error;                    /* sticky: the first failure */
    char error_msg[256];
};

struct job {
    struct stream *s;
    uint64_t seq;
    uint32_t threads;
    fake_job_fn fn;
    void *ctx;
    void (*done)(void *);
    int error_code;
};

struct call {
    struct job *j;
    uint32_t index;
    uint32_t rc;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct stream *streams[MAX_STREAMS];
static uint64_t op_timeout_us = 0; /* 0: none set */

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static struct timespec deadline_in(int32_t ms) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static int known(struct stream *s) {
    for (int i = 0; i < MAX_STREAMS; i++)
        if (s && streams[i] == s) return 1;
    return 0;
}

static void *call_main(void *p) {
    struct call *c = p;
    c->rc = c->j->fn(c->j->ctx, c->index);
    return NULL;
}

static void *job_main(void *p) {
    struct job *j = p;
    struct stream *s = j->s;
    pthread_mutex_lock(&s->mu);
    while (s->finished != j->seq) pthread_cond_wait(&s->cv, &s->mu);
    s->running_since_ns = now_ns();
    pthread_mutex_unlock(&s->mu);
    struct call *calls = calloc(j->threads, sizeof *calls);
    pthread_t *ts = calloc(j->threads, sizeof *ts);
    uint32_t started = 0, failed = 0, first_rc = 0;
    if (calls && ts) {
        for (uint32_t i = 0; i < j->threads; i++) {
            calls[i] = (struct call){j, i, 0};
            if (pthread_create(&ts[i], NULL, call_main, &calls[i]) != 0) break;
            started++;
        }
        for (uint32_t i = 0; i < started; i++) {
            pthread_join(ts[i], NULL);
            if (calls[i].rc && !failed++) first_rc = calls[i].rc;
        }
    }
    if (j->done) j->done(j->ctx);
    /* Counted out before the stream sees the job end: nothing of it is live after. */
    fake_live_add(FK_THREADS, -1);
    pthread_mutex_lock(&s->mu);
    if (!s->error && (started < j->threads || failed)) {
        s->error = started < j->threads ? FAKE_FAIL : j->error_code;
        if (started < j->threads)
            snprintf(s->error_msg, sizeof s->error_msg, "fake CANN: could not start the launch's threads");
        else
            snprintf(s->error_msg, sizeof s->error_msg,
                     "fake CANN: %u of %u kernel threads returned non-zero (first: %u)", failed,
                     j->threads, first_rc);
    }
    s->finished++;
    s->running_since_ns = 0;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    free(calls);
    free(ts);
    free(j);
    return NULL;
}

int fake_stream_submit(void *stream, uint32_t threads, fake_job_fn fn, void *ctx,
                       void (*done)(void *), int error_code) {
    struct stream *s = stream;
    pthread_mutex_lock(&mu);
    int ok = known(s);
    pthread_mutex_unlock(&mu);
    if (!ok) return fake_error(FAKE_BAD_PARAM, "fake CANN: not a stream: %p", stream);
    struct job *j = calloc(1, sizeof *j);
    if (!j) return FAKE_FAIL;
    pthread_mutex_lock(&s->mu);
    *j = (struct job){s, s->submitted, threads, fn, ctx, done, error_code};
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, job_main, j);
    pthread_attr_destroy(&attr);
    if (rc == 0) {
        s->submitted++;
        fake_live_add(FK_THREADS, 1);
    }
    pthread_mutex_unlock(&s->mu);
    if (rc != 0) {
        free(j);
        return fake_error(FAKE_FAIL, "fake CANN: no thread for the launch");
    }
    return 0;
}

int fake_stream_device(void *stream) { return ((struct stream *)stream)->device; }

aclError aclrtCreateStream(aclrtStream *stream) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    if (!stream) return FAKE_BAD_PARAM;
    int dev = fake_current_device();
    if (dev < 0) return fake_error(107003, "fake CANN: aclrtCreateStream before aclrtSetDevice on this thread");
    struct stream *s = calloc(1, sizeof *s);
    if (!s) return FAKE_FAIL;
    s->device = dev;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_lock(&mu);
    int slot = -1;
    for (int i = 0; i < MAX_STREAMS && slot < 0; i++)
        if (!streams[i]) slot = i;
    if (slot >= 0) streams[slot] = s;
    pthread_mutex_unlock(&mu);
    if (slot < 0) {
        free(s);
        return fake_error(FAKE_FAIL, "fake CANN: too many streams");
    }
    fake_live_add(FK_STREAM, 1);
    *stream = s;
    return ACL_SUCCESS;
}

/* Waits for `s` until `ms` (-1: forever); the stream's status. */
static int wait_stream(struct stream *s, int32_t ms) {
    struct timespec until = deadline_in(ms < 0 ? 0 : ms);
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    while (s->finished != s->submitted && rc == 0) {
        if (op_timeout_us && s->running_since_ns &&
            now_ns() - s->running_since_ns > op_timeout_us * 1000u) {
            pthread_mutex_unlock(&s->mu);
            return fake_error(507014, "fake CANN: a kernel ran past the op-execute timeout of %llu us",
                              (unsigned long long)op_timeout_us);
        }
        if (ms < 0) {
            pthread_cond_wait(&s->cv, &s->mu);
        } else {
            /* Wake at least every 10 ms to look at the op-execute timeout. */
            struct timespec step = deadline_in(10);
            int past = step.tv_sec > until.tv_sec ||
                       (step.tv_sec == until.tv_sec && step.tv_nsec > until.tv_nsec);
            int w = pthread_cond_timedwait(&s->cv, &s->mu, past ? &until : &step);
            if (w == ETIMEDOUT && past) rc = ETIMEDOUT;
        }
    }
    int err = s->error;
    char msg[256];
    memcpy(msg, s->error_msg, sizeof msg);
    int pending = s->finished != s->submitted;
    pthread_mutex_unlock(&s->mu);
    if (pending)
        return fake_error(FAKE_STREAM_TIMEOUT, "fake CANN: the stream did not finish within %d ms", ms);
    if (err) return fake_error(err, "%s", msg);
    return 0;
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    pthread_mutex_lock(&mu);
    int ok = known(stream);
    pthread_mutex_unlock(&mu);
    if (!ok) return fake_error(FAKE_BAD_PARAM, "fake CANN: not a stream: %p", stream);
    return wait_stream(stream, timeout);
}

aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    int dev = fake_current_device();
    struct stream *mine[MAX_STREAMS];
    int n = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAX_STREAMS; i++)
        if (streams[i] && streams[i]->device == dev) mine[n++] = streams[i];
    pthread_mutex_unlock(&mu);
    int first = 0;
    for (int i = 0; i < n; i++) {
        int rc = wait_stream(mine[i], timeout);
        if (rc && !first) first = rc;
    }
    return first;
}

aclError aclrtDestroyStream(aclrtStream stream) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    struct stream *s = stream;
    pthread_mutex_lock(&mu);
    int ok = known(s);
    pthread_mutex_unlock(&mu);
    if (!ok) return fake_error(FAKE_BAD_PARAM, "fake CANN: not a stream: %p", stream);
    struct timespec until = deadline_in(DESTROY_WAIT_MS);
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    while (s->finished != s->submitted && rc == 0)
        rc = pthread_cond_timedwait(&s->cv, &s->mu, &until);
    int pending = s->finished != s->submitted;
    pthread_mutex_unlock(&s->mu);
    if (pending)
        return fake_error(FAKE_FAIL, "fake CANN: the stream's kernels did not end: it stays");
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAX_STREAMS; i++)
        if (streams[i] == s) streams[i] = NULL;
    pthread_mutex_unlock(&mu);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
    fake_live_add(FK_STREAM, -1);
    return ACL_SUCCESS;
}

aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    if (!actualTimeout) return FAKE_BAD_PARAM;
    pthread_mutex_lock(&mu);
    op_timeout_us = timeout;
    pthread_mutex_unlock(&mu);
    *actualTimeout = timeout;
    return ACL_SUCCESS;
}

/* Cores per chip: FAKE_CANN_CLUSTERS (default 24) cube cores, twice as many vector cores. */
uint32_t fake_clusters(void) {
    const char *v = getenv("FAKE_CANN_CLUSTERS");
    long n = v ? strtol(v, NULL, 10) : 24;
    return n > 0 && n <= 25 ? (uint32_t)n : 24u;
}

aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t *value) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    pthread_mutex_lock(&mu);
    int ok = stream == NULL || known(stream);
    pthread_mutex_unlock(&mu);
    if (!ok || !value) return FAKE_BAD_PARAM;
    if (type == ACL_RT_DEV_RES_CUBE_CORE) *value = fake_clusters();
    else if (type == ACL_RT_DEV_RES_VECTOR_CORE) *value = 2 * fake_clusters();
    else return FAKE_BAD_PARAM;
    return ACL_SUCCESS;
}
