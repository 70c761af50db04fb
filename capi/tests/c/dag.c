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

enum { WRITE = 0, CHAIN = 1, FAIL = 2, INC = 3, KERNELS = 4 };

struct payload {
    uint64_t task;
    uint32_t kernel;
    uint64_t args[8];
    size_t nargs;
    PtoTensor tensors[4];
    size_t ntensors;
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
    b->ntensors = p->ntensors < 4 ? p->ntensors : 4;
    memcpy(b->tensors, p->tensors, b->ntensors * sizeof(PtoTensor));
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
        case INC: {
            /* Tensor 0 (read) plus one into tensor 1 (written), element by element, slowly:
             * a task started before the producer of its input finished reads zeros. */
            if (p->ntensors != 2 || p->tensors[0].access != PtoAccess_READ ||
                p->tensors[1].access != PtoAccess_WRITE) {
                failed = 1;
                code = 7;
                break;
            }
            const _Atomic uint64_t *in = (const _Atomic uint64_t *)(uintptr_t)p->tensors[0].base;
            _Atomic uint64_t *out = (_Atomic uint64_t *)(uintptr_t)p->tensors[1].base;
            pause_us(200);
            for (uint32_t j = 0; j < p->tensors[1].shape[0]; j++)
                atomic_store(&out[j], atomic_load(&in[j]) + 1);
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

/* The output heap every run hands out (pto_alloc, a graph's internal buffers). */
static _Alignas(64) _Atomic uint64_t heap[1024];

/* One run: submits what `submit` asks, returns the scheduler's status and the report. */
static PtoRecord records[512];
static size_t nrecords, total_records;

static PtoStatus run(struct machine *m, void (*submit)(PtoOrchestrator *), PtoReport *report) {
    memset(m, 0, sizeof *m);
    PtoConfig cfg;
    CHECK(pto_config_default(&cfg) == PTO_OK, "config_default");
    cfg.aic_cores = 1;
    cfg.aiv_cores = 2;
    cfg.schedulers = 1;
    cfg.task_window = 64;
    cfg.max_args = 4;
    cfg.profile = 2;
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
    p.heap_base = (uint64_t)(uintptr_t)heap;
    p.heap_len = sizeof heap;

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
    CHECK(pto_runtime_records(&rt, records, 512, &nrecords, &total_records) == PTO_OK,
          "records");
    CHECK(pto_runtime_records(&rt, NULL, 1, &nrecords, NULL) == PTO_ERR_NULL,
          "records need an array for a count");
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
    CHECK(pto_submit(o, &bad_kernel, NULL) == PTO_ERR_UNKNOWN_KERNEL,
          "an unknown kernel is refused as such");
    CHECK(strstr(pto_status_str(PTO_ERR_UNKNOWN_KERNEL), "kernel") != NULL,
          "the status says what it means");
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

/* A chain through one buffer, each task's input the tile its predecessor wrote: the
 * dependencies come from the tensor arguments alone. */
#define HOPS 20
#define TILE 4
static struct machine *tensor_machine;

static void submit_tensors(PtoOrchestrator *o) {
    /* The shared memory is the buffer; tile i is words [8 + TILE i, 8 + TILE (i + 1)). */
    uint64_t base = (uint64_t)(uintptr_t)&tensor_machine->mem[0];
    uint64_t len = sizeof tensor_machine->mem;
    for (uint64_t j = 0; j < TILE; j++) atomic_store(&tensor_machine->mem[8 + j], 100 * j);
    CHECK(pto_scope_begin(o) == PTO_OK, "scope_begin");
    for (uint64_t i = 0; i < HOPS; i++) {
        PtoTensorArg t[2] = {
            {.buffer = base, .buffer_len = len, .base = base + 8 * (8 + TILE * i), .elem = 8,
             .rank = 1, .access = PtoAccess_READ, .shape = {TILE, 1, 1, 1}, .strides = {1, 0, 0, 0}},
            {.buffer = base, .buffer_len = len, .base = base + 8 * (8 + TILE * (i + 1)),
             .elem = 8, .rank = 1, .access = PtoAccess_WRITE, .shape = {TILE, 1, 1, 1},
             .strides = {1, 0, 0, 0}},
        };
        PtoTask inc = {.kernel = INC, .class_ = (uint8_t)(i % 2), .tensors = t, .ntensors = 2};
        CHECK(pto_submit(o, &inc, NULL) == PTO_OK, "submit hop %llu", (unsigned long long)i);
    }
    CHECK(pto_scope_end(o) == PTO_OK, "scope_end");
    CHECK(pto_scope_end(o) == PTO_ERR_NO_OPEN_SCOPE, "no scope open");
    uint64_t addr = 0;
    CHECK(pto_alloc(o, 0, 64, 64, &addr) == PTO_OK &&
              addr >= (uint64_t)(uintptr_t)heap && addr + 64 <= (uint64_t)(uintptr_t)(heap + 1024),
          "a buffer of the platform's heap");
    CHECK(pto_alloc(o, 0, sizeof heap + 64, 64, &addr) == PTO_ERR_HEAP_TOO_SMALL,
          "more than the heap holds");
    CHECK(pto_alloc(o, 0, 64, 3, &addr) == PTO_ERR_BAD_ALIGNMENT, "a bad alignment");
    PtoTensorArg outside = {.buffer = base, .buffer_len = 64, .base = base + 64, .elem = 8,
                            .rank = 1, .access = PtoAccess_READ, .shape = {1, 1, 1, 1},
                            .strides = {1, 0, 0, 0}};
    PtoTask bad = {.kernel = INC, .class_ = 1, .tensors = &outside, .ntensors = 1};
    CHECK(pto_submit(o, &bad, NULL) == PTO_ERR_BAD_TENSOR, "a tile outside its buffer");
    outside.base = base;
    outside.access = 9;
    CHECK(pto_submit(o, &bad, NULL) == PTO_ERR_SUBMIT, "an unknown access");
    outside.access = 0;
    CHECK(pto_submit(o, &bad, NULL) == PTO_ERR_SUBMIT, "no access at all (a zeroed argument)");
    bad.tensors = NULL;
    CHECK(pto_submit(o, &bad, NULL) == PTO_ERR_NULL, "null tensors with a count");
    /* Counts past any configuration's limit are refused before the arrays are read. */
    uint64_t one = 1;
    PtoTask wide = {.kernel = INC, .class_ = 1, .args = &one, .nargs = 1000};
    CHECK(pto_submit(o, &wide, NULL) == PTO_ERR_TOO_MANY_ARGS, "too many arguments");
    wide = (PtoTask){.kernel = INC, .class_ = 1, .deps = &one, .ndeps = 1000};
    CHECK(pto_submit(o, &wide, NULL) == PTO_ERR_TOO_MANY_DEPS, "too many dependencies");
    wide = (PtoTask){.kernel = INC, .class_ = 1, .tensors = &outside, .ntensors = 1000};
    CHECK(pto_submit(o, &wide, NULL) == PTO_ERR_TOO_MANY_TENSORS, "too many tensors");
}

/* A graph of two INC tasks (A -> B -> C, each a boundary of TILE words) recorded once and
 * replayed REPLAYS times along a chain of tiles: instance k binds tiles 2k, 2k + 1 and
 * 2k + 2, so each instance's first task waits for the last one's second through the tile
 * they share, which only the boundaries' lookups can tell it. */
#define REPLAYS 5
static PtoTensorArg tile_arg(uint64_t i, uint8_t access) {
    uint64_t at = (uint64_t)(uintptr_t)&tensor_machine->mem[8 + TILE * i];
    return (PtoTensorArg){.buffer = at, .buffer_len = 8 * TILE, .base = at, .elem = 8,
                          .rank = 1, .access = access, .shape = {TILE, 1, 1, 1},
                          .strides = {1, 0, 0, 0}};
}
static PtoBuffer tile_buffer(uint64_t i) {
    PtoTensorArg a = tile_arg(i, PtoAccess_READ);
    return (PtoBuffer){.base = a.buffer, .len = a.buffer_len};
}

static void submit_graph(PtoOrchestrator *o) {
    for (uint64_t j = 0; j < TILE; j++) atomic_store(&tensor_machine->mem[8 + j], 100 * j);
    size_t bytes = 0;
    CHECK(pto_graph_storage_size(2, 4, 8, &bytes) == PTO_OK && bytes > 0, "storage_size");
    uint8_t *storage = aligned_alloc(64, (bytes + 64) / 64 * 64 + 64);
    static PtoGraph g;
    PtoBuffer bounds[3] = {tile_buffer(0), tile_buffer(1), tile_buffer(2)};
    CHECK(pto_graph_record(&g, o, storage + 8, bytes, 2, 4, 8, bounds, 3) == PTO_ERR_GRAPH_STORAGE,
          "misaligned storage is refused");
    CHECK(pto_graph_record(&g, o, storage, bytes - 1, 2, 4, 8, bounds, 3) == PTO_ERR_GRAPH_STORAGE,
          "too little storage is refused");
    PtoBuffer twice[2] = {bounds[0], bounds[0]};
    CHECK(pto_graph_record(&g, o, storage, bytes, 2, 4, 8, twice, 2) ==
              PTO_ERR_GRAPH_OVERLAPPING_BOUNDARIES,
          "a boundary given twice is refused");
    CHECK(pto_graph_record(&g, o, storage, bytes, 2, 4, 8, bounds, 3) == PTO_OK, "record");

    PtoTensorArg ab[2] = {tile_arg(0, PtoAccess_READ), tile_arg(1, PtoAccess_WRITE)};
    PtoTensorArg bc[2] = {tile_arg(1, PtoAccess_READ), tile_arg(2, PtoAccess_WRITE)};
    /* The first task's scalar (unread by INC) is set by each replay: a patch. */
    uint64_t placeholder = 0;
    PtoTask first = {.kernel = INC, .class_ = 1, .args = &placeholder, .nargs = 1, .tensors = ab,
                     .ntensors = 2};
    PtoTask second = {.kernel = INC, .class_ = 0, .tensors = bc, .ntensors = 2};
    uint32_t node = 99, later = 5;
    uint64_t id = 0;
    PtoTask named = first;
    named.deps = &id;
    named.ndeps = 1;
    CHECK(pto_graph_add(&g, o, &named, NULL, 0, NULL) == PTO_ERR_GRAPH_NOT_IN_GRAPH,
          "a dependency by id is refused inside a graph");
    CHECK(pto_graph_add(&g, o, &first, &later, 1, NULL) == PTO_ERR_GRAPH_BAD_NODE,
          "waiting for a node that is not an earlier one");
    PtoTensorArg stray[2] = {tile_arg(3, PtoAccess_READ), tile_arg(1, PtoAccess_WRITE)};
    PtoTask unknown = {.kernel = INC, .class_ = 1, .tensors = stray, .ntensors = 2};
    CHECK(pto_graph_add(&g, o, &unknown, NULL, 0, NULL) == PTO_ERR_GRAPH_UNKNOWN_BUFFER,
          "a buffer the graph does not have");
    PtoBuffer internal;
    CHECK(pto_graph_internal(&g, 64, 3, &internal) == PTO_ERR_BAD_ALIGNMENT,
          "an internal buffer's alignment");
    CHECK(pto_graph_add(&g, o, &first, NULL, 0, &node) == PTO_OK && node == 0, "add the first");
    CHECK(pto_graph_add(&g, o, &second, NULL, 0, &node) == PTO_OK && node == 1, "add the second");
    CHECK(pto_graph_patch(&g, 0, 1, 0) == PTO_ERR_GRAPH_BAD_PATCH, "the first has one scalar");
    CHECK(pto_graph_patch(&g, 0, 0, 0) == PTO_OK, "patch the first's scalar");
    CHECK(pto_graph_replay(o, &g, bounds, 3, NULL, 0, 0, 0, NULL, 0, NULL) == PTO_ERR_GRAPH_STATE,
          "no replay while recording");
    CHECK(pto_graph_finish(&g) == PTO_OK, "finish");
    CHECK(pto_graph_add(&g, o, &first, NULL, 0, NULL) == PTO_ERR_GRAPH_STATE,
          "no task after the recording ended");
    CHECK(pto_graph_finish(&g) == PTO_ERR_GRAPH_STATE, "finished once");

    CHECK(pto_graph_replay(o, &g, bounds, 2, NULL, 0, 0, 0, NULL, 0, NULL) == PTO_ERR_GRAPH_WRONG_COUNT,
          "too few bindings");
    PtoBuffer shorter[3] = {bounds[0], bounds[1], {bounds[2].base, 8}};
    CHECK(pto_graph_replay(o, &g, shorter, 3, NULL, 0, 0, 0, NULL, 0, NULL) == PTO_ERR_GRAPH_WRONG_SIZE,
          "a binding of another length");
    CHECK(strstr(pto_status_str(PTO_ERR_GRAPH_WRONG_SIZE), "length") != NULL,
          "the wrong-size status says so in words");
    PtoBuffer aliased[3] = {bounds[0], bounds[0], bounds[2]};
    CHECK(pto_graph_replay(o, &g, aliased, 3, NULL, 0, 0, 0, NULL, 0, NULL) == PTO_ERR_GRAPH_ALIASED,
          "two bindings of one buffer");
    CHECK(pto_graph_replay(o, &g, bounds, 3, NULL, 0, 0, 0, NULL, 0, NULL) ==
              PTO_ERR_GRAPH_WRONG_SCALARS,
          "the patch's scalar is not bound");
    CHECK(pto_scope_begin(o) == PTO_OK, "scope_begin");
    for (uint64_t k = 0; k < REPLAYS; k++) {
        PtoBuffer bind[3] = {tile_buffer(2 * k), tile_buffer(2 * k + 1), tile_buffer(2 * k + 2)};
        PtoInstance inst = {0};
        CHECK(pto_graph_replay(o, &g, bind, 3, &k, 1, 0, 0, NULL, 0, &inst) == PTO_OK && inst.tasks == 2,
              "replay %llu", (unsigned long long)k);
    }
    /* Bindings that share a tile, asked to fall back: submitted one by one, saying why. */
    PtoBuffer shared[3] = {tile_buffer(40), tile_buffer(40), tile_buffer(41)};
    uint64_t zero = 0;
    PtoInstance fell = {0};
    CHECK(pto_graph_replay(o, &g, shared, 3, &zero, 1, 0, PTO_REPLAY_OR_SUBMIT, NULL, 0, &fell) ==
                  PTO_OK &&
              fell.tasks == 2 && fell.fell_back == PTO_ERR_GRAPH_ALIASED,
          "a replay on shared tiles falls back (%d)", fell.fell_back);
    CHECK(pto_scope_end(o) == PTO_OK, "scope_end");
    CHECK(pto_graph_close(&g) == PTO_OK, "close the graph");
    CHECK(pto_graph_replay(o, &g, bounds, 3, NULL, 0, 0, 0, NULL, 0, NULL) == PTO_ERR_GRAPH_STATE,
          "no replay of a closed graph");
    free(storage);
}

/* A graph whose middle buffer is its own (internal): x -> t -> y, two INC tasks. Each
 * replay takes a fresh t from the platform's heap; instance k binds tiles 2k and 2k + 1,
 * so y = x + 2 whichever heap bytes its t got. */
#define INTERNAL_REPLAYS 6
static void submit_internal_graph(PtoOrchestrator *o) {
    for (uint64_t k = 0; k < INTERNAL_REPLAYS; k++)
        for (uint64_t j = 0; j < TILE; j++)
            atomic_store(&tensor_machine->mem[8 + TILE * 2 * k + j], 10 * k + j);
    size_t bytes = 0;
    CHECK(pto_graph_storage_size(2, 4, 8, &bytes) == PTO_OK, "storage_size");
    uint8_t *storage = aligned_alloc(64, (bytes + 63) / 64 * 64);
    static PtoGraph g;
    PtoBuffer bounds[2] = {tile_buffer(0), tile_buffer(1)};
    CHECK(pto_graph_record(&g, o, storage, bytes, 2, 4, 8, bounds, 2) == PTO_OK, "record");
    PtoBuffer t;
    CHECK(pto_graph_internal(&g, 8 * TILE, 64, &t) == PTO_OK && t.len == 8 * TILE, "internal");
    PtoTensorArg xt[2] = {tile_arg(0, PtoAccess_READ),
                          {.buffer = t.base, .buffer_len = t.len, .base = t.base, .elem = 8,
                           .rank = 1, .access = PtoAccess_WRITE, .shape = {TILE, 1, 1, 1},
                           .strides = {1, 0, 0, 0}}};
    PtoTensorArg ty[2] = {xt[1], tile_arg(1, PtoAccess_WRITE)};
    ty[0].access = PtoAccess_READ;
    PtoTask first = {.kernel = INC, .class_ = 1, .tensors = xt, .ntensors = 2};
    PtoTask second = {.kernel = INC, .class_ = 0, .tensors = ty, .ntensors = 2};
    CHECK(pto_graph_add(&g, o, &first, NULL, 0, NULL) == PTO_OK, "add x -> t");
    CHECK(pto_graph_add(&g, o, &second, NULL, 0, NULL) == PTO_OK, "add t -> y");
    CHECK(pto_graph_finish(&g) == PTO_OK, "finish");
    for (uint64_t k = 0; k < INTERNAL_REPLAYS; k++) {
        PtoBuffer bind[2] = {tile_buffer(2 * k), tile_buffer(2 * k + 1)};
        CHECK(pto_graph_replay(o, &g, bind, 2, NULL, 0, 0, 0, NULL, 0, NULL) == PTO_OK,
              "replay %llu with its own t from the heap", (unsigned long long)k);
    }
    CHECK(pto_graph_close(&g) == PTO_OK, "close");
    free(storage);
}

/* A graph of one INC task, y = x + 1 on a tile, whose boundaries are regions of SHIFTS
 * tiles: x is tiles 0.., y tiles SHIFTS... Recorded on each region's first tile, replayed
 * SHIFTS times with both bindings shifted by k tiles: instance k computes y's tile k. */
#define SHIFTS 4
static PtoTensorArg region_arg(uint64_t first, uint64_t k, uint8_t access) {
    PtoTensorArg a = tile_arg(first + k, access);
    a.buffer = tile_arg(first, access).buffer;
    a.buffer_len = 8 * TILE * SHIFTS;
    return a;
}
static void submit_shifted_graph(PtoOrchestrator *o) {
    for (uint64_t k = 0; k < SHIFTS; k++)
        for (uint64_t j = 0; j < TILE; j++)
            atomic_store(&tensor_machine->mem[8 + TILE * k + j], 10 * k + j);
    size_t bytes = 0;
    CHECK(pto_graph_storage_size(1, 2, 2, &bytes) == PTO_OK, "storage_size");
    uint8_t *storage = aligned_alloc(64, (bytes + 63) / 64 * 64);
    static PtoGraph g;
    PtoTensorArg xy[2] = {region_arg(0, 0, PtoAccess_READ), region_arg(SHIFTS, 0, PtoAccess_WRITE)};
    PtoBuffer bounds[2] = {{xy[0].buffer, xy[0].buffer_len}, {xy[1].buffer, xy[1].buffer_len}};
    CHECK(pto_graph_record(&g, o, storage, bytes, 1, 2, 2, bounds, 2) == PTO_OK, "record");
    PtoTask inc = {.kernel = INC, .class_ = 1, .tensors = xy, .ntensors = 2};
    CHECK(pto_graph_add(&g, o, &inc, NULL, 0, NULL) == PTO_OK, "add y = x + 1");
    CHECK(pto_graph_finish(&g) == PTO_OK, "finish");
    int64_t past[2] = {8 * TILE * SHIFTS, 0};
    PtoReplay outside = {.buffers = bounds, .nbuffers = 2, .shifts = past};
    CHECK(pto_graph_replay_with(o, &g, &outside, NULL) == PTO_ERR_GRAPH_WRONG_SIZE,
          "a shift past the binding is refused");
    CHECK(pto_graph_replay_with(o, &g, NULL, NULL) == PTO_ERR_NULL, "no replay to read");
    for (uint64_t k = 0; k < SHIFTS; k++) {
        int64_t by[2] = {(int64_t)(8 * TILE * k), (int64_t)(8 * TILE * k)};
        PtoReplay r = {.buffers = bounds, .nbuffers = 2, .shifts = by};
        PtoInstance inst = {0};
        CHECK(pto_graph_replay_with(o, &g, &r, &inst) == PTO_OK && inst.tasks == 1,
              "replay %llu shifted by %llu tiles", (unsigned long long)k, (unsigned long long)k);
    }
    CHECK(pto_graph_close(&g) == PTO_OK, "close");
    free(storage);
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

    tensor_machine = &m;
    st = run(&m, submit_tensors, &r);
    CHECK(st == PTO_OK, "the tensor chain ended with %d", (int)st);
    CHECK(r.finished == HOPS, "%llu hops finished", (unsigned long long)r.finished);
    for (uint64_t j = 0; j < TILE; j++)
        CHECK(atomic_load(&m.mem[8 + TILE * HOPS + j]) == 100 * j + HOPS,
              "the last tile's word %llu holds %llu", (unsigned long long)j,
              (unsigned long long)atomic_load(&m.mem[8 + TILE * HOPS + j]));
    CHECK(nrecords == HOPS && total_records == HOPS, "%zu of %zu records", nrecords,
          total_records);
    for (size_t i = 0; i < nrecords; i++)
        CHECK(records[i].kernel == INC && records[i].core != 0xffff &&
                  records[i].complete >= records[i].dispatch && records[i].dispatch != 0 &&
                  records[i].flags == PtoRecordFlags_WRITTEN,
              "record %zu: kernel %u core %u flags %u", i, records[i].kernel, records[i].core,
              records[i].flags);

    st = run(&m, submit_graph, &r);
    CHECK(st == PTO_OK, "the replayed graph ended with %d", (int)st);
    CHECK(r.finished == 2 * REPLAYS + 2, "%llu replayed tasks finished",
          (unsigned long long)r.finished);
    /* The fallen-back instance: tile 40 incremented in place, then tile 41 = tile 40 + 1. */
    for (uint64_t j = 0; j < TILE; j++)
        CHECK(atomic_load(&m.mem[8 + TILE * 41 + j]) == 2, "the shared tiles' word %llu holds %llu",
              (unsigned long long)j, (unsigned long long)atomic_load(&m.mem[8 + TILE * 41 + j]));
    for (uint64_t j = 0; j < TILE; j++)
        CHECK(atomic_load(&m.mem[8 + TILE * 2 * REPLAYS + j]) == 100 * j + 2 * REPLAYS,
              "the last instance's word %llu holds %llu", (unsigned long long)j,
              (unsigned long long)atomic_load(&m.mem[8 + TILE * 2 * REPLAYS + j]));

    st = run(&m, submit_shifted_graph, &r);
    CHECK(st == PTO_OK, "the shifted graph ended with %d", (int)st);
    CHECK(r.finished == SHIFTS, "%llu shifted tasks finished", (unsigned long long)r.finished);
    for (uint64_t k = 0; k < SHIFTS; k++)
        for (uint64_t j = 0; j < TILE; j++)
            CHECK(atomic_load(&m.mem[8 + TILE * (SHIFTS + k) + j]) == 10 * k + j + 1,
                  "shifted instance %llu, word %llu holds %llu", (unsigned long long)k,
                  (unsigned long long)j,
                  (unsigned long long)atomic_load(&m.mem[8 + TILE * (SHIFTS + k) + j]));

    st = run(&m, submit_internal_graph, &r);
    CHECK(st == PTO_OK, "the graph with an internal buffer ended with %d", (int)st);
    CHECK(r.finished == 2 * INTERNAL_REPLAYS, "%llu tasks finished", (unsigned long long)r.finished);
    for (uint64_t k = 0; k < INTERNAL_REPLAYS; k++)
        for (uint64_t j = 0; j < TILE; j++)
            CHECK(atomic_load(&m.mem[8 + TILE * (2 * k + 1) + j]) == 10 * k + j + 2,
                  "instance %llu, word %llu holds %llu", (unsigned long long)k,
                  (unsigned long long)j,
                  (unsigned long long)atomic_load(&m.mem[8 + TILE * (2 * k + 1) + j]));

    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("C image: 399 tasks ran through the ABI; the failing run reported its kernel; a "
           "graph replayed %d times, and one with a buffer of its own from the heap %d times\n",
           REPLAYS, INTERNAL_REPLAYS);
    return 0;
}
