/* The host stand-in for the chip's AICore primitives (see pto_aicore_host.h). */
#define _GNU_SOURCE
#include "pto_aicore.h"

#include <sched.h>
#include <time.h>

static _Thread_local volatile uint32_t *pto_window;
static _Thread_local uint32_t pto_core;
static uint32_t pto_idle_limit_s = 30;

void pto_host_bind_core(volatile uint32_t *window, uint32_t physical_core_id) {
    pto_window = window;
    pto_core = physical_core_id;
}

void pto_host_set_idle_limit(uint32_t seconds) { __atomic_store_n(&pto_idle_limit_s, seconds, __ATOMIC_RELAXED); }

uint32_t pto_host_core_id(void) { return pto_core; }

uint32_t pto_host_read_dmb(void) { return pto_window[0xA0 / 4]; }

void pto_host_write_cond(uint32_t v) { pto_window[0x4C8 / 4] = v; }

uint64_t pto_host_clock(void) {
#if defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v));
    return v;
#elif defined(__x86_64__)
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
#else
#error "pto_host_clock: aarch64 or x86_64"
#endif
}

static double pto_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static _Thread_local double pto_idle_since;

int pto_host_give_up(uint64_t spins) {
    /* Tests run more threads than CPUs: an idle core gives its CPU away. */
    sched_yield();
    if (spins == 1) {
        pto_idle_since = pto_seconds();
        return 0;
    }
    if (spins % 4096 != 0) {
        return 0;
    }
    return pto_seconds() - pto_idle_since > (double)__atomic_load_n(&pto_idle_limit_s, __ATOMIC_RELAXED);
}
