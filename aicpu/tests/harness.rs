//! The harness that does what CANN does with libpto_aicpu.so: loads it with
//! `dlopen(RTLD_LAZY | RTLD_GLOBAL)`, calls `init` once and `exec` per run on N threads,
//! each with a copy of the payload, while threads run the AICore executor (host build)
//! against fake register windows at the chip's strides and offsets (`harness/`). The DAG
//! comes from a C orchestration SO (`tests/c/orchestration.c`, built by `build.rs`) that
//! submits with tensor arguments, scopes and output-heap buffers; its kernels
//! (`tests/c/kernels.c`) read their tensors and compute, and every result is checked.
//! Natively, and for aarch64 under qemu-aarch64.

/// The SO these tests load: the shipped one, no features.
const SO_FEATURES: &[&str] = &[];

mod harness {
    pub mod chip;
    pub mod record_host;
    pub mod rig;
    pub mod so;
}

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use harness::record_host::RecordHost;
use harness::rig::{EXAMPLE_N, Extra, K_EXAMPLE_ADD, K_LAND, K_SUM, Orch, Rig, SERIAL, init};
use harness::so::so;
use pto_device_sys::abi::{
    PtoAicpuCode, PtoAicpuInitArgs, PtoAicpuReport, PtoProducers, PtoRecordStream,
};
use pto_device_sys::chip::layout::REG_COND;
use pto_runtime_core::ffi::PtoRecord;
use pto_runtime_core::{Config, FatalKind, StallKind, TaskId};

#[test]
fn the_shipped_so_cannot_inject_a_fault() {
    assert!(
        so().inject_fault.is_none(),
        "pto_aicpu_inject_fault is the fault-injecting build's alone"
    );
}

#[test]
fn a_hundred_runs_in_one_process_each_checked() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let start = std::time::Instant::now();
    let mut last_run = 0;
    // 100 runs, natively and under qemu-aarch64 alike; `PTO_HARNESS_RUNS` sets another count
    // for a quick local run.
    let runs = std::env::var("PTO_HARNESS_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100u32);
    for _ in 0..runs {
        let r = rig.good_run();
        assert!(r.run > last_run, "runs are counted: {r}");
        last_run = r.run;
    }
    eprintln!("{runs} runs in {:?}", start.elapsed());
}

#[test]
fn a_failing_kernel_fails_the_run_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run(Extra::Fail, &[]);
    assert_eq!(r.code, PtoAicpuCode::RunFailed as u32, "{r}");
    assert_eq!(r.sched.error_kind, FatalKind::KernelFailed as u32, "{r}");
    assert_eq!(r.sched.error_detail, 42, "the kernel's code: {r}");
    assert!(rig.chip.all_closed());
    rig.good_run();
}

#[test]
fn a_hung_kernel_is_stopped_by_the_watchdog_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 2_000);
    let mut rig = Rig::new(2, 200_000);
    let r = rig.run(Extra::Hang, &[]);
    assert_eq!(r.code, PtoAicpuCode::RunFailed as u32, "{r}");
    assert_eq!(r.sched.error_kind, FatalKind::TaskTimeout as u32, "{r}");
    assert!(
        r.sched.error_detail >= 200_000,
        "waited past the timeout: {r}"
    );
    assert_eq!(
        r.cores_closed as usize,
        rig.chip.cores() - 1,
        "the hung core alone missed its exit: {r}"
    );
    // The report says which task hung, and where.
    let hung = format!(
        "{} running on core {}",
        TaskId::from_raw(r.sched.error_task),
        r.sched.error_core
    );
    assert!(r.nstalls >= 1, "{r}");
    assert!(r.to_string().contains(&hung), "names {hung}: {r}");
    let class = r.stall_class().expect("a stalled run has a class");
    assert_eq!(class.kind, StallKind::RunningStalled, "{r}");
    assert!(
        r.to_string()
            .contains(&format!("stall class: running-stalled: {hung}")),
        "the class names the hung task and its core: {r}"
    );
    eprintln!("{r}");
    // Freed, the core finished its kernel and then took the exit it was left.
    rig.good_run();
}

#[test]
fn the_run_watchdog_aborts_a_run_past_its_deadline() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // A deadline shorter than the task timeout: the run watchdog fires first.
    init(300, 50);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run(Extra::Hang, &[]);
    assert_eq!(r.code, PtoAicpuCode::Watchdog as u32, "{r}");
    assert_eq!(r.value, 300, "the deadline in ms: {r}");
    assert!(
        r.to_string().contains("running on core"),
        "the hung kernel's task is named: {r}"
    );
    init(30_000, 5_000);
    rig.good_run();
}

#[test]
fn a_stale_cond_fails_the_run_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    rig.good_run();
    // A core of an earlier run reported FIN of token 5 and never acknowledged an exit.
    rig.chip.poke(3, REG_COND, 0x8000_0005);
    let r = rig.run(Extra::None, &[]);
    assert_eq!(r.code, PtoAicpuCode::StaleCond as u32, "{r} {r:?}");
    assert_eq!((r.core, r.value), (3, 0x8000_0005), "{r}");
    assert_eq!(r.sched.finished, 0, "nothing ran: {r}");
    assert!(
        rig.chip.all_closed(),
        "the exit went to every core, clearing COND"
    );
    rig.good_run();
}

#[test]
fn a_failing_orchestration_fails_the_run_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run(Extra::Return7, &[]);
    assert_eq!(
        r.code,
        PtoAicpuCode::OrchestrationFailed as u32,
        "{r} {r:?}"
    );
    assert_eq!(r.value, 7, "the orchestration's return value: {r}");
    assert!(rig.chip.all_closed());
    rig.good_run();
}

#[test]
fn a_missing_executor_fails_the_run_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(1, 20_000_000);
    let r = rig.run(Extra::None, &[4]);
    assert_eq!(r.code, PtoAicpuCode::CoreNotUp as u32, "{r}");
    assert_eq!(r.core, 4, "{r}");
    assert_eq!(r.cores_closed as usize, rig.chip.cores() - 1, "{r}");
    rig.good_run();
}

#[test]
fn an_orchestration_so_without_its_entry_is_refused_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let misnamed = std::fs::read(env!("PTO_TEST_ORCH_MISNAMED_SO")).unwrap();
    let r = rig.run_with(Orch::So(&misnamed), Extra::None, &[]);
    assert_eq!(r.code, PtoAicpuCode::OrchestrationLoad as u32, "{r}");
    assert_eq!(r.value, 3, "no `pto_orchestrate`: {r}");
    assert!(r.to_string().contains("pto_orchestrate"), "{r}");
    assert!(rig.chip.all_closed());
    rig.good_run();
    let garbage = vec![0x5au8; 4096];
    let r = rig.run_with(Orch::So(&garbage), Extra::None, &[]);
    assert_eq!(r.code, PtoAicpuCode::OrchestrationLoad as u32, "{r}");
    assert_eq!(r.value, 2, "dlopen refused it: {r}");
    rig.good_run();
}

#[test]
fn an_orchestration_function_in_the_process_runs_too() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run_with(Orch::Function, Extra::None, &[]);
    rig.check_good(r);
}

#[test]
fn with_manual_cache_maintenance_the_dag_runs_too() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    rig.coherence = 1;
    for _ in 0..3 {
        rig.good_run();
    }
}

#[test]
fn the_c_example_of_the_readme_runs_on_the_aicpu_path() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    // examples/c/vector_add: z = x + y over EXAMPLE_N f32s, one add task per chunk.
    let so = std::fs::read(env!("PTO_TEST_EXAMPLE_SO")).expect("the example's SO");
    let n = EXAMPLE_N;
    for i in 0..n {
        rig.set_f32(i, 0.25 * i as f32);
        rig.set_f32(n + i, 1000.0 - i as f32);
    }
    let base = rig.data_base();
    let (x, y, z) = (base, base + 4 * n as u64, base + 8 * n as u64);
    let r = rig.exec(
        Orch::So(&so),
        &[K_EXAMPLE_ADD, x, y, z, n as u64],
        Extra::None,
        &[],
    );
    assert_eq!(r.code, PtoAicpuCode::Ok as u32, "{r} {r:?}");
    assert_eq!(r.sched.finished, 2, "two chunks: {r}");
    for i in 0..n {
        let want = 0.25 * i as f32 + (1000.0 - i as f32);
        assert_eq!(rig.f32_at(2 * n + i), want, "z[{i}]");
    }
}

#[test]
fn a_graph_an_orchestration_so_records_replays_on_the_aicpu_path() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    // examples/c/layers: y = (x + w_l) + w_l per layer, recorded once, replayed per layer.
    let so = std::fs::read(env!("PTO_TEST_LAYERS_SO")).expect("the layers example's SO");
    let (n, layers) = (EXAMPLE_N, 2);
    let mut want = vec![0f32; n];
    for (i, y) in want.iter_mut().enumerate() {
        *y = 0.5 * (i % 7) as f32;
        rig.set_f32(i, *y);
    }
    for l in 0..layers {
        for (i, y) in want.iter_mut().enumerate() {
            let w = 0.125 * (l + 1) as f32 * ((i % 5) as f32 - 2.0);
            rig.set_f32(n + l * n + i, w);
            *y = (*y + w) + w;
        }
    }
    let base = rig.data_base();
    let at = |k: usize| base + 4 * (k * n) as u64;
    // x, the weights (two layers), the activation between them, y.
    let args = [
        K_EXAMPLE_ADD,
        at(0),
        at(1),
        at(3),
        at(4),
        n as u64,
        layers as u64,
    ];
    let r = rig.exec(Orch::So(&so), &args, Extra::None, &[]);
    assert_eq!(r.code, PtoAicpuCode::Ok as u32, "{r} {r:?}");
    assert_eq!(
        r.sched.finished, 8,
        "two tasks per chunk, two chunks, two layers: {r}"
    );
    for (i, &y) in want.iter().enumerate() {
        assert_eq!(rig.f32_at(4 * n + i), y, "y[{i}]");
    }
}

#[test]
fn an_unwritten_report_says_so() {
    let r = PtoAicpuReport::default();
    assert!(r.to_string().contains("no AICPU thread took part"), "{r}");
}

#[test]
fn malformed_payloads_are_refused() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: a null block is part of the ABI (refused).
    assert_eq!(unsafe { (so().exec)(std::ptr::null_mut()) }, 1);
    // SAFETY: as above.
    assert_eq!(unsafe { (so().init)(std::ptr::null_mut()) }, 1);
    let mut a = PtoAicpuInitArgs {
        abi: 99,
        ..PtoAicpuInitArgs::default()
    };
    // SAFETY: a readable init block with a foreign ABI number (refused).
    assert_eq!(unsafe { (so().init)((&raw mut a).cast()) }, 1);
}

#[test]
fn a_deferred_producer_completes_only_once_its_engine_landed() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run(Extra::Deferred, &[]);
    assert_eq!(r.code, PtoAicpuCode::Ok as u32, "{r} {r:?}");
    assert_eq!(r.sched.finished, 4 * rig.blocks + 2, "{r}");
    rig.sums_check().unwrap();
    // The consumer summed what the engine landed, not what the buffer held before.
    let n = rig.n as i64;
    let out = rig.deferred_buffer() + rig.n;
    assert_eq!(rig.word(out), 1000 * n + n * (n - 1) / 2);
    // The producer went through the deferred set, and its consumer started after it left.
    let recs = &rig.records[..r.records as usize];
    let producer = recs
        .iter()
        .find(|t| t.kernel == K_LAND as u32)
        .expect("its record");
    let seq = |t: u64| TaskId::from_raw(t).seq().0;
    let consumer = recs
        .iter()
        .find(|t| t.kernel == K_SUM as u32 && seq(t.task) == seq(producer.task) + 1)
        .expect("the consumer's record");
    assert!(
        producer.deferred_done != 0 && producer.deferred_done >= producer.fin,
        "deferred: {producer:?}"
    );
    assert!(
        consumer.dispatch >= producer.deferred_done,
        "{consumer:?} after {producer:?}"
    );
    rig.good_run();
}

#[test]
fn an_orchestration_that_stops_submitting_is_reported_starved() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(300, 50);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run(Extra::Starve, &[]);
    assert_eq!(r.code, PtoAicpuCode::Watchdog as u32, "{r}");
    assert_eq!(
        r.sched.finished, r.sched.submitted,
        "every task it gave ran: {r}"
    );
    let class = r.stall_class().expect("a stalled run has a class");
    assert_eq!(
        (class.kind, class.entry),
        (StallKind::OrchestratorStarved, None),
        "{r}"
    );
    assert!(
        r.to_string()
            .contains("stall class: orchestrator-starved: "),
        "{r}"
    );
    init(30_000, 5_000);
    rig.good_run();
}

#[test]
fn a_post_that_never_lands_times_out_and_the_report_says_what_waited() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::with(pto_runtime_core::Config {
        deferred_timeout_us: 300_000,
        ..Rig::config()
    });
    let r = rig.run(Extra::NeverLands, &[]);
    assert_eq!(r.code, PtoAicpuCode::RunFailed as u32, "{r}");
    assert_eq!(r.sched.error_kind, FatalKind::DeferredTimeout as u32, "{r}");
    let text = r.to_string();
    assert!(
        text.contains("waiting for the completion watermark of engine 0 to reach 1"),
        "the deferred task and its word: {text}"
    );
    let producer = TaskId::from_raw(r.sched.error_task);
    assert!(
        text.contains(&format!("waiting for 1 producer: {producer}")),
        "its consumer, and the producer it waits for: {text}"
    );
    let class = r.stall_class().expect("a stalled run has a class");
    assert_eq!(
        (class.kind, class.entry.map(|e| e.task())),
        (StallKind::Deferred, Some(producer)),
        "{text}"
    );
    assert!(text.contains("stall class: deferred: "), "{text}");
    eprintln!("{text}");
    rig.good_run();
}

#[test]
fn a_condition_of_an_unknown_kind_fails_the_run_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run(Extra::BadCondition, &[]);
    assert_eq!(r.code, PtoAicpuCode::RunFailed as u32, "{r}");
    assert_eq!(r.sched.error_kind, FatalKind::BadCondition as u32, "{r}");
    assert!(rig.chip.all_closed());
    rig.good_run();
}

#[test]
fn a_configuration_wider_than_a_payload_slot_is_refused() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::with(pto_runtime_core::Config {
        max_args: 32,
        max_tensors: 17,
        ..Rig::config()
    });
    let r = rig.run(Extra::None, &[]);
    assert_eq!(r.code, PtoAicpuCode::SlotTooSmall as u32, "{r}");
    assert_eq!(r.value, 49, "{r}");
    assert!(
        r.to_string().contains("lower `max_tensors` or `max_args`"),
        "{r}"
    );
    Rig::new(2, 20_000_000).good_run();
}

/// A machine whose runs stream their records to `host` through a profile ring of 4 cells and
/// a host ring of 5 records, for the DAG's 24 tasks.
fn streaming_rig(host: RecordHost) -> Rig {
    let mut rig = Rig::with(Config {
        profile_capacity: 4,
        ..Rig::config()
    });
    rig.records = vec![PtoRecord::default(); 5];
    rig.record_host = Some(host);
    rig
}

#[test]
fn task_records_stream_to_the_host_through_rings_smaller_than_the_run() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = streaming_rig(RecordHost::Collects);
    for coherence in [0, 1] {
        rig.coherence = coherence;
        // A record per task, each task once (checked with the sums and the cores).
        let r = rig.good_run();
        assert_eq!(r.records_lost, 0, "{r}");
        let (taken, block) = rig.streamed.as_ref().expect("the host end ran");
        let tasks: BTreeSet<u64> = taken.iter().map(|t| t.task).collect();
        assert_eq!(tasks.len() as u64, r.sched.finished, "{taken:?}");
        assert_eq!((block.produced, block.lost, block.done), (24, 0, 1));
    }
}

#[test]
fn each_tasks_producers_stream_to_the_host_in_submission_order() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    // A ring of 3 entries for the 24 tasks of the DAG.
    rig.producers = Some(vec![empty_entry(); 3]);
    let r = rig.good_run();
    let (entries, block) = rig.streamed_producers.take().expect("the host end ran");
    assert_eq!((block.lost, block.done), (0, 1), "{block:?}");
    assert_eq!(block.produced, entries.len() as u64);
    // One entry per task (none has more than 7 producers), in submission order, each
    // producer an earlier task.
    let tasks: Vec<u64> = entries.iter().map(|e| e.task).collect();
    assert_eq!(tasks.len() as u64, r.sched.finished, "{entries:?}");
    assert!(tasks.windows(2).all(|w| w[0] < w[1]), "{tasks:?}");
    let mut edges = 0;
    for e in &entries {
        for &p in e.producers.iter().take_while(|&&p| p != PtoProducers::NONE) {
            assert!(tasks.contains(&p) && p < e.task, "{e:?}");
            edges += 1;
        }
    }
    assert!(edges > 0, "the DAG has edges: {entries:?}");
    // The next run, without the stream, tells nobody.
    rig.producers = None;
    rig.good_run();
    assert!(rig.streamed_producers.is_none());
}

fn empty_entry() -> PtoProducers {
    PtoProducers {
        task: 0,
        producers: [0; 7],
    }
}

#[test]
fn a_host_that_takes_no_records_makes_the_pump_wait_then_count_what_it_lost() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let wait = Duration::from_millis(200);
    let mut rig = streaming_rig(RecordHost::Stalled {
        wait_us: wait.as_micros() as u64,
    });
    let start = Instant::now();
    let r = rig.run(Extra::None, &[]);
    // The run itself is not held up past the bound: it succeeds, every result right.
    assert_eq!(r.code, PtoAicpuCode::Ok as u32, "{r}");
    rig.sums_check().unwrap();
    assert!(
        start.elapsed() >= wait,
        "the pump waited for the host first"
    );
    // The ring's 5 records are there for the host; the other 19 are counted, and said.
    assert_eq!(
        (r.records, r.records_total, r.records_lost),
        (5, 24, 19),
        "{r}"
    );
    assert!(r.to_string().contains("19 task records lost"), "{r}");
    let (taken, block) = rig.streamed.as_ref().expect("the host end ran");
    assert!(taken.is_empty());
    assert_eq!((block.produced, block.lost, block.done), (5, 19, 1));
    // The next run, without a stream, works as before: its 4-cell ring keeps the first 4.
    rig.record_host = None;
    let r = rig.run(Extra::None, &[]);
    assert_eq!(r.code, PtoAicpuCode::Ok as u32, "{r}");
    rig.sums_check().unwrap();
    assert_eq!(
        (r.records, r.records_total, r.records_lost),
        (4, 4, 20),
        "{r}"
    );
}

#[test]
fn a_thread_count_the_configuration_does_not_ask_for_is_refused() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    rig.threads = Some(4);
    let r = rig.run(Extra::None, &[]);
    assert_eq!(
        (r.code, r.value),
        (PtoAicpuCode::BadConfig as u32, 4),
        "{r}"
    );
    assert!(
        rig.chip.all_closed(),
        "the cores were opened and sent the exit"
    );
    rig.threads = None;
    rig.good_run();
}

#[test]
fn the_c_headers_lay_out_what_the_rust_types_do() {
    use core::mem::{offset_of, size_of};
    use pto_device_sys::abi::{PTO_AICPU_ABI, PTO_ORCH_CONFIG_ABI, PtoOrchConfig, PtoOrchOps};
    use pto_device_sys::chip::layout::{
        Handshake, KERNEL_ABI_VERSION, SLOT_ARGS, SLOT_CONDITIONS, Slot,
    };
    use pto_runtime_core::RecordFlags;
    use pto_runtime_core::ffi::{PtoRecord, PtoReplay, PtoTensor};
    unsafe extern "C" {
        fn pto_test_layout(out: *mut u64) -> u32;
    }
    let mut c = [0u64; 96];
    // SAFETY: writes fewer than 96 words.
    let n = unsafe { pto_test_layout(c.as_mut_ptr()) } as usize;
    let rust = [
        size_of::<PtoOrchOps>(),
        offset_of!(PtoOrchOps, ctx),
        offset_of!(PtoOrchOps, submit),
        offset_of!(PtoOrchOps, scope_begin),
        offset_of!(PtoOrchOps, scope_end),
        offset_of!(PtoOrchOps, alloc),
        offset_of!(PtoOrchOps, status_str),
        offset_of!(PtoOrchOps, settle),
        offset_of!(PtoOrchOps, wrote),
        size_of::<Slot>(),
        offset_of!(Slot, ntensors),
        offset_of!(Slot, tensors),
        offset_of!(Slot, args),
        offset_of!(Slot, ncond),
        offset_of!(Slot, shape),
        offset_of!(Slot, block),
        offset_of!(Slot, conditions),
        size_of::<PtoTensor>(),
        offset_of!(PtoTensor, buffer),
        offset_of!(PtoTensor, buffer_len),
        offset_of!(PtoTensor, start_offset),
        offset_of!(PtoTensor, elem),
        offset_of!(PtoTensor, rank),
        offset_of!(PtoTensor, access),
        offset_of!(PtoTensor, dtype),
        offset_of!(PtoTensor, shape),
        offset_of!(PtoTensor, strides),
        size_of::<Handshake>(),
        offset_of!(Handshake, base_token),
        offset_of!(Handshake, aicore_exited),
        SLOT_ARGS,
        SLOT_CONDITIONS,
        PTO_AICPU_ABI as usize,
        size_of::<PtoOrchConfig>(),
        offset_of!(PtoOrchConfig, max_deps),
        offset_of!(PtoOrchConfig, max_tensors),
        offset_of!(PtoOrchConfig, max_args),
        offset_of!(PtoOrchConfig, task_window),
        offset_of!(PtoOrchConfig, heap_bytes),
        PTO_ORCH_CONFIG_ABI as usize,
        KERNEL_ABI_VERSION as usize,
        size_of::<PtoRecord>(),
        offset_of!(PtoRecord, task),
        offset_of!(PtoRecord, kernel),
        offset_of!(PtoRecord, core),
        offset_of!(PtoRecord, class),
        offset_of!(PtoRecord, scheduler),
        offset_of!(PtoRecord, flags),
        offset_of!(PtoRecord, block),
        offset_of!(PtoRecord, blocks),
        offset_of!(PtoRecord, submit),
        offset_of!(PtoRecord, ready),
        offset_of!(PtoRecord, dispatch),
        offset_of!(PtoRecord, start),
        offset_of!(PtoRecord, end),
        offset_of!(PtoRecord, fin),
        offset_of!(PtoRecord, deferred_done),
        offset_of!(PtoRecord, complete),
        RecordFlags::CANCELLED.bits() as usize,
        RecordFlags::WRITTEN.bits() as usize,
        RecordFlags::FIN_AT_CLOSE.bits() as usize,
        size_of::<PtoRecordStream>(),
        align_of::<PtoRecordStream>(),
        offset_of!(PtoRecordStream, produced),
        offset_of!(PtoRecordStream, lost),
        offset_of!(PtoRecordStream, done),
        offset_of!(PtoRecordStream, wait_us),
        offset_of!(PtoRecordStream, collected),
        PtoRecordStream::DEFAULT_WAIT_US as usize,
        size_of::<PtoProducers>(),
        offset_of!(PtoProducers, producers),
        PtoProducers::PER_ENTRY,
        offset_of!(PtoOrchOps, graph_replay_with),
        size_of::<PtoReplay>(),
        offset_of!(PtoReplay, shifts),
        offset_of!(PtoReplay, after),
        offset_of!(PtoReplay, flags),
        offset_of!(PtoReplay, ring),
    ];
    let c: Vec<usize> = c[..n].iter().map(|&v| v as usize).collect();
    assert_eq!(
        c, rust,
        "aicpu/include/pto_aicpu.h, device-sys/aicore/pto_aicore.h or capi/include/pto_runtime.h \
         drifted from the Rust types"
    );
}
