//! The host's end of a stream (task records, producers), as the harness plays it: a
//! control block the SO's writer fills, and a thread that takes the entries out while the
//! run goes (or none, to play a host that stalled).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

use pto_device_sys::abi::PtoRecordStream;

/// How the harness plays the host's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordHost {
    /// A thread takes the records as the pump publishes them.
    Collects,
    /// Nobody takes any; the pump waits `wait_us` for the host, then counts them lost.
    Stalled {
        /// The block's `wait_us`.
        wait_us: u64,
    },
}

/// One run's control block and its collector thread.
pub struct HostEnd<T> {
    block: Box<PtoRecordStream>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<T>>>,
}

impl<T: Copy + Send + 'static> HostEnd<T> {
    /// The host's end for a ring of `cap` entries at `ring`, played as `how`.
    pub fn start(how: RecordHost, ring: *const T, cap: usize) -> Self {
        let wait_us = match how {
            RecordHost::Collects => 0,
            RecordHost::Stalled { wait_us } => wait_us,
        };
        let block = Box::new(PtoRecordStream {
            wait_us,
            ..PtoRecordStream::default()
        });
        let stop = Arc::new(AtomicBool::new(false));
        let thread = (how == RecordHost::Collects).then(|| {
            let (at, ring, stop) = (&*block as *const _ as usize, ring as usize, stop.clone());
            std::thread::spawn(move || collect::<T>(at, ring, cap, &stop))
        });
        HostEnd {
            block,
            stop,
            thread,
        }
    }

    /// The control block's address, for the exec arguments.
    pub fn addr(&self) -> u64 {
        &*self.block as *const PtoRecordStream as u64
    }

    /// Once the run's `exec` threads returned: every entry taken, and the block.
    pub fn finish(mut self) -> (Vec<T>, PtoRecordStream) {
        self.stop.store(true, Ordering::Release);
        let taken = self
            .thread
            .take()
            .map_or_else(Vec::new, |t| t.join().expect("the collector"));
        // SAFETY: every exec thread returned: nothing writes the block any more.
        let block = unsafe { (&raw const *self.block).read_volatile() };
        (taken, block)
    }
}

/// The collector: takes what the pump published, says so, until told to stop (then once
/// more).
fn collect<T: Copy>(block: usize, ring: usize, cap: usize, stop: &AtomicBool) -> Vec<T> {
    // SAFETY: the block outlives this thread (joined in `finish`); its two words are read
    // and written as atomics, as the pump does.
    let word = |offset: usize| unsafe { &*((block + offset) as *const AtomicU64) };
    let (produced, collected) = (
        word(PtoRecordStream::PRODUCED),
        word(PtoRecordStream::COLLECTED),
    );
    let mut taken = Vec::new();
    loop {
        let last = stop.load(Ordering::Acquire);
        let upto = produced.load(Ordering::Acquire);
        for i in taken.len() as u64..upto {
            let at = (ring as *const T).wrapping_add(i as usize % cap);
            // SAFETY: entry `i % cap` holds record `i`, published before `produced`, and
            // the pump does not write it again before `collected` passes it.
            taken.push(unsafe { at.read_volatile() });
        }
        collected.store(upto, Ordering::Release);
        if last {
            return taken;
        }
        std::thread::yield_now();
    }
}
