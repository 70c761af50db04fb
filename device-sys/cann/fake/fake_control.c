/* The fake CANN's control: a gate every call passes (counted; the n-th call from now, or
 * the n-th call of a named function, fails), the counts of live resources, and the recent
 * error message aclGetRecentErrMsg returns.
 *
 * Control functions (looked up by the tests): fake_cann_fail_at(n) (the n-th call from now
 * that is not a release: see `releases`), fake_cann_fail_call(name, nth) (nth 1: its next
 * call; 0 clears), fake_cann_calls(), fake_cann_forward_calls() (calls but releases),
 * fake_cann_calls_of(name), fake_cann_live(kind) (NULL: all kinds). FAKE_CANN_FAIL=name[:nth] in the environment
 * does what fake_cann_fail_call does, from the first call on. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_internal.h"

#define MAX_NAMES 96

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long calls, forward_calls, fail_at;

/* Calls that give something back. fail_at does not count them (their failures are ignored
 * by design: nothing can be done about them but a leak); by name they fail like any. */
static const char *const releases[] = {
    "aclFinalize", "aclrtResetDevice", "aclrtResetDeviceForce", "aclrtFreePhysical",
    "aclrtReleaseMemAddress", "aclrtUnmapMem", "aclrtFree", "aclrtDestroyStream",
    "rtsBinaryUnload", "rtDevBinaryUnRegister", "HcclCommDestroy",
    "aclrtSynchronizeDeviceWithTimeout",
};

static int is_release(const char *fn) {
    for (size_t i = 0; i < sizeof releases / sizeof releases[0]; i++)
        if (!strcmp(fn, releases[i])) return 1;
    return 0;
}
static long live[FK_COUNT];
static char fail_name[64];
static long fail_nth; /* calls of fail_name left before the failing one (1: the next) */
static int env_read;
static struct {
    char name[48];
    long calls;
} per_name[MAX_NAMES];
static __thread char recent[512];

static const char *const kind_names[FK_COUNT] = {
    "init", "device", "physical", "reserved", "mapped", "comm",
    "memory", "stream", "cpu_binary", "aicore_binary", "threads",
};

static void read_env_locked(void) {
    if (env_read) return;
    env_read = 1;
    const char *v = getenv("FAKE_CANN_FAIL");
    if (!v || !*v) return;
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    if (n >= sizeof fail_name) n = sizeof fail_name - 1;
    memcpy(fail_name, v, n);
    fail_name[n] = 0;
    fail_nth = colon ? atol(colon + 1) : 1;
}

static void count_name_locked(const char *fn) {
    for (int i = 0; i < MAX_NAMES; i++) {
        if (!per_name[i].name[0]) {
            snprintf(per_name[i].name, sizeof per_name[i].name, "%s", fn);
        }
        if (!strcmp(per_name[i].name, fn)) {
            per_name[i].calls++;
            return;
        }
    }
}

int fake_enter(const char *fn) {
    pthread_mutex_lock(&mu);
    read_env_locked();
    calls++;
    count_name_locked(fn);
    int fail = 0;
    if (!is_release(fn)) fail = fail_at > 0 && ++forward_calls == fail_at;
    if (!fail && fail_nth > 0 && !strcmp(fn, fail_name) && --fail_nth == 0) fail = 1;
    pthread_mutex_unlock(&mu);
    if (fail) fake_error(FAKE_FAIL, "fake CANN: %s failed because the test asked it to", fn);
    return fail;
}

int fake_error(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(recent, sizeof recent, fmt, ap);
    va_end(ap);
    return code;
}

void fake_live_add(enum fake_kind kind, long delta) {
    pthread_mutex_lock(&mu);
    live[kind] += delta;
    pthread_mutex_unlock(&mu);
}

long fake_live_get(enum fake_kind kind) {
    pthread_mutex_lock(&mu);
    long n = live[kind];
    pthread_mutex_unlock(&mu);
    return n;
}

const char *aclGetRecentErrMsg(void) {
    /* Not gated: it reports on the other calls. Cleared once read, as ACL does. */
    static __thread char copy[sizeof recent];
    memcpy(copy, recent, sizeof recent);
    recent[0] = 0;
    return copy[0] ? copy : NULL;
}

int fake_cann_fail_at(long n) {
    pthread_mutex_lock(&mu);
    fail_at = n > 0 ? forward_calls + n : 0;
    pthread_mutex_unlock(&mu);
    return 0;
}

int fake_cann_fail_call(const char *name, long nth) {
    pthread_mutex_lock(&mu);
    env_read = 1;
    snprintf(fail_name, sizeof fail_name, "%s", name ? name : "");
    fail_nth = name ? nth : 0;
    pthread_mutex_unlock(&mu);
    return 0;
}

long fake_cann_calls(void) {
    pthread_mutex_lock(&mu);
    long c = calls;
    pthread_mutex_unlock(&mu);
    return c;
}

long fake_cann_forward_calls(void) {
    pthread_mutex_lock(&mu);
    long c = forward_calls;
    pthread_mutex_unlock(&mu);
    return c;
}

long fake_cann_calls_of(const char *name) {
    long c = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAX_NAMES; i++)
        if (!strcmp(per_name[i].name, name)) c = per_name[i].calls;
    pthread_mutex_unlock(&mu);
    return c;
}

long fake_cann_live(const char *kind) {
    long n = 0;
    pthread_mutex_lock(&mu);
    if (!kind) {
        for (int i = 0; i < FK_COUNT; i++) n += live[i];
    } else {
        n = -1;
        for (int i = 0; i < FK_COUNT; i++)
            if (!strcmp(kind, kind_names[i])) n = live[i];
    }
    pthread_mutex_unlock(&mu);
    return n;
}

static char preinstall[256];
static pthread_once_t preinstall_once = PTHREAD_ONCE_INIT;

static void make_preinstall(void) {
    const char *env = getenv("FAKE_CANN_PREINSTALL");
    if (env && *env) snprintf(preinstall, sizeof preinstall, "%s", env);
    else snprintf(preinstall, sizeof preinstall, "/tmp/fake-cann-%d", (int)getpid());
    if (mkdir(preinstall, 0755) != 0 && errno != EEXIST) preinstall[0] = 0;
}

const char *fake_preinstall_dir(void) {
    pthread_once(&preinstall_once, make_preinstall);
    return preinstall;
}

/* The preinstall directory is the process's (as the device's is the AICPU process's):
 * removed when the process ends. */
__attribute__((destructor)) static void remove_preinstall(void) {
    if (!preinstall[0] || getenv("FAKE_CANN_PREINSTALL")) return;
    DIR *d = opendir(preinstall);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", preinstall, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(preinstall);
}
