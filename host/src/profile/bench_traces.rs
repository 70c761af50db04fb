//! Real traces: every task workload of `pto-launch bench`, run on the simulator at
//! `--profile tasks`, gives a Chrome trace whose every track is well nested and whose every
//! event has the fields the format requires.

use pto_runtime_core::{Config, ProfileLevel};
use pto_sim::SimOptions;

use crate::bench::{BenchPlan, Workload, bench_kernels, run_bench};
use crate::profile::{check_chrome_trace, chrome_trace_named};

fn trace_of(workload: Workload, aic: u16, aiv: u16, schedulers: u8) -> serde_json::Value {
    let (tasks, pending) = (3000, 200);
    let slack = 4 * u64::from(aic + aiv) + 1024;
    let cfg = Config {
        rings: 1,
        task_window: if workload == Workload::Deferred {
            (pending + slack).next_power_of_two() as u32
        } else {
            1024
        },
        deferred_capacity: (pending + slack) as u32,
        aic_cores: aic,
        aiv_cores: aiv,
        schedulers,
        record_latency: true,
        profile: ProfileLevel::Tasks,
        profile_capacity: 2 * tasks as u32 + 1024,
        ..Config::default()
    };
    let plan = BenchPlan {
        workload,
        tasks,
        repeats: 1,
        seed: 7,
        pending,
        tensor_args: 2,
        blocks: 1,
    };
    let out = run_bench(cfg, SimOptions::default(), &plan)
        .unwrap_or_else(|e| panic!("{workload:?}: {e}"));
    assert_eq!(
        out.records.len() as u64,
        out.result.tasks,
        "{workload:?}: a record per task"
    );
    chrome_trace_named(&out.records, out.ticks_per_us, &bench_kernels())
}

#[test]
fn every_bench_workloads_trace_is_well_nested_with_the_required_fields() {
    for workload in [
        Workload::Independent,
        Workload::Chain,
        Workload::Fanout,
        Workload::Random,
        Workload::Deferred,
        Workload::Tensors,
    ] {
        for (aic, aiv, schedulers) in [(1, 2, 1), (3, 6, 2)] {
            let trace = trace_of(workload, aic, aiv, schedulers);
            if let Err(e) = check_chrome_trace(&trace) {
                panic!("{workload:?} on {aic} + {aiv} cores, {schedulers} schedulers: {e}");
            }
            let events = trace["traceEvents"].as_array().map_or(0, Vec::len);
            assert!(events > 3000, "{workload:?}: {events} events");
        }
    }
}
