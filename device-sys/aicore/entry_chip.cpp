// The executor's kernel entries on the chip (ccec only; the tests call pto_aicore_run
// directly). The host launches them once per run with blockDim = clusters, on the AICore
// stream, before the AICPU's exec: block b is cluster b, whose AIC is logical core b and
// whose two AIV are logical cores aic_cores + 2 b and aic_cores + 2 b + 1.
#include "executor.cpp"

// Both read their PtoAicoreArgs (pto_aicore_layout.h), which the host writes.
#if defined(__DAV_C220_CUBE__)
extern "C" __global__ __aicore__ void pto_aicore_executor_mix_aic(__gm__ PtoAicoreArgs *a) {
    uint32_t block = (uint32_t)get_block_idx();
    __gm__ PtoHandshake *hs = (__gm__ PtoHandshake *)a->handshakes;
    pto_aicore_run(&hs[block], block, PTO_CORE_AIC);
}
#endif

#if defined(__DAV_C220_VEC__)
extern "C" __global__ __aicore__ void pto_aicore_executor_mix_aiv(__gm__ PtoAicoreArgs *a) {
    uint32_t block = (uint32_t)get_block_idx();
    uint32_t core = a->aic_cores + 2u * block + (uint32_t)get_subblockid();
    __gm__ PtoHandshake *hs = (__gm__ PtoHandshake *)a->handshakes;
    pto_aicore_run(&hs[core], block, PTO_CORE_AIV);
}
#endif
