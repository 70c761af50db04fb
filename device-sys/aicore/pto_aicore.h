/* The AICore side of the PTO handshake: the layouts the executor shares with the AICPU and
 * the handshake's control values (pto_aicore_layout.h, generated from
 * device-sys/src/chip/layout.rs; PTO_KERNEL_ABI_VERSION versions them with the calls
 * below), and what a kernel may call. Built by ccec for the chip, or by the host C compiler
 * for tests (pto_aicore_host.h then stands in for the chip's registers). */
#ifndef PTO_AICORE_H
#define PTO_AICORE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CCE_AICORE__)
#include "pto_aicore_chip.h"
#else
#include "pto_aicore_host.h"
#endif

#include "pto_aicore_layout.h"

#ifdef __cplusplus
#define PTO_EXTERN_C extern "C"
extern "C" {
#else
#define PTO_EXTERN_C
#endif

#ifdef __cplusplus
#define PTO_STATIC_ASSERT static_assert
#else
#define PTO_STATIC_ASSERT _Static_assert
#endif
/* The layouts are generated from the Rust declarations; these say the C compiler lays them
 * out as Rust does (an alignment attribute it ignored would show here). */
PTO_STATIC_ASSERT(sizeof(PtoHandshake) == 64, "handshake block: 64 bytes");
PTO_STATIC_ASSERT(sizeof(PtoSlot) == 640, "payload slot: 640 bytes");
PTO_STATIC_ASSERT(sizeof(PtoKernelTensor) == 128, "tensor descriptor: 128 bytes");

/* A kernel: its payload slot's arguments, the task's tensor addresses (in the order the
 * task gave its tensor arguments) then its scalar arguments. A kernel file's entry is the
 * function named pto_kernel_entry, unless the run names another symbol (`k.so:name`). */
typedef void (*PtoKernel)(PTO_GM int64_t *args);

#if !defined(__CCE_AICORE__)
/* Every kernel built for the simulator carries the ABI version it was built against, so a
 * kernel built with another version of this header is refused when it is loaded, not run
 * with the wrong layout. Weak: each source of a kernel that includes this header defines
 * it, and the linker keeps one. */
extern const uint32_t pto_kernel_abi_version;
#ifdef __cplusplus
/* `extern` on the definition too: a namespace-scope const is internal in C++ otherwise. */
__attribute__((weak, used, visibility("default"))) extern const uint32_t
    pto_kernel_abi_version = PTO_KERNEL_ABI_VERSION;
#else
__attribute__((weak, used, visibility("default"))) const uint32_t pto_kernel_abi_version =
    PTO_KERNEL_ABI_VERSION;
#endif
#endif

/* The payload slot of the running kernel, from the pointer it was called with. */
static inline PTO_GM PtoSlot *pto_kernel_slot(PTO_GM int64_t *args) {
    return (PTO_GM PtoSlot *)((PTO_GM uint8_t *)args - offsetof(PtoSlot, args));
}

/* The lane this kernel runs on in its task: 0 for a task of one core, and for a MIX task 0
 * on the cluster's AIC, 1 and 2 on its AIVs (its AIV sub-block is the lane minus 1). */
static inline uint32_t pto_kernel_lane(PTO_GM int64_t *args) {
    return pto_kernel_slot(args)->shape & 0xffu;
}

/* The SPMD block this execution of the kernel runs: 0 up to pto_kernel_block_num(args). */
static inline uint32_t pto_kernel_block_idx(PTO_GM int64_t *args) {
    return pto_kernel_slot(args)->block & 0xffffu;
}

/* How many SPMD blocks the running task has (1 unless it asked for more). */
static inline uint32_t pto_kernel_block_num(PTO_GM int64_t *args) {
    return pto_kernel_slot(args)->block >> 16;
}

/* How many tensor arguments the running task has: args[0..n) are their addresses, and the
 * scalar arguments start at args[n]. */
static inline uint32_t pto_kernel_ntensors(PTO_GM int64_t *args) {
    return pto_kernel_slot(args)->ntensors;
}

/* The running task's tensor argument `i` (address, buffer and offset, element size and
 * type, shape, strides, access), or NULL past the last one or when the run gave no
 * descriptor area. */
static inline PTO_GM const PtoKernelTensor *pto_kernel_tensor(PTO_GM int64_t *args,
                                                               uint32_t i) {
    PTO_GM PtoSlot *slot = pto_kernel_slot(args);
    if (i >= slot->ntensors || slot->tensors == 0) {
        return 0;
    }
    return (PTO_GM const PtoKernelTensor *)(uintptr_t)slot->tensors + i;
}

/* Elements of tensor `t` (the product of its shape). */
static inline uint64_t pto_tensor_elems(PTO_GM const PtoKernelTensor *t) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < t->rank && d < 5; d++) {
        n *= t->shape[d];
    }
    return n;
}

/* Marks the running kernel failed with `code` (non-zero; 0 becomes 1). `args` is the
 * pointer the kernel was called with. */
static inline void pto_kernel_fail(PTO_GM int64_t *args, uint32_t code) {
    PTO_GM PtoSlot *slot = pto_kernel_slot(args);
    slot->fail_code = code ? code : 1u;
}

/* Registers a deferred condition for the running task: `*(uint32_t *)addr >= expected`
 * (kind 1), `*(uint64_t *)addr >= expected` (kind 2), or engine `addr`'s completion
 * watermark at least `expected` (kind 3). The task completes (and its consumers start)
 * only once every condition holds. Past PTO_SLOT_CONDITIONS the count still grows, and
 * the AICPU fails the task. */
static inline void pto_kernel_defer(PTO_GM int64_t *args, uint32_t kind, uint64_t addr,
                                    uint64_t expected) {
    PTO_GM PtoSlot *slot = pto_kernel_slot(args);
    uint32_t n = slot->ncond;
    if (n < PTO_SLOT_CONDITIONS) {
        slot->conditions[n].kind = kind;
        slot->conditions[n].reserved = 0;
        slot->conditions[n].word = addr;
        slot->conditions[n].expected = expected;
    }
    slot->ncond = n + 1;
}

/* The executor's loop on one core; returns after the exit handshake (or, in host builds
 * only, when nothing happened for a long time). On the chip it is local to each of the two
 * objects (cube, vector) that entry_chip.cpp makes by including executor.cpp. */
#if defined(__CCE_AICORE__)
#define PTO_EXECUTOR_FN static
#else
#define PTO_EXECUTOR_FN PTO_EXTERN_C
void pto_aicore_run(PTO_GM PtoHandshake *hs, uint32_t block_idx, uint32_t core_type);
#endif

#ifdef __cplusplus
}
#endif

#endif
