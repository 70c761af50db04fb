/* A runtime image in C: it provides the machine (three cores played by threads, a status
 * word and two payload buffers each) and runs DAGs through the C ABI of the scheduler core.
 * Exits 0 only if every check passed; prints what failed otherwise. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pto_runtime.h"

#define CORES 3
#define SLOTS 512

enum { WRITE = 0, CHAIN = 1, FAIL = 2, KERNELS = 3 };

struct payload {
    uint64_t task;
    uint32_t kernel;
    uint64_t args[8];
    size_t nargs;
};

struct core {
    _Atomic uint32_t doorbell[2];
    struct payload payload[2];
    _Atomic uint32_t status;
    _Atomic uint64_t result[2];
};

struct machine {
    struct core cores[CORES];
    _Atomic int stop;
    _Atomic uint64_t mem[SLOTS];
};

static int failures;
#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__);                           \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fprintf(stderr, "\n");                                                           \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void pause_us(long us) {
    struct timespec t = {0, us * 1000};
    nanosleep(&t, NULL);
}

/* Platform callbacks. */
static uint64_t cb_now(void *ctx) { (void)ctx; return now_ns(); }

static void cb_write_payload(void *ctx, uint16_t core, uint32_t token, const PtoPayload *p) {
    struct machine *m = ctx;
    struct payload *b = &m->cores[core].payload[token & 1];
    b->task = p->task;
    b->kernel = p->kernel;
    b->nargs = p->nargs < 8 ? p->nargs : 8;
    memcpy(b->args, p->args, b->nargs * sizeof(uint64_t));
}

static void cb_ring(void *ctx, uint16_t core, uint32_t token) {
    struct machine *m = ctx;
    atomic_store_explicit(&m->cores[core].doorbell[token & 1], token, memory_order_release);
}

static uint32_t cb_status(void *ctx, uint16_t core) {
    struct machine *m = ctx;
    return atomic_load_explicit(&m->cores[core].status, memory_order_acquire);
}

static uint64_t cb_result(void *ctx, uint16_t core, uint32_t token) {
    struct machine *m = ctx;
    return atomic_load_explicit(&m->cores[core].result[token & 1], memory_order_relaxed);
}

static void cb_spin(void *ctx) { (void)ctx; sched_yield(); }

/* A core: runs the tokens its doorbell brings, in order. */
struct core_arg { struct machine *m; int id; };

static void *core_main(void *arg) {
    struct core_arg *a = arg;
    struct machine *m = a->m;
    struct core *c = &m->cores[a->id];
    uint32_t next = 1;
    while (!atomic_load_explicit(&m->stop, memory_order_acquire)) {
        if (atomic_load_explicit(&c->doorbell[next & 1], memory_order_acquire) != next) {
            sched_yield();
            continue;
        }
        struct payload *p = &c->payload[next & 1];
        atomic_store_explicit(&c->status, next, memory_order_release); /* ACK */
        uint64_t failed = 0, code = 0;
        switch (p->kernel) {
        case WRITE:
            atomic_store(&m->mem[p->args[0]], p->args[1]);
            break;
        case CHAIN: {
            /* Slow enough that a hop started before its predecessor finished would read
             * what is not there yet. */
            uint64_t before = atomic_load(&m->mem[p->args[0] - 1]);
            pause_us(50);
            atomic_store(&m->mem[p->args[0]], before + 1);
            break;
        }
        default:
            /* Slow enough that a consumer started without waiting would run meanwhile. */
            pause_us(2000);
            failed = 1;
            code = 42;
        }
        /* The token's result first, then its FIN: a later report never erases a result. */
        atomic_store_explicit(&c->result[next & 1], (uint64_t)next | (failed << 31) | (code << 32),
                              memory_order_relaxed);
        atomic_store_explicit(&c->status, next | (1u << 31), memory_order_release);
        next = next >= 0x7fffffefu ? 1 : next + 1;
    }
    return NULL;
}

struct sched_arg { PtoRuntime *rt; PtoPlatform *p; PtoStatus result; };

static void *sched_main(void *arg) {
    struct sched_arg *s = arg;
    s->result = pto_scheduler_run(s->rt, s->p, 0);
    return NULL;
}

/* One run: submits what `submit` asks, returns the scheduler's status and the report. */
static PtoStatus run(struct machine *m, void (*submit)(PtoOrchestrator *), PtoReport *report) {
    memset(m, 0, sizeof *m);
    PtoConfig cfg;
    CHECK(pto_config_default(&cfg) == PTO_OK, "config_default");
    cfg.aic_cores = 1;
    cfg.aiv_cores = 2;
    cfg.schedulers = 1;
    cfg.task_window = 64;
    cfg.max_args = 4;
    size_t size = 0;
    CHECK(pto_region_size(&cfg, &size) == PTO_OK && size > 0, "region_size");
    uint8_t *region = aligned_alloc(64, (size + 63) / 64 * 64);
    static PtoRuntime rt;
    CHECK(pto_runtime_init(&rt, region + 8, size, &cfg) == PTO_ERR_CONFIG,
          "a misaligned region is refused");
    CHECK(pto_runtime_init(&rt, region, size, &cfg) == PTO_OK, "runtime_init");

    PtoPlatform p = {0};
    p.ctx = m;
    p.ticks_per_us = 1000;
    p.kernels = KERNELS;
    p.now = cb_now;
    p.write_payload = cb_write_payload;
    p.ring_doorbell = cb_ring;
    p.core_status = cb_status;
    p.result = cb_result;
    p.spin_hint = cb_spin;

    pthread_t cores[CORES], sched;
    struct core_arg args[CORES];
    for (int i = 0; i < CORES; i++) {
        args[i] = (struct core_arg){m, i};
        pthread_create(&cores[i], NULL, core_main, &args[i]);
    }
    struct sched_arg s = {&rt, &p, PTO_OK};
    pthread_create(&sched, NULL, sched_main, &s);

    static PtoOrchestrator o;
    CHECK(pto_orchestrator_open(&o, &rt, &p) == PTO_OK, "orchestrator_open");
    static PtoOrchestrator o2;
    CHECK(pto_orchestrator_open(&o2, &rt, &p) == PTO_ERR_CLAIMED, "one orchestrator only");
    submit(&o);
    CHECK(pto_orchestrator_close(&o) == PTO_OK, "close");
    CHECK(pto_orchestrator_close(&o) == PTO_OK, "a second close does nothing");
    PtoTask late = {0};
    CHECK(pto_submit(&o, &late, NULL) == PTO_ERR_CLOSED, "submit after close");

    pthread_join(sched, NULL);
    atomic_store(&m->stop, 1);
    for (int i = 0; i < CORES; i++) pthread_join(cores[i], NULL);
    CHECK(pto_runtime_report(&rt, report) == PTO_OK, "report");
    CHECK(pto_runtime_fini(&rt) == PTO_OK, "fini");
    CHECK(pto_runtime_report(&rt, report) == PTO_ERR_CLOSED, "report after fini");
    pto_runtime_fini(&rt);
    free(region);
    return s.result;
}

static void submit_dag(PtoOrchestrator *o) {
    uint64_t first[2] = {1, 1000};
    PtoTask t = {.kernel = WRITE, .class_ = 1, .args = first, .nargs = 2};
    uint64_t prev = 0;
    CHECK(pto_submit(o, &t, &prev) == PTO_OK, "submit the first write");
    for (uint64_t i = 2; i <= 200; i++) {
        uint64_t a[1] = {i};
        PtoTask c = {.kernel = CHAIN, .class_ = (uint8_t)(i % 2), .args = a, .nargs = 1,
                     .deps = &prev, .ndeps = 1};
        CHECK(pto_submit(o, &c, &prev) == PTO_OK, "submit hop %llu", (unsigned long long)i);
        uint64_t w[2] = {300 + i, i};
        PtoTask side = {.kernel = WRITE, .class_ = 1, .args = w, .nargs = 2};
        CHECK(pto_submit(o, &side, NULL) == PTO_OK, "submit a side write");
    }
    PtoTask bad_class = {.kernel = WRITE, .class_ = 9};
    CHECK(pto_submit(o, &bad_class, NULL) == PTO_ERR_SUBMIT, "an unknown class is refused");
    PtoTask bad_kernel = {.kernel = 77, .class_ = 1};
    CHECK(pto_submit(o, &bad_kernel, NULL) == PTO_ERR_SUBMIT, "an unknown kernel is refused");
    CHECK(pto_submit(o, NULL, NULL) == PTO_ERR_NULL, "a null task is refused");
    PtoTask no_args = {.kernel = WRITE, .class_ = 1, .nargs = 2};
    CHECK(pto_submit(o, &no_args, NULL) == PTO_ERR_NULL, "null args with a count");
}

static void submit_failing(PtoOrchestrator *o) {
    PtoTask f = {.kernel = FAIL, .class_ = 0};
    uint64_t id = 0;
    CHECK(pto_submit(o, &f, &id) == PTO_OK, "submit the failing task");
    uint64_t w[2] = {5, 5};
    PtoTask after = {.kernel = WRITE, .class_ = 1, .args = w, .nargs = 2, .deps = &id, .ndeps = 1};
    CHECK(pto_submit(o, &after, NULL) == PTO_OK, "submit its consumer");
}

int main(void) {
    static struct machine m;
    PtoReport r;
    PtoStatus st = run(&m, submit_dag, &r);
    CHECK(st == PTO_OK, "the DAG run ended with %d", (int)st);
    CHECK(r.submitted == 399 && r.finished == 399, "tasks %llu submitted, %llu finished",
          (unsigned long long)r.submitted, (unsigned long long)r.finished);
    CHECK(r.error_kind == 0 && r.live_slots == 0, "error %u, live slots %llu", r.error_kind,
          (unsigned long long)r.live_slots);
    for (uint64_t i = 1; i <= 200; i++)
        CHECK(atomic_load(&m.mem[i]) == 999 + i, "hop %llu holds %llu", (unsigned long long)i,
              (unsigned long long)atomic_load(&m.mem[i]));

    st = run(&m, submit_failing, &r);
    CHECK(st == PTO_ERR_RUN, "the failing run ended with %d", (int)st);
    CHECK(r.error_kind == 3 && r.error_detail == 42 && r.error_core != 0xffff,
          "kind %u, detail %llu, core %u", r.error_kind, (unsigned long long)r.error_detail,
          r.error_core);
    CHECK(atomic_load(&m.mem[5]) == 0, "the consumer of the failed task never ran");

    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("C image: 399 tasks ran through the ABI; the failing run reported its kernel\n");
    return 0;
}
