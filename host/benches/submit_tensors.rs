//! The orchestrator's submit alone, on one thread, with K tensor arguments per task: what
//! finding dependencies through the tensor map costs, without a scheduler running beside it.
//!
//! `cargo bench -p pto-host --bench submit_tensors` prints ns per submit (median of 11 runs of
//! 8 000 tasks, independent tiles as in `pto-launch bench --workload tensors`) at K = 0, 2, 8.

use std::time::Instant;

use pto_host::bench::{BenchPlan, Workload, submit_workload};
use pto_runtime_core::{
    Condition, Config, CoreId, CorePhase, CoreStatus, KernelId, Payload, Platform, RegionLayout,
    Runtime, Token, Watch,
};
use pto_sim::Region;

const TASKS: u64 = 8_000;

/// A machine whose cores never report: submit never needs them.
struct Idle;

impl Platform for Idle {
    fn now(&self) -> u64 {
        0
    }
    fn ticks_per_us(&self) -> u64 {
        1
    }
    fn has_kernel(&self, _: KernelId) -> bool {
        true
    }
    fn write_payload(&self, _: CoreId, _: Token, _: &Payload<'_>) {}
    fn ring_doorbell(&self, _: CoreId, _: Token) {}
    fn core_status(&self, _: CoreId) -> CoreStatus {
        CoreStatus {
            token: Token::new(0),
            phase: CorePhase::Idle,
        }
    }
    fn lane_times(&self, _: CoreId, _: Token) -> Option<(u64, u64)> {
        None
    }
    fn conditions(&self, _: CoreId, _: Token) -> usize {
        0
    }
    fn condition(&self, _: CoreId, _: Token, _: usize) -> Option<Condition> {
        None
    }
    fn read_watch(&self, _: Watch) -> Option<u64> {
        None
    }
    fn invalidate(&self, _: u64, _: usize) {}
    fn flush(&self, _: u64, _: usize) {}
    fn spin_hint(&self) {}
}

fn run(k: u16) -> f64 {
    let cfg = Config {
        rings: 1,
        task_window: 8_192,
        max_tensors: k.max(1),
        aic_cores: 1,
        aiv_cores: 2,
        schedulers: 1,
        ..Config::default()
    };
    let mut region = Region::new(RegionLayout::new(&cfg).unwrap().size());
    let rt = Runtime::init(region.bytes(), cfg).unwrap();
    let mut o = rt.orchestrator(&Idle).unwrap();
    let plan = BenchPlan {
        workload: Workload::Tensors,
        tasks: TASKS,
        repeats: 1,
        seed: 1,
        pending: 0,
        tensor_args: k,
    };
    let start = Instant::now();
    submit_workload(&cfg, &plan, 0, |spec| o.submit(spec)).unwrap();
    start.elapsed().as_nanos() as f64 / TASKS as f64
}

fn main() {
    for k in [0u16, 2, 8] {
        let mut runs: Vec<f64> = (0..11).map(|_| run(k)).collect();
        runs.sort_by(f64::total_cmp);
        println!("submit, K = {k}: {:7.1} ns/task", runs[runs.len() / 2]);
    }
}
