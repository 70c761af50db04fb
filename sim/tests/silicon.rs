//! The silicon cost model: DAGs stay correct under it in every thread layout and completion
//! mode, its delays are never shorter than the model says, and kernels last as long as
//! their ids are told to. (How close the figures come to the model is a benchmark's
//! business: `pto-launch bench --workload calibrate`.)

use std::time::Duration;

use pto_runtime_core::{
    CompletionMode, Config, KernelId, ProfileLevel, TaskId, TaskSpec, WorkerClass,
};
use pto_sim::{CoreThreads, KernelTable, Silicon, SimOptions, calibrate, run};

const SLOW: KernelId = KernelId(1);

fn chain(cfg: Config, opts: SimOptions, n: u64) -> (Vec<pto_runtime_core::TaskRecord>, u64) {
    let kernels = KernelTable::new()
        .with(KernelId(0), "nop", |_| Ok(()))
        .with(SLOW, "slow", |_| Ok(()));
    let out = run(cfg, kernels, opts, |o| {
        let mut prev: Option<TaskId> = None;
        for i in 0..n {
            let deps: Vec<TaskId> = prev.into_iter().collect();
            let kernel = if i % 10 == 0 { SLOW } else { KernelId(0) };
            let class = WorkerClass::ALL[(i % 3) as usize];
            prev = Some(o.submit(&TaskSpec::new(kernel, class).deps(&deps)).unwrap());
        }
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.report.finished, n);
    let (dispatch, fin) = out.silicon_delays_ns.expect("the run models silicon");
    // The modelled cores never beat the model: dispatch 140 ns, FIN at best 180 ns.
    assert!(dispatch >= 139.0 && fin >= 179.0, "{dispatch} {fin}");
    // Every event the modelled chip showed is counted once for its lateness: each kernel's
    // start and FIN on each of its lanes, and the completion records when the schedulers
    // drain a queue.
    let late = out.silicon_lateness.expect("the run models silicon");
    let per_kernel = match cfg.completion {
        CompletionMode::Poll => 2,
        CompletionMode::Ring => 3,
    };
    let kernels: u64 = (0..n)
        .map(|i| u64::from(WorkerClass::ALL[(i % 3) as usize].lanes()))
        .sum();
    assert_eq!(late.events, per_kernel * kernels, "{late:?}");
    assert!(late.mean_ns >= 0.0 && (0.0..=1.0).contains(&late.late_share));
    assert_eq!(out.schedulers_on_cpu.len(), usize::from(cfg.schedulers));
    assert!(
        out.schedulers_on_cpu
            .iter()
            .all(|s| (0.0..=1.0).contains(s))
    );
    (out.records, out.ticks_per_us)
}

#[test]
fn dags_complete_under_the_model_in_every_layout_and_mode() {
    let silicon = Silicon::a2a3().with_kernel(SLOW, Duration::from_micros(20));
    for completion in [CompletionMode::Poll, CompletionMode::Ring] {
        for threads in [CoreThreads::PerCore, CoreThreads::Shared(1)] {
            let cfg = Config {
                completion,
                profile: ProfileLevel::Tasks,
                profile_capacity: 400,
                aic_cores: 2,
                aiv_cores: 4,
                ..Config::tiny()
            };
            let opts = SimOptions {
                silicon: Some(silicon.clone()),
                core_threads: threads,
                ..SimOptions::default()
            };
            let (records, ticks_per_us) = chain(cfg, opts, 300);
            let per_ns = ticks_per_us as f64 / 1_000.0;
            let slow: Vec<_> = records.iter().filter(|r| r.kernel == SLOW).collect();
            assert_eq!(slow.len(), 30);
            for r in slow {
                // Kernel times are the model's: the slow kernel lasts its 20 µs.
                let ns = (r.end - r.start) as f64 / per_ns;
                assert!(ns >= 19_999.0, "{completion:?} {threads:?}: {r:?}");
            }
        }
    }
}

#[test]
fn a_calibration_run_reports_every_figure() {
    let c = calibrate(&Silicon::a2a3(), 200, 1_000).unwrap();
    // Lower bounds only, which the model guarantees: a status read spins at least three
    // quarters of its 100 ns (the spin's own measured overhead, at most a quarter, is taken
    // off), a hop costs at least a dispatch and a FIN, and the ring's record comes no sooner
    // than the FIN.
    assert!(c.status_read_ns >= 75.0, "{c:?}");
    assert!(c.dispatch_ns >= 139.0 && c.fin_ns >= 179.0, "{c:?}");
    assert!(c.hop_poll_ns >= 319.0 && c.hop_ring_ns >= 319.0, "{c:?}");
}
