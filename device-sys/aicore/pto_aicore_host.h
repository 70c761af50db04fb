/* The host stand-in for the chip's AICore primitives, so the executor runs on a thread in
 * tests: the register window is memory the test maps (set per thread with
 * pto_host_bind_core), cache maintenance is a fence, the clock is the AICPU's counter. */
#ifndef PTO_AICORE_HOST_H
#define PTO_AICORE_HOST_H

#include <stdint.h>

#define PTO_GM

#ifdef __cplusplus
extern "C" {
#endif

/* Binds the calling thread to a core: its register window and physical id. */
void pto_host_bind_core(volatile uint32_t *window, uint32_t physical_core_id);
/* Seconds the executor waits with nothing to do before it gives up (host builds only). */
void pto_host_set_idle_limit(uint32_t seconds);

uint32_t pto_host_core_id(void);
uint32_t pto_host_read_dmb(void);
void pto_host_write_cond(uint32_t v);
uint64_t pto_host_clock(void);
/* Whether `spins` idle iterations (the caller counts) exceeded the idle limit. */
int pto_host_give_up(uint64_t spins);

#ifdef __cplusplus
}
#endif

#define pto_core_id() pto_host_core_id()
#define pto_read_dmb() pto_host_read_dmb()
#define pto_write_cond(v) pto_host_write_cond(v)
#define pto_clock() pto_host_clock()
#define pto_barrier() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define pto_dcci_in(p, n) __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define pto_dcci_out(p, n) __atomic_thread_fence(__ATOMIC_RELEASE)
#define pto_give_up(spins) pto_host_give_up(spins)

#endif
