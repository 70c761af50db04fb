//! Failed transfers end to end on the simulator, in both completion modes: a transfer that
//! reports an error entry on its engine's completion queue fails its task at once with
//! `TransferFailed` (no timeout involved). The task and every task that depends on it,
//! directly or through others, finish cancelled without running; every other task runs
//! once; the run ends with the error.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use pto_runtime_core::{
    CompletionMode, Config, FatalCause, FatalKind, KernelId, ProfileLevel, TaskId, TaskSpec, Watch,
    WorkerClass, transfer_status,
};
use pto_sim::{KernelTable, Signal, SimError, SimOptions, Transfer, run};
use pto_tests::dag::{Node, descendants, program};
use pto_tests::failed;

/// `[index, status, latency_us]`: counts its run, posts a signal-only transfer on engine
/// `index % 2` that fails with `status` (0: lands), and waits for its entry.
const PUT: KernelId = KernelId(0);
/// `[index]`: counts its run.
const COUNT: KernelId = KernelId(1);
/// `[index, status]`: counts its run and posts a failing transfer it does not wait for.
const PUT_UNWATCHED: KernelId = KernelId(2);

/// Runs of each task index, and the post id each PUT got.
struct Log {
    runs: Vec<AtomicU32>,
    posts: Vec<AtomicU64>,
}

fn kernels(log: &Arc<Log>) -> KernelTable {
    let (a, b, c) = (log.clone(), log.clone(), log.clone());
    KernelTable::new()
        .with(PUT, "put", move |ctx| {
            let [i, status, us] = ctx.args_array()?;
            a.runs[i as usize].fetch_add(1, Ordering::Relaxed);
            let mut t = Transfer::signal_only(Signal::None).after(Duration::from_micros(us));
            if status != 0 {
                t = t.fail(status as u32);
            }
            let engine = (i % 2) as u32;
            let post = ctx.post_queued(engine, t)?;
            a.posts[i as usize].store(post, Ordering::Relaxed);
            ctx.defer_entry(engine, post).map_err(Into::into)
        })
        .with(COUNT, "count", move |ctx| {
            b.runs[ctx.args[0] as usize].fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .with(PUT_UNWATCHED, "put_unwatched", move |ctx| {
            let [i, status] = ctx.args_array()?;
            c.runs[i as usize].fetch_add(1, Ordering::Relaxed);
            let t = Transfer::signal_only(Signal::None).fail(status as u32);
            ctx.post_queued(0, t)?;
            Ok(())
        })
}

fn log(n: usize) -> Arc<Log> {
    Arc::new(Log {
        runs: (0..n).map(|_| AtomicU32::new(0)).collect(),
        posts: (0..n).map(|_| AtomicU64::new(0)).collect(),
    })
}

fn mode(ring: bool) -> CompletionMode {
    if ring {
        CompletionMode::Ring
    } else {
        CompletionMode::Poll
    }
}

fn cfg(completion: CompletionMode) -> Config {
    Config {
        task_window: 64,
        max_args: 4,
        schedulers: 2,
        aic_cores: 2,
        aiv_cores: 4,
        // Far longer than the test: the failure must arrive as an entry, not by a timeout.
        deferred_timeout_us: 60_000_000,
        profile: ProfileLevel::Tasks,
        completion,
        ..Config::tiny()
    }
}

#[test]
fn one_failed_transfer_among_hundreds_cancels_its_consumers_and_nothing_else() {
    const N: usize = 300;
    const BAD: usize = 137;
    for completion in [CompletionMode::Poll, CompletionMode::Ring] {
        // Per producer i: PUT (task 3i) on an AIV core, its consumer COUNT (3i + 1) on an
        // AIC core, and that one's consumer COUNT (3i + 2): the bad producer's two
        // descendants must not run, while the 897 other tasks run once each.
        let log = log(3 * N);
        let result = run(cfg(completion), kernels(&log), SimOptions::default(), |o| {
            let mut ids = Vec::new();
            for i in 0..N {
                let status = if i == BAD {
                    transfer_status::REMOTE_ACCESS
                } else {
                    0
                };
                let us = (i as u64 * 37) % 40;
                let args = [3 * i as u64, status as u64, us];
                let p = o
                    .submit(&TaskSpec::new(PUT, WorkerClass::Aiv).args(&args))
                    .unwrap();
                let c = o
                    .submit(
                        &TaskSpec::new(COUNT, WorkerClass::Aic)
                            .args(&[3 * i as u64 + 1])
                            .deps(&[p]),
                    )
                    .unwrap();
                let g = o
                    .submit(
                        &TaskSpec::new(COUNT, WorkerClass::Aiv)
                            .args(&[3 * i as u64 + 2])
                            .deps(&[c]),
                    )
                    .unwrap();
                ids.push([p, c, g]);
            }
            ids
        });
        let (e, ids, report) = failed(result);
        let bad = ids[BAD];
        let post = log.posts[3 * BAD].load(Ordering::Relaxed);
        assert_eq!(
            (e.cause, e.task),
            (
                FatalCause::TransferFailed {
                    watch: Watch::Queue((3 * BAD % 2) as u32),
                    post,
                    status: transfer_status::REMOTE_ACCESS
                },
                Some(bad[0]),
            ),
            "{completion:?}: {e}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("remote access error") && msg.contains(&format!("{}", bad[0])),
            "{msg}"
        );
        for (k, runs) in log.runs.iter().enumerate() {
            let expected = u32::from(k != 3 * BAD + 1 && k != 3 * BAD + 2);
            assert_eq!(
                runs.load(Ordering::Relaxed),
                expected,
                "{completion:?}: runs of task {k}"
            );
        }
        assert_eq!(
            (report.submitted, report.finished, report.cancelled),
            (3 * N as u64, 3 * N as u64, 3),
            "{completion:?}: every task completed once; the bad one and its two consumers \
             cancelled"
        );
        assert_eq!(report.live_slots, 0, "{completion:?}: every slot reclaimed");
    }
}

#[test]
fn the_trace_records_mark_the_cancelled_tasks_and_the_counters_count_the_failure() {
    for completion in [CompletionMode::Poll, CompletionMode::Ring] {
        let log = log(4);
        let result = run(cfg(completion), kernels(&log), SimOptions::default(), |o| {
            let bad = o
                .submit(&TaskSpec::new(PUT, WorkerClass::Aiv).args(&[
                    0,
                    transfer_status::LOST as u64,
                    5,
                ]))
                .unwrap();
            let good = o
                .submit(&TaskSpec::new(PUT, WorkerClass::Aiv).args(&[1, 0, 5]))
                .unwrap();
            let after = o.submit(&TaskSpec::dummy().deps(&[bad, good])).unwrap();
            let last = o
                .submit(
                    &TaskSpec::new(COUNT, WorkerClass::Aic)
                        .args(&[2])
                        .deps(&[after]),
                )
                .unwrap();
            [bad, good, after, last]
        });
        let Err(SimError::Run { error, run }) = result else {
            panic!("{completion:?}: the run should fail");
        };
        assert_eq!(error.kind(), FatalKind::TransferFailed);
        let mut run = run;
        let ids: [TaskId; 4] = run.take_value().unwrap();
        let cancelled: BTreeSet<u64> = run
            .records
            .iter()
            .filter(|r| r.cancelled)
            .map(|r| r.task.raw())
            .collect();
        assert_eq!(run.records.len(), 4, "one record per task");
        assert_eq!(
            cancelled,
            BTreeSet::from([ids[0].raw(), ids[2].raw(), ids[3].raw()]),
            "{completion:?}: the failed task and its descendants, not the good one"
        );
        assert_eq!(log.runs[2].load(Ordering::Relaxed), 0, "the last never ran");
        let failures: u64 = run.queues.iter().map(|q| q.transfer_failures).sum();
        let entries: u64 = run.queues.iter().map(|q| q.engines.entries).sum();
        assert_eq!(
            (failures, entries),
            (1, 2),
            "{completion:?}: {:?}",
            run.queues
        );
    }
}

#[test]
fn an_error_entry_no_task_waits_for_still_fails_the_run() {
    // The second task posts after the first on the same queue (one scheduler) and waits for
    // its own entry, so the first one's error entry is drained before the run can end.
    let log = log(4);
    let cfg = Config {
        schedulers: 1,
        ..cfg(CompletionMode::Poll)
    };
    let (e, (), report) = failed(run(cfg, kernels(&log), SimOptions::default(), |o| {
        let first = o
            .submit(
                &TaskSpec::new(PUT_UNWATCHED, WorkerClass::Aiv)
                    .args(&[0, transfer_status::TIMED_OUT as u64]),
            )
            .unwrap();
        o.submit(
            &TaskSpec::new(PUT, WorkerClass::Aiv)
                .args(&[2, 0, 0])
                .deps(&[first]),
        )
        .unwrap();
    }));
    assert_eq!(
        (e.cause, e.task),
        (
            FatalCause::TransferFailed {
                watch: Watch::Queue(0),
                post: 1,
                status: transfer_status::TIMED_OUT
            },
            None,
        )
    );
    assert_eq!((report.finished, report.cancelled), (2, 0));
}

/// What ran: each task index's runs, one per lane.
fn run_program(
    nodes: &[Node],
    fails: &BTreeSet<usize>,
    cfg: Config,
) -> (
    Vec<u32>,
    Result<(), pto_runtime_core::FatalError>,
    pto_runtime_core::RunReport,
    Vec<TaskId>,
) {
    let ran = Arc::new(Mutex::new(vec![0u32; nodes.len()]));
    let (a, b) = (ran.clone(), ran.clone());
    let kernels = KernelTable::new()
        .with(PUT, "put", move |ctx| {
            let [i, fails] = ctx.args_array()?;
            a.lock().unwrap()[i as usize] += 1;
            // One lane of a failing task fails its transfer; every lane waits for its own.
            let lane_fails = fails == 1 && ctx.lane as u64 == i % ctx.lanes.max(1) as u64;
            let mut t =
                Transfer::signal_only(Signal::None).after(Duration::from_micros((i * 13) % 30));
            if lane_fails {
                t = t.fail(transfer_status::LOST);
            }
            let engine = (i % 2) as u32;
            let post = ctx.post_queued(engine, t)?;
            ctx.defer_entry(engine, post).map_err(Into::into)
        })
        .with(COUNT, "count", move |ctx| {
            b.lock().unwrap()[ctx.args[0] as usize] += 1;
            Ok(())
        });
    let out = run(cfg, kernels, SimOptions::default(), |o| {
        let mut ids: Vec<TaskId> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let deps: Vec<TaskId> = n.deps.iter().map(|&d| ids[d]).collect();
            // Every other non-DUMMY task posts a transfer; the others only count.
            let put = [i as u64, u64::from(fails.contains(&i))];
            let count = [i as u64];
            let spec = if n.class == WorkerClass::Dummy {
                TaskSpec::dummy()
            } else if i % 2 == 0 || fails.contains(&i) {
                TaskSpec::new(PUT, n.class).args(&put)
            } else {
                TaskSpec::new(COUNT, n.class).args(&count)
            };
            ids.push(o.submit(&spec.deps(&deps)).expect("submit"));
        }
        ids
    });
    let (result, report, ids) = match out {
        Ok(out) => (Ok(()), out.report, out.value),
        Err(SimError::Run { error, run }) => {
            let mut run = run;
            let ids = run.take_value::<Vec<TaskId>>().unwrap();
            (Err(error), run.run.report, ids)
        }
        Err(e) => panic!("the run could not start: {e}"),
    };
    let ran = std::mem::take(&mut *ran.lock().unwrap());
    (ran, result, report, ids)
}

fn lanes(class: WorkerClass) -> u32 {
    match class {
        WorkerClass::Mix => 3,
        WorkerClass::Dummy => 0,
        _ => 1,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn failed_transfers_cancel_exactly_their_descendants_in_both_modes(
        nodes in program(100),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        schedulers in 1u8..3,
        aic in 1u16..3,
        aiv in 2u16..5,
    ) {
        let fails: BTreeSet<usize> = picks
            .iter()
            .map(|p| p.index(nodes.len()))
            .filter(|&i| nodes[i].class != WorkerClass::Dummy)
            .collect();
        // Tasks that wait for a failing one never run (a failing one among them included).
        let mut after = BTreeSet::new();
        for &f in &fails {
            after.extend(descendants(&nodes, f));
        }
        let ran_and_failed: BTreeSet<usize> = fails.difference(&after).copied().collect();
        let cancelled: BTreeSet<usize> = fails.union(&after).copied().collect();
        for ring in [false, true] {
            let cfg = Config {
                rings: 1,
                // No slot is reused within a run: every consumer is wired while its
                // producers are known (see the cancellation notes in
                // `docs/deferred-completion.md`).
                task_window: 128,
                max_deps: 4,
                max_args: 2,
                aic_cores: aic,
                aiv_cores: aiv,
                schedulers,
                deferred_timeout_us: 60_000_000,
                completion: mode(ring),
                ..Config::default()
            };
            let (ran, result, report, ids) = run_program(&nodes, &fails, cfg);
            for (i, n) in nodes.iter().enumerate() {
                let want = if after.contains(&i) {
                    0
                } else {
                    lanes(n.class)
                };
                prop_assert_eq!(ran[i], want, "ring {}: runs of task {}", ring, i);
            }
            prop_assert_eq!(report.finished, nodes.len() as u64, "ring {}", ring);
            prop_assert_eq!(report.cancelled, cancelled.len() as u64, "ring {}", ring);
            match result {
                Ok(()) => prop_assert!(fails.is_empty(), "ring {}: no error for {:?}", ring, fails),
                Err(e) => {
                    prop_assert_eq!(e.kind(), FatalKind::TransferFailed, "ring {}: {}", ring, e);
                    let named = e.task.and_then(|t| ids.iter().position(|&x| x == t));
                    prop_assert!(
                        named.is_some_and(|i| ran_and_failed.contains(&i)),
                        "ring {}: the error names {:?}, not one of {:?}", ring, named, ran_and_failed
                    );
                    let lost = matches!(
                        e.cause,
                        FatalCause::TransferFailed { status: transfer_status::LOST, .. }
                    );
                    prop_assert!(lost, "ring {}: {}", ring, e);
                }
            }
        }
    }
}
