/* Predicated tasks from C. For each signedness (the element 5 unsigned, -3 signed), width
 * (1, 2, 4 and 8 bytes) and operator (PTO_CMP_EQ .. PTO_CMP_GE), two `mark` tasks test the
 * same element: the first with a target that makes the comparison true, the second with
 * one that makes it false. Then per signedness and width a `count` task reads the group's
 * 12 marks: it depends on all of them, the skipped ones included, and runs once they
 * finished or were skipped.
 *
 * args: kernels mark and count; buffers values (64 bytes: 5 as u8, u16, u32 and u64 at 0,
 * 8, 16 and 24; -3 as i8, i16, i32 and i64 at 32, 40, 48 and 56), marks (CASES words) and
 * counts (GROUPS words); and optionally a sixth, a decoy buffer of 64 zero bytes: then the
 * tasks are recorded as a graph whose boundaries are the decoy, marks and counts, and the
 * graph is replayed with values bound in the decoy's place, so every predicate reads the
 * element of its binding, not of the buffer it was recorded on (the decoy's zeros would
 * flip half of them). A refused submit's status is returned as it came. */
#include "pto_aicpu.h"

#define CASES 96
#define GROUPS 8
#define PER_GROUP (CASES / GROUPS)
/* The graph's storage; more than graph_storage_size says (checked). */
#define STORAGE (256 * 1024)
#define GRAPH_STORAGE_TOO_SMALL 2

static PtoTensorArg words(uint64_t buffer, uint64_t len, uint64_t base, uint32_t n,
                          PtoAccess access) {
    PtoTensorArg t = {.buffer = buffer, .buffer_len = len, .base = base, .elem = 8, .rank = 1,
                      .access = access, .shape = {n, 1, 1, 1, 1}, .strides = {1}};
    return t;
}

/* Per operator, what to add to the element for a target that makes it true, and false. */
static const int64_t MAKES_TRUE[6] = {0, 1, 1, 0, -1, 0};
static const int64_t MAKES_FALSE[6] = {1, 0, 0, -1, 0, 1};
static const uint8_t WIDTHS[4] = {1, 2, 4, 8};

/* Where each task goes: submitted, or added to the recording `g`. */
typedef struct {
    const PtoOrchOps *ops;
    PtoGraph *g; /* NULL: submit */
} Sink;

static int32_t put(Sink s, const PtoTask *t) {
    return s.g ? s.ops->graph_add(s.ops->ctx, s.g, t, NULL, 0, NULL)
               : s.ops->submit(s.ops->ctx, t, NULL);
}

/* The DAG, its predicates reading `values`. */
static int32_t dag(Sink s, uint32_t mark, uint32_t count, uint64_t values, uint64_t marks,
                   uint64_t counts) {
    uint32_t k = 0;
    for (uint8_t is_signed = 0; is_signed < 2; is_signed++) {
        int64_t v = is_signed ? -3 : 5;
        for (uint32_t w = 0; w < 4; w++) {
            for (uint8_t op = PTO_CMP_EQ; op <= PTO_CMP_GE; op++) {
                for (int truth = 1; truth >= 0; truth--, k++) {
                    int64_t target = v + (truth ? MAKES_TRUE[op] : MAKES_FALSE[op]);
                    PtoPredicate p = {.addr = values + 32 * is_signed + 8 * w,
                                      .target = (uint64_t)target,
                                      .width = WIDTHS[w],
                                      .op = op,
                                      .is_signed = is_signed};
                    PtoTensorArg out =
                        words(marks, 8 * CASES, marks + 8 * k, 1, PtoAccess_WRITE);
                    PtoTask t = {.kernel = mark, .class_ = 1, .tensors = &out, .ntensors = 1,
                                 .predicate = &p};
                    int32_t rc = put(s, &t);
                    if (rc != PTO_OK) return rc;
                }
            }
        }
    }
    for (uint32_t g = 0; g < GROUPS; g++) {
        PtoTensorArg sum[2] = {
            words(marks, 8 * CASES, marks + 8 * PER_GROUP * g, PER_GROUP, PtoAccess_READ),
            words(counts, 8 * GROUPS, counts + 8 * g, 1, PtoAccess_WRITE)};
        PtoTask t = {.kernel = count, .class_ = 1, .tensors = sum, .ntensors = 2};
        int32_t rc = put(s, &t);
        if (rc != PTO_OK) return rc;
    }
    return PTO_OK;
}

static _Alignas(64) unsigned char storage[STORAGE];
static PtoGraph graph;

/* Records the DAG on the decoy, marks and counts; replays it with values bound instead. */
static int32_t recorded_then_replayed(const PtoOrchOps *ops, const uint64_t *args) {
    uint32_t mark = (uint32_t)args[0], count = (uint32_t)args[1];
    uint64_t values = args[2], marks = args[3], counts = args[4], decoy = args[5];
    /* Tasks, tensor arguments, edge words (each count after its group's 12 marks). */
    uint32_t tasks = CASES + GROUPS, targs = CASES + 2 * GROUPS, edges = CASES;
    size_t bytes = 0;
    int32_t rc = ops->graph_storage_size(tasks, targs, edges, &bytes);
    if (rc != PTO_OK) return rc;
    if (bytes > sizeof storage) return GRAPH_STORAGE_TOO_SMALL;
    PtoBuffer recorded[3] = {{decoy, 64}, {marks, 8 * CASES}, {counts, 8 * GROUPS}};
    rc = ops->graph_record(ops->ctx, &graph, storage, sizeof storage, tasks, targs, edges,
                           recorded, 3);
    if (rc != PTO_OK) return rc;
    Sink s = {ops, &graph};
    rc = dag(s, mark, count, decoy, marks, counts);
    if (rc == PTO_OK) rc = ops->graph_finish(ops->ctx, &graph);
    PtoBuffer bound[3] = {{values, 64}, {marks, 8 * CASES}, {counts, 8 * GROUPS}};
    if (rc == PTO_OK)
        rc = ops->graph_replay(ops->ctx, &graph, bound, 3, NULL, 0, 0, 0, NULL, 0, NULL);
    int32_t closed = ops->graph_close(ops->ctx, &graph);
    return rc != PTO_OK ? rc : closed;
}

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs == 6) return recorded_then_replayed(ops, args);
    if (nargs != 5) return 1;
    Sink s = {ops, NULL};
    return dag(s, (uint32_t)args[0], (uint32_t)args[1], args[2], args[3], args[4]);
}
