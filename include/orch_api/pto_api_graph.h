/* rt_submit_graph(fn, args, params...): a graph function's tasks recorded once per
 * identity and replayed on each later call (the runtime's task graphs, docs/graphs.md).
 *
 * The identity is the function, its construction parameters (hashed by value), and the
 * shape of its boundary: `args`' tensors (each one's dtype, dimensions, strides, offset in
 * its buffer and its buffer's size, and which of them share a buffer) and the scalars the
 * function reads as numbers (by value). A scalar the function only passes on to its tasks
 * (`task.add_scalar(args.scalar(i))`, through CoreTaskArgs of its own too) is no part of the
 * identity: each replay patches it with the call's value. A call whose identity was
 * recorded replays the graph with `args`' buffers bound in place of the recorded ones and
 * its passed-on scalars patched; only the buffers' addresses may differ. A new identity is
 * recorded: the function runs twice without submitting (once to count its tasks, once
 * into the recording), then the graph is replayed. A function that reads or writes data
 * (get_tensor_data), gives an output an initial value, names a buffer outside its boundary
 * or an output made outside it, or has no task runs as ordinary tasks instead, each call,
 * with a warning the first time; so does any call once PTO_API_GRAPHS identities are
 * recorded, and a call whose boundary has runtime-allocated outputs or buffers that overlap
 * without being the same. The graphs are closed when the orchestration returns. */
#ifndef PTO_API_GRAPH_H
#define PTO_API_GRAPH_H

#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "pto_api_data.h"
#include "pto_api_submit.h"

/* Identities recorded per run. */
constexpr int PTO_API_GRAPHS = 64;
/* Edges each recorded task may have among the graph's tasks (the runtime's most). */
constexpr uint32_t PTO_API_GRAPH_EDGES = 64;

/* What a count or a recording of a graph function gathers. */
struct PtoApiRecording {
    PtoGraph *g;        /* null: counting */
    uint32_t tasks, args, scalars;
    uint32_t slots;     /* the boundary scalars its patches take: one past the highest */
    uint64_t next_fake; /* counting: where the next stand-in output goes */
    const char *why;    /* non-null: the function cannot be recorded, and why */
};

inline void pto_api_graph_unrecordable(PtoApiRecording *r, const char *why) {
    if (!r->why) r->why = why;
}

inline bool pto_api_graph_create(PtoApiRecording *r, uint64_t bytes, bool initial,
                                 PTOBufferHandle *out) {
    if (initial) pto_api_graph_unrecordable(r, "an output has an initial value");
    out->size = bytes;
    if (r->g && !r->why) {
        PtoBuffer b;
        const PtoOrchOps *ops = pto_api_state.ops;
        if (ops->graph_internal(ops->ctx, r->g, bytes, 64, &b) == 0) {
            out->addr = b.base;
            return true;
        }
        pto_api_graph_unrecordable(r, "the graph has no room for another buffer of its own");
    }
    /* Counting (or past a refusal): a stand-in address no buffer has, never submitted. */
    if (r->next_fake == 0) r->next_fake = uint64_t(1) << 62;
    out->addr = r->next_fake;
    r->next_fake += (bytes + 63) / 64 * 64;
    return true;
}

/* Adds task `t` to the recording; `from`: per scalar argument, the boundary scalar it
 * passes on (i + 1 for scalar i; 0: a value of its own), which each replay patches. */
inline void pto_api_graph_task(PtoApiRecording *r, const PtoTask &t, const uint8_t *from) {
    if (!r->g) {
        r->tasks++, r->args += uint32_t(t.ntensors), r->scalars += uint32_t(t.nargs);
        return;
    }
    if (r->why) return;
    const PtoOrchOps *ops = pto_api_state.ops;
    uint32_t node = 0;
    int32_t st = ops->graph_add(ops->ctx, r->g, &t, nullptr, 0, &node);
    for (size_t j = 0; st == 0 && j < t.nargs; j++) {
        if (from[j] == 0) continue;
        st = ops->graph_patch(ops->ctx, r->g, node, uint32_t(j), uint32_t(from[j] - 1));
        if (from[j] > r->slots) r->slots = from[j];
    }
    if (st != 0) pto_api_graph_unrecordable(r, ops->status_str(st));
}

/* The boundary's shape: what must match for a call to replay a recording. */
struct PtoApiSignature {
    struct Tensor {
        int32_t tag, buffer; /* buffer: index among the distinct buffers */
        uint64_t start_offset, buffer_size;
        uint32_t ndims, dtype;
        uint32_t shapes[PTO_API_MAX_DIMS], strides[PTO_API_MAX_DIMS];
    };
    Tensor tensors[MAX_TENSOR_ARGS];
    uint64_t scalars[MAX_SCALAR_ARGS];
    int32_t ntensors, nscalars;
};

/* `a`'s signature and its distinct buffers (the bindings, in first-use order); false if
 * its boundary cannot be recorded (an output the runtime allocates, buffers that overlap
 * without being the same, an invalid tensor). */
inline bool pto_api_signature(const CoreTaskArgs &a, PtoApiSignature *sig, PtoBuffer *bind,
                              uint32_t *nbind) {
    memset(sig, 0, sizeof *sig);
    *nbind = 0;
    for (int32_t i = 0; i < a.ntensors; i++) {
        const CoreTaskArgs::Slot &s = a.slots[i];
        if (s.tag == TensorArgType::OUTPUT || s.tensor.ndims == 0) return false;
        const ChipTensor &t = s.tensor;
        int32_t at = -1;
        for (uint32_t b = 0; b < *nbind; b++) {
            uint64_t lo = bind[b].base, hi = lo + bind[b].len;
            if (lo == t.buffer.addr && bind[b].len == t.buffer.size) {
                at = int32_t(b);
            } else if (t.buffer.addr < hi && lo < t.buffer.addr + t.buffer.size) {
                return false;
            }
        }
        if (at < 0) {
            at = int32_t(*nbind);
            bind[(*nbind)++] = PtoBuffer{t.buffer.addr, t.buffer.size};
        }
        PtoApiSignature::Tensor &d = sig->tensors[i];
        d.tag = int32_t(s.tag), d.buffer = at;
        d.start_offset = t.start_offset, d.buffer_size = t.buffer.size;
        d.ndims = t.ndims, d.dtype = uint32_t(t.dtype);
        for (uint32_t k = 0; k < t.ndims && k < PTO_API_MAX_DIMS; k++) {
            d.shapes[k] = t.shapes[k], d.strides[k] = t.strides[k];
        }
    }
    sig->ntensors = a.ntensors;
    sig->nscalars = a.nscalars;
    memcpy(sig->scalars, a.scalars, sizeof(uint64_t) * size_t(a.nscalars));
    return true;
}

/* Whether signatures `a` and `b` are one identity's: the same tensors, as many scalars, and
 * the same value of each scalar in `values` (bit i: scalar i). */
inline bool pto_api_same_identity(const PtoApiSignature &a, const PtoApiSignature &b,
                                  uint32_t values) {
    if (a.ntensors != b.ntensors || a.nscalars != b.nscalars ||
        memcmp(a.tensors, b.tensors, sizeof a.tensors) != 0) {
        return false;
    }
    for (int32_t i = 0; i < a.nscalars; i++) {
        if ((values >> i & 1) && a.scalars[i] != b.scalars[i]) return false;
    }
    return true;
}

/* FNV-1a over `n` bytes, continuing from `h`. */
inline uint64_t pto_api_fnv(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* One recorded identity. */
struct PtoApiGraphEntry {
    bool used, plain; /* plain: it cannot be recorded; it runs as ordinary tasks */
    uint64_t key;     /* the function and its construction parameters */
    PtoApiSignature sig;
    uint32_t values;  /* the scalars whose values are part of the identity (bit i: scalar i) */
    uint32_t slots;   /* the scalars a replay patches from: the first `slots` of the call's */
    PtoGraph *graph;
    void *storage;
};

inline PtoApiGraphEntry pto_api_graphs[PTO_API_GRAPHS];
inline bool pto_api_graphs_full_told;
/* This run's recordings and replays (every call that recorded also replayed once). */
inline uint32_t pto_api_graphs_recorded, pto_api_graphs_replayed;

/* How many identities this run recorded, and how many calls replayed a recording (this
 * runtime's own: the C++ runtime's API has no such call). */
inline void rt_graph_counts(uint32_t *recorded, uint32_t *replayed) {
    *recorded = pto_api_graphs_recorded;
    *replayed = pto_api_graphs_replayed;
}

/* Closes every graph recorded in this run and frees its memory (pto_orchestrate calls it
 * once the entry returned). */
inline void pto_api_graphs_close() {
    for (PtoApiGraphEntry &e : pto_api_graphs) {
        if (e.graph) {
            pto_api_state.ops->graph_close(pto_api_state.ops->ctx, e.graph);
            free(e.graph);
        }
        free(e.storage);
        e = PtoApiGraphEntry{};
    }
    pto_api_graphs_full_told = false;
    pto_api_graphs_recorded = pto_api_graphs_replayed = 0;
}

/* Runs `call` gathering into `r`, the scalars of `boundary` watched (what it read as
 * numbers added to `read`). */
template <typename Call>
inline void pto_api_graph_pass(PtoApiRecording *r, const CoreTaskArgs &boundary,
                               uint32_t *read, Call call) {
    PtoApiScalarWatch watch{&boundary, 0};
    pto_api_state.recording = r;
    pto_api_scalar_watch = &watch;
    call();
    pto_api_scalar_watch = nullptr;
    pto_api_state.recording = nullptr;
    *read |= watch.read;
}

/* Counts then records `call`'s tasks into `e` on boundary `bind` (the buffers of
 * `boundary`); false (and `e` plain, with a warning) if it cannot be recorded. The run is
 * fatal if the function failed. Either way `e->sig` keeps only the scalars the function
 * read as numbers (`e->values`). */
template <typename Call>
inline bool pto_api_graph_record(PtoApiGraphEntry *e, const CoreTaskArgs &boundary,
                                 const PtoBuffer *bind, uint32_t nbind, Call call) {
    const PtoOrchOps *ops = pto_api_state.ops;
    PtoApiRecording count{};
    uint32_t read = 0;
    pto_api_graph_pass(&count, boundary, &read, call);
    if (rt_is_fatal()) return false;
    const char *why = count.why ? count.why : count.tasks == 0 ? "it submits no task" : nullptr;
    uint32_t words = count.scalars + count.tasks * PTO_API_GRAPH_EDGES;
    size_t bytes = 0;
    if (!why && ops->graph_storage_size(count.tasks, count.args, words, &bytes) != 0) {
        why = "its graph would be too large";
    }
    if (!why) {
        e->storage = aligned_alloc(64, (bytes + 63) / 64 * 64);
        e->graph = static_cast<PtoGraph *>(aligned_alloc(64, sizeof(PtoGraph)));
        if (!e->storage || !e->graph) {
            why = "no memory for its recording";
        } else {
            int32_t st = ops->graph_record(ops->ctx, e->graph, e->storage, bytes, count.tasks,
                                           count.args, words, bind, nbind);
            if (st != 0) {
                free(e->graph);
                e->graph = nullptr;
                why = ops->status_str(st);
            }
        }
    }
    if (!why) {
        PtoApiRecording rec{};
        rec.g = e->graph;
        pto_api_graph_pass(&rec, boundary, &read, call);
        if (rt_is_fatal()) return false;
        why = rec.why;
        if (!why) {
            int32_t st = ops->graph_finish(ops->ctx, e->graph);
            if (st != 0) why = ops->status_str(st);
        }
        e->slots = rec.slots;
    }
    /* Whether recorded or not, what the function read is its identity. */
    e->values = read;
    for (int32_t i = 0; i < e->sig.nscalars; i++) {
        if (!(read >> i & 1)) e->sig.scalars[i] = 0;
    }
    if (why) {
        if (e->graph) ops->graph_close(ops->ctx, e->graph);
        free(e->graph);
        free(e->storage);
        e->graph = nullptr, e->storage = nullptr;
        e->plain = true;
        LOG_WARN("a graph function runs as ordinary tasks, not recorded: %s", why);
        return false;
    }
    pto_api_graphs_recorded++;
    return true;
}

/* Runs `fn(args, params...)` as a recorded graph: see the top of this file. */
template <typename... P>
inline void rt_submit_graph(void (*fn)(const CoreTaskArgs &, P...), const CoreTaskArgs &args,
                            P... params) {
    static_assert(((std::is_arithmetic_v<P> || std::is_enum_v<P>) && ...),
                  "rt_submit_graph: construction parameters are numbers, bools and enums");
    if (rt_is_fatal()) return;
    auto call = [&] { fn(args, params...); };
    /* Inside a recording: its tasks are the outer graph's. */
    if (pto_api_state.recording) return call();
    PtoApiSignature sig;
    PtoBuffer bind[MAX_TENSOR_ARGS];
    uint32_t nbind = 0;
    if (args.has_error || !pto_api_signature(args, &sig, bind, &nbind)) return call();
    uint64_t key = pto_api_fnv(0xcbf29ce484222325ull, &fn, sizeof fn);
    ((key = pto_api_fnv(key, &params, sizeof params)), ...);
    PtoApiGraphEntry *e = nullptr, *free_entry = nullptr;
    for (PtoApiGraphEntry &c : pto_api_graphs) {
        if (c.used && c.key == key && pto_api_same_identity(c.sig, sig, c.values)) {
            e = &c;
            break;
        }
        if (!c.used && !free_entry) free_entry = &c;
    }
    if (!e) {
        if (!free_entry) {
            if (!pto_api_graphs_full_told) {
                LOG_WARN("%d graph identities recorded: later new ones run as ordinary tasks",
                         PTO_API_GRAPHS);
                pto_api_graphs_full_told = true;
            }
            return call();
        }
        e = free_entry;
        /* Every scalar's value until the recording says which ones it read. */
        e->used = true, e->key = key, e->sig = sig, e->values = ~0u;
        if (!pto_api_graph_record(e, args, bind, nbind, call)) {
            if (!rt_is_fatal()) call();
            return;
        }
    }
    if (e->plain) return call();
    const PtoOrchOps *ops = pto_api_state.ops;
    if (pto_api_ok(ops->graph_replay(ops->ctx, e->graph, bind, nbind, args.scalars, e->slots, 0,
                                     0, nullptr, 0, nullptr),
                   __FUNCTION__, "replaying a recorded graph")) {
        pto_api_graphs_replayed++;
    }
}

#endif
