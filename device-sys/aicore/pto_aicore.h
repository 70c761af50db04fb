/* The AICore side of the PTO handshake: the layouts the executor shares with the AICPU
 * (device-sys/src/chip/layout.rs pins the same ones), the control values of the register
 * window, and what a kernel may call. Built by ccec for the chip, or by the host C compiler
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

#define PTO_DMB_IDLE 0x7FFFFFFDu
#define PTO_DMB_EXIT 0x7FFFFFF0u
#define PTO_COND_FIN 0x80000000u
#define PTO_COND_EXIT_ACK (PTO_COND_FIN | 0x7FFFFFFEu)
/* The last token before the sequence wraps to 1 (the top 16 values are control values). */
#define PTO_TOKEN_LAST (0x7FFFFFFFu - 16u)
#define PTO_SLOT_ARGS 48
#define PTO_SLOT_CONDITIONS 7
/* The result code of a slot whose kernel address is 0. */
#define PTO_FAIL_NO_KERNEL 0xFFFF0001u

#ifdef __cplusplus
#define PTO_EXTERN_C extern "C"
extern "C" {
#else
#define PTO_EXTERN_C
#endif

/* One core's handshake block (device memory, a cache line of its own). */
typedef struct {
    uint32_t aicpu_ready;      /* 1 once the AICPU wrote task and base_token */
    uint32_t aicore_done;      /* block_idx + 1 once the executor is up */
    uint64_t task;             /* address of the core's two PtoSlot */
    uint32_t core_type;        /* 0: AIC, 1: AIV */
    uint32_t physical_core_id; /* index of the core's register window */
    uint32_t base_token;       /* the token before this run's first */
    uint32_t aicore_exited;    /* 1 once this run's executor left (the AICPU clears it) */
    uint8_t pad[32];
} PtoHandshake;

typedef struct {
    uint32_t kind;
    uint32_t reserved;
    uint64_t word;
    uint64_t expected;
} PtoRawCondition;

/* One payload slot (two per core, chosen by the token's parity). */
typedef struct {
    uint64_t result;      /* token | failed << 31 | code << 32, written before FIN */
    uint64_t kernel_addr; /* void (*)(int64_t *args) */
    uint64_t task;
    uint32_t kernel;
    uint32_t shape; /* lane | lanes << 8 | nargs << 16 | profile << 24 */
    uint64_t times[2];
    uint32_t fail_code; /* set by pto_kernel_fail */
    uint32_t ntensors;  /* args[0..ntensors) are the task's tensor addresses */
    uint64_t tensors;   /* address of ntensors PtoKernelTensor, or 0 (no descriptor area) */
    uint64_t args[PTO_SLOT_ARGS]; /* tensor addresses, then scalar arguments */
    uint32_t ncond;
    uint32_t block; /* block | blocks << 16: this execution's SPMD block, of how many */
    PtoRawCondition conditions[PTO_SLOT_CONDITIONS];
    uint64_t tail[2];
} PtoSlot;

/* A tensor argument as the kernel receives it (pto_runtime_core::ffi::PtoTensor, 128
 * bytes): element (k0, .., k[rank-1]) lies at base + elem * sum(k_i * strides[i]), and base
 * is start_offset elements into the buffer [buffer, buffer + buffer_len). */
typedef struct {
    uint64_t base;         /* the tile's element (0, .., 0) */
    uint64_t buffer;       /* the first byte of the buffer the tile lies in */
    uint64_t buffer_len;   /* the buffer's bytes */
    uint64_t start_offset; /* where the tile starts in the buffer, in elements */
    uint32_t elem;         /* bytes per element */
    uint8_t rank;          /* dimensions in use, 1 to 5 */
    uint8_t access;        /* 0: read, 1: written, 2: read then written */
    uint8_t dtype;         /* PTO_DTYPE_* of pto_runtime.h, or 0: the task did not say */
    uint8_t reserved;
    uint32_t shape[5]; /* elements per dimension, outermost first */
    uint32_t reserved2;
    uint64_t strides[5];
    uint64_t tail[3];
} PtoKernelTensor;

#ifdef __cplusplus
#define PTO_STATIC_ASSERT static_assert
#else
#define PTO_STATIC_ASSERT _Static_assert
#endif
PTO_STATIC_ASSERT(sizeof(PtoHandshake) == 64, "handshake block: 64 bytes");
PTO_STATIC_ASSERT(offsetof(PtoHandshake, task) == 8, "handshake task");
PTO_STATIC_ASSERT(offsetof(PtoHandshake, physical_core_id) == 20, "handshake id");
PTO_STATIC_ASSERT(offsetof(PtoHandshake, base_token) == 24, "handshake base");
PTO_STATIC_ASSERT(offsetof(PtoHandshake, aicore_exited) == 28, "handshake exited");
PTO_STATIC_ASSERT(sizeof(PtoSlot) == 640, "payload slot: 640 bytes");
PTO_STATIC_ASSERT(offsetof(PtoSlot, fail_code) == 48, "slot fail_code");
PTO_STATIC_ASSERT(offsetof(PtoSlot, ntensors) == 52, "slot ntensors");
PTO_STATIC_ASSERT(offsetof(PtoSlot, tensors) == 56, "slot tensors");
PTO_STATIC_ASSERT(sizeof(PtoKernelTensor) == 128, "tensor descriptor: 128 bytes");
PTO_STATIC_ASSERT(offsetof(PtoKernelTensor, elem) == 32, "descriptor elem");
PTO_STATIC_ASSERT(offsetof(PtoKernelTensor, dtype) == 38, "descriptor dtype");
PTO_STATIC_ASSERT(offsetof(PtoKernelTensor, shape) == 40, "descriptor shape");
PTO_STATIC_ASSERT(offsetof(PtoKernelTensor, strides) == 64, "descriptor strides");
PTO_STATIC_ASSERT(offsetof(PtoSlot, args) == 64, "slot args");
PTO_STATIC_ASSERT(offsetof(PtoSlot, ncond) == 448, "slot ncond");
PTO_STATIC_ASSERT(offsetof(PtoSlot, block) == 452, "slot block");
PTO_STATIC_ASSERT(offsetof(PtoSlot, conditions) == 456, "slot conditions");

/* A kernel: its payload slot's arguments, the task's tensor addresses (in the order the
 * task gave its tensor arguments) then its scalar arguments. A kernel file's entry is the
 * function named pto_kernel_entry, unless the run names another symbol (`k.so:name`). */
typedef void (*PtoKernel)(PTO_GM int64_t *args);

/* The version of this kernel ABI: the slot and descriptor layouts above and the calls below
 * (device-sys/src/chip/layout.rs: KERNEL_ABI_VERSION). */
#define PTO_KERNEL_ABI_VERSION 4u

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
