//! The record pump: with a record stream (`PtoAicpuExecArgs::record_stream`), one more exec
//! thread takes task records out of the profile ring while the run goes
//! (`pto_runtime_core::RecordDrain`) and hands them to the host's ring through a
//! `RecordOutlet` (`pto_device_sys::chip::record_outlet`), which the host empties as the run
//! goes. So a run keeps a record per task however many tasks it has: a full profile ring
//! makes submits wait for the pump, and a full host ring makes the pump wait for the host,
//! bounded by the stream's `wait_us`; past that the pump counts the records it could not
//! keep (reported, never silent).

use core::sync::atomic::Ordering;

use pto_device_sys::chip::RecordOutlet;
use pto_runtime_core::ffi::PtoRecord;

use crate::raw::record_ring;
use crate::run::Run;

/// The pump's part in `run`: drains until every scheduler has stopped, then takes the rest.
pub(crate) fn pump(run: &Run) {
    let taken = run.drain.lock().take();
    let (Some(mut drain), Some(ring)) = (taken, record_ring::records(&run.args)) else {
        return;
    };
    let ring = ring.with_idle(Some(crate::raw::cpu::idle));
    let wait = ring.wait_us().saturating_mul(run.settings.ticks_per_us);
    let mut out = RecordOutlet::new(ring, wait);
    loop {
        // Read before the drain: once no scheduler runs, that drain sees every record.
        let over = run.schedulers_left.load(Ordering::Acquire) == 0;
        drain.drain(|r| out.push(&PtoRecord::from_record(&r)));
        out.publish();
        if over {
            break;
        }
        crate::raw::cpu::idle();
    }
    drain.finish(|r| out.push(&PtoRecord::from_record(&r)));
    let (pumped, lost) = out.close();
    run.pumped.store(pumped, Ordering::Relaxed);
    run.pump_lost.store(lost, Ordering::Relaxed);
}
