//! The streams to the host the exec arguments name (`record_stream` with `records`,
//! `producer_stream` with `producers`), as the safe `StreamRing`s their writers take.
//! `setup` checks the addresses (aligned, a ring of at least one entry) before the writers
//! ask for them.

use pto_device_sys::abi::{PtoAicpuExecArgs, PtoProducers};
use pto_device_sys::raw::stream_ring::StreamRing;
use pto_runtime_core::ffi::PtoRecord;

/// The task records' stream `a` names, for the record pump; `None` without one.
pub(crate) fn records(a: &PtoAicpuExecArgs) -> Option<StreamRing<PtoRecord>> {
    // SAFETY: the host gives the run a control block (64-byte aligned, checked at setup)
    // and a ring of `records_cap` records in device memory (the ABI's contract), which only
    // the record pump writes during the run, and only through this one ring.
    unsafe { StreamRing::new(a.record_stream, a.records, a.records_cap, a.coherence == 1) }
}

/// The producers' stream `a` names, for the orchestrating thread; `None` without one.
pub(crate) fn producers(a: &PtoAicpuExecArgs) -> Option<StreamRing<PtoProducers>> {
    // SAFETY: as for `records`: the host gives a control block (aligned, checked at setup)
    // and `producers_cap` entries, which only the orchestrating thread writes, through the
    // one ring setup opens per run.
    unsafe {
        StreamRing::new(
            a.producer_stream,
            a.producers,
            a.producers_cap,
            a.coherence == 1,
        )
    }
}
