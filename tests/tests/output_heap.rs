//! The output heap end to end: producers fill buffers allocated from a heap much smaller than
//! the run, consumers check them. A buffer lives as long as its producer; the producer and its
//! consumer are submitted in one scope, so the producer is held until the consumer has pinned
//! it, and the buffer is reused only once both are done.

use pto_runtime_core::{Config, KernelId, SubmitError, TaskSpec, WorkerClass};
use pto_sim::{KernelError, KernelTable, SimOptions, run};

const WRITE: KernelId = KernelId(0);
const CHECK: KernelId = KernelId(1);
const WORDS: usize = 32;
const STALE: u32 = 90;

fn pattern(i: u64, w: usize) -> u64 {
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ w as u64
}

fn kernels() -> KernelTable {
    KernelTable::new()
        .with(WRITE, "write", |ctx| {
            let (at, i) = (ctx.args[0], ctx.args[1]);
            let data: Vec<u64> = (0..WORDS).map(|w| pattern(i, w)).collect();
            ctx.memory().write(at, &data).map_err(Into::into)
        })
        .with(CHECK, "check", |ctx| {
            let (at, i) = (ctx.args[0], ctx.args[1]);
            // A slow reader: a buffer reused too early would be overwritten meanwhile.
            std::thread::sleep(std::time::Duration::from_micros(20));
            let mut got = vec![0u64; WORDS];
            ctx.memory().read(at, &mut got)?;
            let ok = got.iter().enumerate().all(|(w, &v)| v == pattern(i, w));
            if ok {
                Ok(())
            } else {
                Err(KernelError::new(STALE, "stale data"))
            }
        })
}

#[test]
fn buffers_are_reused_only_after_their_readers_are_done() {
    let cfg = Config {
        task_window: 16,
        max_args: 2,
        schedulers: 2,
        aic_cores: 2,
        aiv_cores: 4,
        ..Config::tiny()
    };
    // 4 buffers of 256 bytes, fewer than the 8 producer/checker pairs the window lets run at
    // once: the heap, not the window, decides when a buffer is reused.
    let opts = SimOptions {
        heap_bytes: 1024,
        ..SimOptions::default()
    };
    let out = run(cfg, kernels(), opts, |o| {
        let mut addrs = std::collections::BTreeSet::new();
        for i in 0..300u64 {
            o.scope(|o| {
                let at = o.alloc(0, (WORDS * 8) as u64, 64)?;
                addrs.insert(at);
                let args = [at, i];
                // No tensor arguments: only the heap's reclaim keeps the next producer of
                // this buffer from overwriting it before the check ran.
                let p = o.submit(&TaskSpec::new(WRITE, WorkerClass::Aiv).args(&args))?;
                o.submit(
                    &TaskSpec::new(CHECK, WorkerClass::Aic)
                        .args(&args)
                        .deps(&[p]),
                )
            })??;
        }
        Ok::<_, SubmitError>(addrs.len())
    })
    .unwrap();
    let distinct = match &out.value {
        Ok(n) => *n,
        Err(e) => panic!("{e}"),
    };
    let report = out.report;
    assert_eq!(report.finished, 600);
    // 300 buffers from 4 places: each place was handed out again about 75 times, and every
    // check of a buffer passed (a checker reading a buffer its next producer overwrote
    // fails the run), so no buffer was reused before its reader was done.
    assert_eq!(distinct, 4, "every place of the heap was used, and reused");
}
