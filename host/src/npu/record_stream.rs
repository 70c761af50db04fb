//! The host's end of the streams of a run (`pto_device_sys::abi::PtoRecordStream`): while
//! the AICPU's `exec` runs, the host copies out what the device published (the task records
//! its record pump drains, each task's producers as the orchestrator submits it) and tells
//! it how many it took, so rings of a fixed size carry a whole run. The host polls: it
//! reads the writer's count, copies the new entries (in at most two pieces, the ring
//! wraps), writes its own count, then waits on the AICPU stream for [`POLL_MS`] before it
//! looks again.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use bytemuck::Pod;
use pto_device_sys::abi::PtoRecordStream;
use pto_device_sys::cann::{CannError, DeviceMem, Stream};

/// How long the host waits on the AICPU stream between two looks at the streams, ms.
pub const POLL_MS: i32 = 2;

/// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT`: the stream had not finished within the wait.
const SYNC_TIMEOUT: i64 = 507_046;

/// Bytes a control block takes with room to align it to 64 bytes.
pub const CONTROL_BYTES: usize = size_of::<PtoRecordStream>() + 64;

/// The host's end of one stream of `T`.
pub struct Collector<'m, T> {
    /// The control block: its memory and the block's offset in it (64-byte aligned).
    ctl: (&'m DeviceMem, usize),
    ring: &'m DeviceMem,
    cap: u64,
    taken: Vec<T>,
}

impl<'m, T: Pod> Collector<'m, T> {
    /// The collector of the stream whose control block is in `ctl` (allocated with
    /// [`CONTROL_BYTES`]) and whose ring is `ring`; zeroes the block and sets the writer's
    /// wait. Returns it and the block's device address, for the exec arguments.
    pub fn new(
        ctl: &'m DeviceMem,
        ring: &'m DeviceMem,
        wait_us: u64,
    ) -> Result<(Self, u64), CannError> {
        let at = (ctl.addr().next_multiple_of(64) - ctl.addr()) as usize;
        let block = PtoRecordStream {
            wait_us,
            ..PtoRecordStream::default()
        };
        ctl.write_value(at, &block)?;
        let c = Collector {
            ctl: (ctl, at),
            ring,
            cap: (ring.len() / size_of::<T>()) as u64,
            taken: Vec::new(),
        };
        Ok((c, ctl.addr() + at as u64))
    }

    fn word(&self, offset: usize) -> Result<u64, CannError> {
        let mut w = [0u8; 8];
        self.ctl.0.read(self.ctl.1 + offset, &mut w)?;
        Ok(u64::from_ne_bytes(w))
    }

    /// Takes the entries the writer published since the last call; how many.
    pub fn collect(&mut self) -> Result<usize, CannError> {
        let produced = self.word(PtoRecordStream::PRODUCED)?;
        let have = self.taken.len() as u64;
        if produced <= have {
            return Ok(0);
        }
        if produced - have > self.cap {
            return Err(CannError::Invalid(format!(
                "the device says it wrote {produced} entries of a stream with {have} taken, \
                 more than its ring of {} holds: a device that does not follow the stream's \
                 protocol",
                self.cap
            )));
        }
        let mut i = have;
        while i < produced {
            let at = i % self.cap;
            let n = (produced - i).min(self.cap - at);
            let mut piece = vec![T::zeroed(); n as usize];
            self.ring.read(
                at as usize * size_of::<T>(),
                bytemuck::cast_slice_mut(&mut piece),
            )?;
            self.taken.extend_from_slice(&piece);
            i += n;
        }
        self.ctl.0.write(
            self.ctl.1 + PtoRecordStream::COLLECTED,
            &produced.to_ne_bytes(),
        )?;
        Ok((produced - have) as usize)
    }

    /// Every entry taken, in the order written, and the entries the writer says it lost.
    pub fn finish(self) -> Result<(Vec<T>, u64), CannError> {
        let lost = self.word(core::mem::offset_of!(PtoRecordStream, lost))?;
        Ok((self.taken, lost))
    }
}

/// Anything the host collects from while a run goes.
pub trait Collect {
    /// Takes what was published since the last call.
    fn collect_now(&mut self) -> Result<(), CannError>;
}

impl<T: Pod> Collect for Collector<'_, T> {
    fn collect_now(&mut self) -> Result<(), CannError> {
        self.collect().map(drop)
    }
}

/// Collects from `streams` while `stream` runs, within `timeout_ms` in all; then takes the
/// rest.
pub fn collect_until_done(
    streams: &mut [&mut dyn Collect],
    stream: &Stream,
    timeout_ms: i32,
) -> Result<(), CannError> {
    let until = Instant::now() + Duration::from_millis(timeout_ms.max(0) as u64);
    loop {
        for s in streams.iter_mut() {
            s.collect_now()?;
        }
        match stream.synchronize(POLL_MS) {
            Ok(()) => break,
            Err(CannError::Call { code, .. }) if code == SYNC_TIMEOUT && Instant::now() < until => {
            }
            Err(e) => return Err(e),
        }
    }
    for s in streams.iter_mut() {
        s.collect_now()?;
    }
    Ok(())
}
