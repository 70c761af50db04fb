/* The PTO runtime's communicator, C ABI (pto-host, shared-memory backend).
 * Every call returns 0 on success or a negative code:
 *   -1 bad argument or state, -2 bad rank, -3 bad window size, -4 timeout,
 *   -5 a peer failed, -6 bad or taken run id, -7 OS error, -99 internal bug. */
#ifndef PTO_COMM_H
#define PTO_COMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CommHandle CommHandle;

/* rendezvous: the job's run id. Returns NULL on bad input. */
CommHandle *comm_init(int rank, int nranks, int device_id, const char *rendezvous);
/* Collective. *device_ctx_out receives the address of this rank's CommContext (1056 bytes).
 * -3 also when /dev/shm has too little room for every window. Once every rank has mapped the
 * job's object its name is removed, so no failure after this call can leak it. */
int comm_alloc_windows(CommHandle *h, size_t win_size, uint64_t *device_ctx_out);
int comm_get_local_window_base(CommHandle *h, uint64_t *base_out);
int comm_get_window_size(CommHandle *h, size_t *size_out);
int comm_barrier(CommHandle *h);
/* Frees h; NULL is accepted. */
int comm_destroy(CommHandle *h);

#ifdef __cplusplus
}
#endif

#endif
