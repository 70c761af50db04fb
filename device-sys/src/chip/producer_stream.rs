//! The producers' stream: with it, the orchestrating thread tells the host each task it
//! submits and the tasks that task depends on ([`PtoProducers`] entries, through a
//! [`RecordOutlet`] like the task records'), so the host can draw an NPU run's DAG beside
//! its records (the critical path and the overhead shares of `pto-launch trace`). A run
//! opens it ([`ProducerStream::open`]); the chip platform pushes into it from
//! `Platform::submitted`; the orchestrating thread closes it once it stops submitting.
#![forbid(unsafe_code)]

use core::sync::atomic::{AtomicBool, Ordering};

use pto_runtime_core::TaskId;

use super::record_outlet::RecordOutlet;
use crate::abi::PtoProducers;
use crate::raw::stream_ring::StreamRing;

/// A run's producers' stream, shared by the threads of the SO (one static).
pub struct ProducerStream {
    outlet: spin::Mutex<Option<RecordOutlet<StreamRing<PtoProducers>>>>,
    open: AtomicBool,
}

impl core::fmt::Debug for ProducerStream {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ProducerStream")
            .field("open", &self.is_open())
            .finish_non_exhaustive()
    }
}

impl Default for ProducerStream {
    fn default() -> Self {
        Self::new()
    }
}

impl ProducerStream {
    /// A closed stream.
    pub const fn new() -> Self {
        ProducerStream {
            outlet: spin::Mutex::new(None),
            open: AtomicBool::new(false),
        }
    }

    /// Opens the stream over `ring`, waiting at most `wait` counter ticks for the host.
    pub fn open(&self, ring: StreamRing<PtoProducers>, wait: u64) {
        *self.outlet.lock() = Some(RecordOutlet::new(ring, wait));
        self.open.store(true, Ordering::Release);
    }

    /// Whether a run streams its producers.
    #[inline]
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    /// Tells the host `task` and its `producers` (as many entries as it takes).
    pub fn push(&self, task: TaskId, producers: &[TaskId]) {
        let mut guard = self.outlet.lock();
        let Some(out) = guard.as_mut() else { return };
        let mut chunks = producers.chunks(PtoProducers::PER_ENTRY);
        let mut entry = |ps: &[TaskId]| {
            let mut e = PtoProducers {
                task: task.raw(),
                producers: [PtoProducers::NONE; PtoProducers::PER_ENTRY],
            };
            for (d, p) in e.producers.iter_mut().zip(ps) {
                *d = p.raw();
            }
            out.push(&e);
        };
        match chunks.next() {
            None => entry(&[]),
            Some(first) => {
                entry(first);
                chunks.for_each(entry);
            }
        }
    }

    /// Publishes the rest and closes the stream: (entries written, entries lost); `None` if
    /// it was not open.
    pub fn close(&self) -> Option<(u64, u64)> {
        self.open.store(false, Ordering::Relaxed);
        self.outlet.lock().take().map(RecordOutlet::close)
    }
}
