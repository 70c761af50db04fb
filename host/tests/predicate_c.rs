//! Predicated tasks from C through `pto-launch run`, on the simulator and on the fake NPU
//! (`libpto_aicpu.so` over the fake CANN): `predicate_c/orchestration.c` gives every
//! operator at every width, unsigned and signed, a true and a false predicate, each on a task
//! that marks its own word, then per signedness and width a task that counts the group's
//! marks and depends on all of them. The golden files hold only if exactly the true ones ran
//! and the counts ran after the skipped ones too; the trace shows each skip. The same DAG
//! recorded as a graph on a decoy buffer and replayed with the values bound in its place
//! gives the same output on both backends: a predicate reads its binding's element.

mod npu_util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Predicated tasks: 2 signednesses x 4 widths x 6 operators x (true, false).
const CASES: usize = 96;
/// Count tasks, one per signedness and width.
const GROUPS: usize = 8;

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("predicate-c-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn source(name: &str) -> PathBuf {
    npu_util::root().join("host/tests/predicate_c").join(name)
}

fn le(words: &[i64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The elements the predicates read: 5 at each unsigned width, -3 at each signed one, each
/// in its own 8-byte slot.
fn values() -> Vec<u8> {
    let mut v = vec![0u8; 64];
    v[0] = 5;
    v[8..10].copy_from_slice(&5u16.to_le_bytes());
    v[16..20].copy_from_slice(&5u32.to_le_bytes());
    v[24..32].copy_from_slice(&5u64.to_le_bytes());
    v[32] = (-3i8) as u8;
    v[40..42].copy_from_slice(&(-3i16).to_le_bytes());
    v[48..52].copy_from_slice(&(-3i32).to_le_bytes());
    v[56..64].copy_from_slice(&(-3i64).to_le_bytes());
    v
}

/// Case k ran if its predicate was the true one (the even cases).
fn marks() -> Vec<i64> {
    (0..CASES).map(|k| i64::from(k % 2 == 0)).collect()
}

fn launch(dir: &Path, kernels: &Path, more: &[String]) -> Output {
    launch_as(dir, kernels, more, false)
}

/// The run, its DAG submitted task by task, or (`graph`) recorded and replayed.
fn launch_as(dir: &Path, kernels: &Path, more: &[String], graph: bool) -> Output {
    let orch = dir.join("liborch.so");
    npu_util::orchestration_so(&source("orchestration.c"), &orch);
    let k = kernels.display();
    let list = format!("{k}:mark,{k}:count");
    let file = |name: &str, bytes: &[u8]| {
        let f = dir.join(name);
        std::fs::write(&f, bytes).unwrap();
        f.display().to_string()
    };
    let mut buffers = vec![
        format!("64={}", file("values.bin", &values())),
        format!("{}", 8 * CASES),
        format!("{}", 8 * GROUPS),
    ];
    let mut args = vec!["kernel:0", "kernel:1", "buffer:0", "buffer:1", "buffer:2"];
    if graph {
        // The decoy the graph is recorded on: zeros, which would flip half the cases.
        buffers.push("64".to_owned());
        args.push("buffer:3");
    }
    let expect = [
        format!("1={}", file("marks.golden", &le(&marks()))),
        format!("2={}", file("counts.golden", &le(&[6; GROUPS]))),
    ];
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .arg("run")
        .arg("--orchestration")
        .arg(&orch)
        .args(["--kernels", &list])
        .args(buffers.iter().flat_map(|b| ["--buffer", b]))
        .args(args.into_iter().flat_map(|a| ["--arg", a]))
        .args(["--dtype", "i64"])
        .args(expect.iter().flat_map(|e| ["--expect", e]))
        .arg("--output")
        .arg(dir)
        .args(more)
        .output()
        .expect("pto-launch runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn assert_checked(o: &Output) {
    let all = text(o);
    assert!(o.status.success(), "{all}");
    assert!(
        all.contains(&format!("({} skipped by their predicate)", CASES / 2)),
        "the run counts the skips: {all}"
    );
    assert_eq!(
        all.matches("matches the golden output").count(),
        2,
        "the marks and the count were checked: {all}"
    );
}

#[test]
fn every_operator_at_every_width_skips_exactly_the_false_ones_on_the_simulator() {
    let dir = scratch("sim");
    let kernels = dir.join("kernels.so");
    npu_util::sim_kernel(&source("kernels.c"), &kernels);
    let trace = dir.join("trace.json");
    let o = launch(
        &dir,
        &kernels,
        &["--trace".to_owned(), trace.display().to_string()],
    );
    assert_checked(&o);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let count = |f: &dyn Fn(&serde_json::Value) -> bool| events.iter().filter(|e| f(e)).count();
    assert_eq!(
        count(&|e| e["name"] == "skipped" && e["ph"] == "b" && e["args"]["skipped"] == true),
        CASES / 2,
        "a skip span per false predicate"
    );
    assert_eq!(
        count(&|e| e["ph"] == "X"),
        CASES / 2 + GROUPS,
        "a kernel slice per task that ran, and none for a skipped one"
    );
    // `pto-launch trace` reads the same run back from the file.
    let summary = Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(["trace", "--json"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(summary.status.success(), "{}", text(&summary));
    let s: serde_json::Value = serde_json::from_slice(&summary.stdout).unwrap();
    let r = &s["results"];
    assert_eq!(r["skipped"], CASES / 2, "{s}");
    assert_eq!(r["slices"], CASES / 2 + GROUPS, "{s}");
    let kernel = |name: &str| {
        r["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["name"] == name)
            .unwrap_or_else(|| panic!("no kernel {name}: {s}"))
            .clone()
    };
    assert_eq!(kernel("mark")["count"], CASES / 2, "{s}");
    assert_eq!(kernel("count")["count"], GROUPS, "{s}");
    // The trace carries the run's DAG (every task with its producers), so the overhead
    // shares and the critical path are read back too, as for a bench scene's trace.
    let tasks = v["otherData"]["tasks"].as_array().unwrap();
    assert_eq!(
        tasks.len(),
        CASES + GROUPS,
        "every task, skipped or not: {s}"
    );
    assert!(
        tasks.iter().any(|t| !t[1].as_array().unwrap().is_empty()),
        "the marks wait for their counts: {s}"
    );
    assert!(r["overhead"]["makespan_ns"].as_f64().unwrap() > 0.0, "{s}");
    let chain = r["critical_path"]["chain"].as_array().unwrap();
    assert!(!chain.is_empty(), "{s}");
    let plain = Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .arg("trace")
        .arg(&trace)
        .output()
        .unwrap();
    let t = text(&plain);
    assert!(
        t.contains(&format!("{} tasks skipped", CASES / 2)) && t.contains("mark"),
        "{t}"
    );
}

#[test]
fn pto_launch_trace_refuses_a_file_that_is_not_a_trace_naming_it() {
    let dir = scratch("not-a-trace");
    let f = dir.join("results.json");
    std::fs::write(&f, b"{\"results\": []}").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .arg("trace")
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains(&format!("{}: not a Chrome trace", f.display())),
        "{err}"
    );
}

#[test]
fn inside_a_graph_every_predicate_reads_its_binding_on_both_backends() {
    let dir = scratch("graph-sim");
    let kernels = dir.join("kernels.so");
    npu_util::sim_kernel(&source("kernels.c"), &kernels);
    assert_checked(&launch_as(&dir, &kernels, &[], true));
    let dir = scratch("graph-npu");
    let kernels = dir.join("kernels.o");
    npu_util::npu_kernel(&source("kernels.c"), &kernels);
    assert_checked(&launch_as(
        &dir,
        &kernels,
        &npu_util::fake_npu_flags(),
        true,
    ));
}

#[test]
fn every_operator_at_every_width_skips_exactly_the_false_ones_on_the_fake_npu() {
    let dir = scratch("npu");
    let kernels = dir.join("kernels.o");
    npu_util::npu_kernel(&source("kernels.c"), &kernels);
    let more = npu_util::fake_npu_flags();
    assert_checked(&launch(&dir, &kernels, &more));
}
