/* A stack of layers, recorded once and replayed per layer: each layer is y = (x + w) + w
 * over n f32 values, as two add tasks per chunk of CHUNK values with a per-instance
 * buffer t = x + w between them. The graph is recorded on layer 0's buffers (its
 * boundaries: x, w, y) and replayed with each layer's own; layer l + 1 reads what layer l
 * wrote, and the runtime orders the two through the buffer they share.
 *
 * Arguments (pto-launch's --arg, in order): the add kernel's id, the addresses of x (the
 * input), w (the layers' weights, n values each), the scratch activations (n values per
 * layer between the first and the last) and y (the output), n, and the number of layers. */
#include "pto_aicpu.h"

/* This example's own error codes (positive: no runtime status is). */
enum { LAYERS_BAD_ARGS = 1, LAYERS_BAD_LENGTH = 2, LAYERS_STORAGE = 3 };

#define CHUNK 1024u
#define MAX_CHUNKS 64u

/* Where the recording keeps its tasks: the orchestration's memory, as large as
 * graph_storage_size says (checked). */
static _Alignas(64) unsigned char storage[64 * 1024];
static PtoGraph graph;

/* Chunk `c` of buffer `b` (f32 values), used as `access`. */
static PtoTensorArg chunk(PtoBuffer b, uint64_t c, PtoAccess access) {
    PtoTensorArg t = {
        .buffer = b.base,
        .buffer_len = b.len,
        .base = b.base + 4 * CHUNK * c,
        .elem = 4,
        .rank = 1,
        .access = access,
        .shape = {CHUNK, 1, 1, 1},
        .strides = {1, 0, 0, 0},
    };
    return t;
}

/* Records one layer on buffers x, w and y (n values each): t = x + w, then y = t + w,
 * chunk by chunk; t is the graph's own (each instance gets a fresh one). */
static int32_t record_layer(const PtoOrchOps *ops, uint32_t add, PtoBuffer x, PtoBuffer w,
                            PtoBuffer y) {
    uint64_t chunks = x.len / (4 * CHUNK);
    size_t bytes = 0;
    /* Tasks, tensor arguments, words (one edge per second task). */
    uint32_t tasks = (uint32_t)(2 * chunks), args = 3 * tasks, words = (uint32_t)chunks;
    int32_t rc = ops->graph_storage_size(tasks, args, words, &bytes);
    if (rc != PTO_OK) return rc;
    if (bytes > sizeof storage) return LAYERS_STORAGE;
    PtoBuffer bounds[3] = {x, w, y};
    rc = ops->graph_record(ops->ctx, &graph, storage, sizeof storage, tasks, args, words, bounds, 3);
    if (rc != PTO_OK) return rc;
    PtoBuffer t;
    rc = ops->graph_internal(ops->ctx, &graph, x.len, 64, &t);
    for (uint64_t c = 0; c < chunks && rc == PTO_OK; c++) {
        PtoTensorArg in[3] = {chunk(x, c, PtoAccess_READ), chunk(w, c, PtoAccess_READ),
                              chunk(t, c, PtoAccess_WRITE)};
        PtoTask first = {.kernel = add, .class_ = 1 /* AIV */, .tensors = in, .ntensors = 3};
        rc = ops->graph_add(ops->ctx, &graph, &first, NULL, 0, NULL);
    }
    for (uint64_t c = 0; c < chunks && rc == PTO_OK; c++) {
        PtoTensorArg out[3] = {chunk(t, c, PtoAccess_READ), chunk(w, c, PtoAccess_READ),
                               chunk(y, c, PtoAccess_WRITE)};
        PtoTask second = {.kernel = add, .class_ = 1, .tensors = out, .ntensors = 3};
        rc = ops->graph_add(ops->ctx, &graph, &second, NULL, 0, NULL);
    }
    return rc != PTO_OK ? rc : ops->graph_finish(ops->ctx, &graph);
}

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs != 7 || ops->abi != PTO_AICPU_ABI) return LAYERS_BAD_ARGS;
    uint32_t add = (uint32_t)args[0];
    uint64_t x = args[1], w = args[2], acts = args[3], y = args[4], n = args[5];
    uint64_t layers = args[6], len = 4 * n;
    if (n == 0 || n % CHUNK != 0 || n / CHUNK > MAX_CHUNKS || layers == 0)
        return LAYERS_BAD_LENGTH;
    /* Layer l reads activation l and writes activation l + 1: x first, y last. */
    PtoBuffer act_first = {x, len}, act_last = {y, len};
    PtoBuffer weight0 = {w, len};
    PtoBuffer out0 = layers == 1 ? act_last : (PtoBuffer){acts, len};
    int32_t rc = record_layer(ops, add, act_first, weight0, out0);
    for (uint64_t l = 0; l < layers && rc == PTO_OK; l++) {
        PtoBuffer in = l == 0 ? act_first : (PtoBuffer){acts + len * (l - 1), len};
        PtoBuffer out = l + 1 == layers ? act_last : (PtoBuffer){acts + len * l, len};
        PtoBuffer bind[3] = {in, {w + len * l, len}, out};
        rc = ops->graph_replay(ops->ctx, &graph, bind, 3, NULL, 0, 0, 0, NULL, 0, NULL);
    }
    int32_t closed = ops->graph_close(ops->ctx, &graph);
    return rc != PTO_OK ? rc : closed; /* ops->status_str(rc) says why */
}
