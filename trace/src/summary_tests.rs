//! Summaries of traces the writer made from known records: counts, durations and shares
//! as the records say, SPMD blocks under their kernel, a slice that could not nest still
//! counted, skips and cancellations, and what is not a trace refused.

use pto_runtime_core::{CoreId, KernelId, TaskId, TaskRecord, WorkerClass};
use serde_json::json;

use super::*;
use crate::chrome_trace;
use crate::read::RunTrace;

/// A record of task `n`, kernel `k`, on `core`, running `start..end` (ticks, 1 per µs here
/// so the trace's µs are the ticks).
fn rec(n: u64, k: u32, core: u16, class: WorkerClass, start: u64, end: u64) -> TaskRecord {
    TaskRecord {
        task: TaskId::from_raw(n),
        kernel: KernelId(k),
        class,
        core: Some(CoreId(core)),
        scheduler: 0,
        submit: 1,
        ready: start.saturating_sub(2).max(1),
        dispatch: start.saturating_sub(1).max(1),
        start,
        end,
        fin: end + 1,
        deferred_done: 0,
        complete: end + 2,
        cancelled: false,
        skipped: false,
        block: 0,
        blocks: 1,
    }
}

#[test]
fn counts_durations_and_shares_are_the_records() {
    let recs = [
        rec(1, 0, 0, WorkerClass::Aic, 10, 30),
        rec(2, 0, 0, WorkerClass::Aic, 30, 40),
        rec(3, 1, 2, WorkerClass::Aiv, 10, 110),
        rec(4, 0, 1, WorkerClass::Aic, 60, 90),
    ];
    let s = summarize(&chrome_trace(&recs, 1)).unwrap();
    assert_eq!((s.makespan_ns, s.slices), (100_000, 4));
    assert_eq!(s.kernels[0].name, "kernel 1", "longest total first");
    assert_eq!(s.kernels[0].total_ns, 100_000);
    let k0 = &s.kernels[1];
    assert_eq!(
        (k0.name.as_str(), k0.count, k0.total_ns),
        ("kernel 0", 3, 60_000)
    );
    assert_eq!((k0.median_ns, k0.p99_ns), (20_000, 30_000));
    let core0 = &s.cores[0];
    assert_eq!((core0.core, core0.slices, core0.busy_ns), (0, 2, 30_000));
    assert!((core0.utilisation - 0.3).abs() < 1e-9);
    let aic = s.classes.iter().find(|c| c.class == "Aic").unwrap();
    assert_eq!((aic.cores, aic.busy_ns), (2, 60_000));
    assert!((aic.utilisation - 0.3).abs() < 1e-9, "60 of 2 x 100 µs");
    let text = s.to_string();
    assert!(text.contains("4 kernel slices over 100.000 µs"), "{text}");
    assert!(text.contains("kernel 0"), "{text}");
}

#[test]
fn blocks_count_under_their_kernel_and_skips_and_cancellations_are_counted() {
    let mut a = rec(1, 5, 0, WorkerClass::Aiv, 10, 20);
    let mut b = rec(1, 5, 1, WorkerClass::Aiv, 10, 25);
    (a.blocks, b.blocks, b.block) = (2, 2, 1);
    let mut skipped = rec(2, 6, 0, WorkerClass::Aiv, 0, 0);
    (skipped.core, skipped.skipped, skipped.dispatch, skipped.fin) = (None, true, 0, 0);
    let mut cancelled = rec(3, 6, 0, WorkerClass::Aiv, 0, 0);
    (
        cancelled.core,
        cancelled.cancelled,
        cancelled.dispatch,
        cancelled.fin,
    ) = (None, true, 0, 0);
    let s = summarize(&chrome_trace(&[a, b, skipped, cancelled], 1)).unwrap();
    assert_eq!(s.kernels.len(), 1, "{:?}", s.kernels);
    assert_eq!(
        (s.kernels[0].name.as_str(), s.kernels[0].count),
        ("kernel 5", 2)
    );
    assert_eq!((s.skipped, s.cancelled), (1, 1));
}

#[test]
fn a_slice_drawn_async_because_it_overlaps_is_counted_too() {
    // Two records on core 0 that overlap without nesting: the second becomes async.
    let recs = [
        rec(1, 0, 0, WorkerClass::Mix, 10, 30),
        rec(2, 0, 0, WorkerClass::Mix, 20, 40),
    ];
    let t = chrome_trace(&recs, 1);
    let asyncs = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "b" && e["cat"] == "kernel")
        .count();
    assert_eq!(asyncs, 1, "the writer drew one of them async");
    let s = summarize(&t).unwrap();
    assert_eq!((s.slices, s.kernels[0].total_ns), (2, 40_000));
}

#[test]
fn what_is_not_a_trace_is_refused() {
    assert_eq!(summarize(&json!({"x": 1})), Err(SummaryError::NotATrace));
    assert_eq!(
        summarize(&chrome_trace(&[], 1)),
        Err(SummaryError::NoSlices)
    );
    let bad = json!({"traceEvents": [{"ph": "X", "pid": 1, "tid": 0, "name": "k"}]});
    assert_eq!(
        summarize(&bad),
        Err(SummaryError::Malformed {
            index: 0,
            what: "a slice without `ts`"
        })
    );
}

#[test]
fn a_trace_with_its_dependencies_gives_the_overhead_shares_of_its_records() {
    // One AIC and one AIV core; b and c need a; d is a DUMMY after c, e skipped after it.
    let a = rec(1, 0, 0, WorkerClass::Aic, 100, 1100);
    let c = rec(2, 0, 0, WorkerClass::Aic, 1500, 2000);
    let b = rec(3, 1, 1, WorkerClass::Aiv, 1600, 2600);
    let mut d = rec(4, 2, 0, WorkerClass::Dummy, 0, 0);
    (d.core, d.ready, d.dispatch, d.fin) = (None, 2000, 0, 0);
    let mut e = rec(5, 1, 0, WorkerClass::Aiv, 0, 0);
    (e.core, e.ready, e.dispatch, e.fin, e.skipped) = (None, 2000, 0, 0, true);
    let recs = [a, c, b, d, e];
    let tasks = vec![
        (a.task, vec![]),
        (c.task, vec![a.task]),
        (b.task, vec![a.task]),
        (d.task, vec![c.task]),
        (e.task, vec![d.task]),
    ];
    // 1000 ticks per µs: the trace's ns are the ticks (less the origin, which no share sees).
    let want = crate::overhead_shares(&recs, &tasks, (1, 1), 1000).unwrap();
    let mut t = chrome_trace(&recs, 1000);
    assert_eq!(
        summarize(&t).unwrap().overhead,
        None,
        "no dependencies, no shares"
    );
    crate::add_dependencies(&mut t, &tasks, (1, 1));
    crate::check_chrome_trace(&t).unwrap();
    let got = summarize(&t).unwrap().overhead.unwrap();
    assert_eq!(got, want);
    assert!(got.all_engines > 0.0, "{got:?}");
    let text = summarize(&t).unwrap().to_string();
    assert!(text.contains("overhead (as bench computes it)"), "{text}");
}

#[test]
fn a_trace_read_from_a_file_as_it_is_parsed_says_what_the_whole_json_says() {
    let a = rec(1, 0, 0, WorkerClass::Aic, 100, 1100);
    let b = rec(2, 1, 1, WorkerClass::Aiv, 1500, 2600);
    let mut d = rec(3, 2, 0, WorkerClass::Dummy, 0, 0);
    (d.core, d.ready, d.dispatch, d.fin) = (None, 2600, 0, 0);
    let recs = [a, b, d];
    let tasks = vec![
        (a.task, vec![]),
        (b.task, vec![a.task]),
        (d.task, vec![b.task]),
    ];
    // The streaming writer, as `pto-launch run --trace` writes a file.
    let mut bytes = Vec::new();
    let extras = crate::TraceExtras {
        queues: &[],
        dependencies: Some((&tasks, (1, 1))),
    };
    crate::stream_chrome_trace(&mut bytes, &recs, 1000, &crate::Unnamed, extras).unwrap();
    let whole: Value = serde_json::from_slice(&bytes).unwrap();
    let read = RunTrace::from_reader(&bytes[..]).unwrap().summary();
    assert_eq!(read, summarize(&whole).unwrap());
    assert!(
        read.critical_path.is_some() && read.overhead.is_some(),
        "{read:?}"
    );
    assert_eq!(
        RunTrace::from_reader(&bytes[..]).unwrap().swimlane_svg(),
        crate::swimlane_svg(&whole).unwrap()
    );
}

#[test]
fn what_is_not_a_trace_is_refused_when_read_from_a_file_too() {
    let read = |s: &str| RunTrace::from_reader(s.as_bytes()).map(|_| ());
    assert_eq!(read(r#"{"x": 1}"#), Err(SummaryError::NotATrace));
    assert!(
        matches!(
            read("{\"traceEvents\": [1,"),
            Err(SummaryError::Unreadable(_))
        ),
        "a cut file"
    );
    assert!(matches!(read("[]"), Err(SummaryError::Unreadable(_))));
    let bad = r#"{"traceEvents": [{"ph": "M"}, {"ph": "X", "pid": 1, "tid": 0, "name": "k"}]}"#;
    assert_eq!(
        read(bad),
        Err(SummaryError::Malformed {
            index: 1,
            what: "a slice without `ts`"
        })
    );
    assert_eq!(
        read(r#"{"traceEvents": []} trailing"#)
            .map_err(|e| matches!(e, SummaryError::Unreadable(_))),
        Err(true)
    );
}
