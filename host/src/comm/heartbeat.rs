//! The thread that says a rank is alive: it bumps the rank's heartbeat word while the process
//! runs ([`super::liveness`] reads it). It also takes the rank's terminating signals while it
//! runs: it names the peers that died before the signal ([`super::last_words`]), then ends
//! the process as the signal would have.
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::header::W_HEARTBEAT;
use super::last_words;
use super::raw_shm::Mapping;
use crate::signals;

/// A thread that bumps one rank's heartbeat word every [`BEAT_EVERY`] until stopped: the
/// rank is alive as long as its process runs (a stopped or frozen process stops it too).
pub(super) struct Heartbeat {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

/// How often a rank's heartbeat thread bumps its word.
const BEAT_EVERY: Duration = Duration::from_millis(5);

impl Heartbeat {
    pub(super) fn start(map: Arc<Mapping>, rank: u32) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name(format!("heartbeat-{rank}"))
            .spawn({
                let stop = stop.clone();
                move || {
                    let words = map.words();
                    let last_words = |sig| {
                        last_words::say(words, rank, sig);
                        signals::end_by_signal(sig)
                    };
                    signals::start_deferring();
                    while !stop.load(Ordering::Acquire) {
                        words[W_HEARTBEAT + rank as usize].fetch_add(1, Ordering::Release);
                        if let Some(sig) = signals::take_deferred() {
                            last_words(sig);
                        }
                        std::thread::park_timeout(BEAT_EVERY);
                    }
                    if let Some(sig) = signals::stop_deferring() {
                        last_words(sig);
                    }
                }
            })?;
        Ok(Heartbeat { stop, thread })
    }

    pub(super) fn stop(self) {
        self.stop.store(true, Ordering::Release);
        self.thread.thread().unpark();
        let _ = self.thread.join();
    }
}
