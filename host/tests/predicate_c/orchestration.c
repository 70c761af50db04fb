/* Predicated tasks from C. For each signedness (the element 5 unsigned, -3 signed), width
 * (1, 2, 4 and 8 bytes) and operator (PTO_CMP_EQ .. PTO_CMP_GE), two `mark` tasks test the
 * same element: the first with a target that makes the comparison true, the second with
 * one that makes it false. Then per signedness and width a `count` task reads the group's
 * 12 marks: it depends on all of them, the skipped ones included, and runs once they
 * finished or were skipped.
 *
 * args: kernels mark and count; buffers values (64 bytes: 5 as u8, u16, u32 and u64 at 0,
 * 8, 16 and 24; -3 as i8, i16, i32 and i64 at 32, 40, 48 and 56), marks (CASES words) and
 * counts (GROUPS words). A refused submit's status is returned as it came. */
#include "pto_aicpu.h"

#define CASES 96
#define GROUPS 8
#define PER_GROUP (CASES / GROUPS)

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

int32_t pto_orchestrate(const PtoOrchOps *ops, const uint64_t *args, uint32_t nargs) {
    if (nargs != 5) return 1;
    uint32_t mark = (uint32_t)args[0], count = (uint32_t)args[1];
    uint64_t values = args[2], marks = args[3], counts = args[4];
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
                    int32_t rc = ops->submit(ops->ctx, &t, NULL);
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
        int32_t rc = ops->submit(ops->ctx, &t, NULL);
        if (rc != PTO_OK) return rc;
    }
    return PTO_OK;
}
