/* The chip's AICore primitives for the executor, built by ccec (scripts/build-aicore.sh).
 * Not built or run here: no ccec on this machine. The intrinsic names follow CANN's CCE
 * headers as we understand them; check them against the installed CANN before use. */
#ifndef PTO_AICORE_CHIP_H
#define PTO_AICORE_CHIP_H

#include <stdint.h>

#define PTO_GM __gm__

#define pto_core_id() ((uint32_t)get_coreid())
#define pto_read_dmb() ((uint32_t)get_data_main_base())
#define pto_write_cond(v) set_cond((uint64_t)(v))
#define pto_clock() ((uint64_t)get_sys_cnt())
#define pto_barrier() dsb((mem_dsb_t)0)
#define pto_dcci_in(p, n) dcci((__gm__ void *)(p), (uint64_t)1)
#define pto_dcci_out(p, n) dcci((__gm__ void *)(p), (uint64_t)1)
/* A resident executor waits for its exit for as long as it takes. */
#define pto_give_up(spins) 0

#endif
