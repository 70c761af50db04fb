//! A run's capacities from `pto-launch run`'s flags, the orchestration SO's declaration
//! (`PTO_ORCHESTRATION_CONFIG`) or the defaults: a program the defaults refuse runs once its
//! SO declares what it needs, on the simulator and on the fake NPU; a flag overrides the
//! declaration; a malformed one is refused naming the SO and the field. The program
//! (`npu_c/caps.c`) submits DUMMY tasks only, so nothing here depends on the kernels. And the
//! command line around them: a negative `--arg`, `--trace-records`.

mod npu_util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use npu_util::{kit, options, orchestration_so, programs, root, scratch, text, ticks_per_us};
use pto_host::npu::{BufferSpec, NpuSession, OrchArg, RunSpec};
use pto_host::orch_config::Capacities;

/// Dependencies of the joining task, scalar arguments of the last: past the defaults (16
/// and 16), within what `caps_declared.c` declares (32 and 20).
const DEPS: u64 = 24;
const SCALARS: u64 = 20;

/// The three SOs: the program as is, declaring its capacities, declaring too many.
struct Sos {
    plain: PathBuf,
    declared: PathBuf,
    malformed: PathBuf,
}

fn sos() -> &'static Sos {
    static S: OnceLock<Sos> = OnceLock::new();
    S.get_or_init(|| {
        let dir = scratch();
        let so = |name: &str| {
            let out = dir.join(format!("lib{name}.so"));
            orchestration_so(&root().join(format!("host/tests/npu_c/{name}.c")), &out);
            out
        };
        Sos {
            plain: so("caps"),
            declared: so("caps_declared"),
            malformed: so("caps_malformed"),
        }
    })
}

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("capacities-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `pto-launch run` of `so` on the simulator: the program with `deps` and `scalars`,
/// storing `value` in buffer 0, with `more` flags.
fn launch(so: &Path, deps: u64, value: &str, more: &[&str]) -> Output {
    // An object file for the fake NPU, a shared object for the simulator.
    let kernel = if more.contains(&"npu") {
        &programs().kernel_files[0]
    } else {
        &programs().sim_kernel_files[0]
    };
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(["run", "--orchestration"])
        .arg(so)
        .arg("--kernels")
        .arg(kernel)
        .args(["--buffer", "8", "--arg", &deps.to_string()])
        .args(["--arg", &SCALARS.to_string(), "--arg", "buffer:0"])
        .args(["--arg", value])
        .args(more)
        .output()
        .expect("pto-launch runs")
}

/// `more` and the flags of one cluster of the fake NPU ([`npu_util::fake_npu_flags`]), for
/// [`launch`] (which then passes the kernel built for it).
fn npu<'a>(more: &[&'a str]) -> Vec<&'a str> {
    static FLAGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let flags = FLAGS.get_or_init(npu_util::fake_npu_flags);
    let mut args: Vec<&'a str> = more.to_vec();
    args.extend(flags.iter().map(String::as_str));
    args.extend(["--clusters", "1"]);
    args
}

fn word(dir: &Path) -> i64 {
    let b = std::fs::read(dir.join("buffer_0.bin")).unwrap();
    i64::from_le_bytes(b[..8].try_into().unwrap())
}

#[test]
fn a_program_the_defaults_refuse_runs_once_its_so_declares_what_it_needs() {
    let o = launch(&sos().plain, DEPS, "1", &[]);
    let err = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the orchestration returned -14") && err.contains("raise --max-deps"),
        "the refusal names the flag: {err}"
    );
    assert!(!err.contains("max_deps"), "and no Rust field: {err}");
    let out = out_dir("declared");
    let o = launch(
        &sos().declared,
        DEPS,
        "-256",
        &["--output", out.to_str().unwrap()],
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains(&format!("simulator: finished {} tasks", DEPS + 2)),
        "{t}"
    );
    assert_eq!(
        word(&out),
        -256,
        "a negative --arg arrives as its two's complement"
    );
}

#[test]
fn a_flag_overrides_the_declaration_and_json_says_where_each_capacity_came_from() {
    let o = launch(&sos().declared, DEPS, "1", &["--max-deps", "16"]);
    let err = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("raise --max-deps"), "{err}");
    let o = launch(
        &sos().declared,
        4,
        "1",
        &["--json", "--max-tensors", "12", "--heap-bytes", "4096"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).expect("one envelope");
    let caps = &v["config"]["capacities"];
    let setting = |k: &str| (caps[k]["value"].as_u64().unwrap(), caps[k]["from"].clone());
    assert_eq!(setting("max_deps"), (32, "so".into()), "{v}");
    assert_eq!(setting("max_args"), (20, "so".into()), "{v}");
    assert_eq!(setting("task_window"), (256, "so".into()), "{v}");
    assert_eq!(setting("max_tensors"), (12, "flag".into()), "{v}");
    assert_eq!(setting("heap_bytes"), (4096, "flag".into()), "{v}");
    assert_eq!(v["config"]["backend"], "sim", "{v}");
    assert_eq!(
        v["config"]["task_timeout_ms"], 10_000,
        "defaults filled in: {v}"
    );
    assert_eq!(v["config"]["trace_records"], 0, "{v}");
    assert_eq!(v["results"]["tasks_finished"], 6, "{v}");
    // Without a declaration, the defaults say so.
    let o = launch(&sos().plain, 4, "1", &["--json", "--max-args", "20"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(
        v["config"]["capacities"]["max_deps"]["from"], "default",
        "{v}"
    );
    assert_eq!(v["config"]["capacities"]["max_deps"]["value"], 16, "{v}");
}

#[test]
fn a_malformed_declaration_is_refused_naming_the_so_and_the_field_before_anything_runs() {
    let out = out_dir("malformed");
    let o = launch(
        &sos().malformed,
        DEPS,
        "1",
        &["--max-deps", "32", "--output", out.to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let want = format!(
        "error: {}: pto_orchestration_config.max_deps = 100: a task may have 1 to 64 \
         dependencies",
        sos().malformed.display()
    );
    assert_eq!(
        err.trim_end(),
        want,
        "one line, naming the file and the field"
    );
    assert!(!out.exists(), "nothing ran");
}

#[test]
fn tensors_and_arguments_past_a_slot_are_refused_naming_both_flags() {
    let o = launch(&sos().declared, 4, "1", &["--max-tensors", "30"]);
    let err = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--max-tensors (30, given) + --max-args (20, declared by the SO) = 50"),
        "{err}"
    );
    assert!(err.contains("lower --max-tensors or --max-args"), "{err}");
}

#[test]
fn both_backends_keep_every_record_through_a_small_ring() {
    let out = out_dir("trace");
    std::fs::create_dir_all(&out).unwrap();
    let tasks = DEPS + 2;
    // The simulator drains a ring of 4 cells while the run goes: every task keeps its record.
    let trace = out.join("sim.json");
    let o = launch(
        &sos().declared,
        DEPS,
        "1",
        &["--trace", trace.to_str().unwrap(), "--trace-records", "4"],
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains(&format!("({tasks} of {tasks} task records)")),
        "{t}"
    );
    assert!(!t.contains("raise --trace-records"), "{t}");
    // The (fake) NPU's record pump streams them to the host through a ring of 4 as well.
    let trace = out.join("npu.json");
    let o = launch(
        &sos().declared,
        DEPS,
        "1",
        &npu(&["--trace", trace.to_str().unwrap(), "--trace-records", "4"]),
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains(&format!("({tasks} of {tasks} task records)")),
        "{t}"
    );
    assert!(!t.contains("raise --trace-records"), "{t}");
    let json = std::fs::read_to_string(&trace).unwrap();
    // A task's life on its scheduler begins once per record.
    assert_eq!(
        json.matches("\"ph\":\"b\"").count(),
        tasks as usize,
        "{json}"
    );
    let o = launch(&sos().declared, DEPS, "1", &["--trace-records", "4"]);
    assert!(
        text(&o).contains("--trace-records applies to --trace"),
        "{}",
        text(&o)
    );
}

/// The program on the fake NPU through the library, with `so`.
fn npu_spec(so: &Path, deps: u64) -> RunSpec {
    let mut spec = RunSpec::new(std::fs::read(so).unwrap(), vec![kit().kernels[0].clone()]);
    spec.buffers = vec![BufferSpec {
        bytes: 8,
        init: Vec::new(),
    }];
    spec.args = vec![
        OrchArg::Value(deps),
        OrchArg::Value(SCALARS),
        OrchArg::Buffer(0),
        OrchArg::Value(-7i64 as u64),
    ];
    spec
}

#[test]
fn the_npu_path_honours_the_declaration_and_a_given_value_over_it() {
    let mut session = NpuSession::open(options()).unwrap_or_else(|e| panic!("{e}"));
    let out = session
        .run(&npu_spec(&sos().declared, DEPS))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.finished(), DEPS + 2);
    assert_eq!(
        i64::from_le_bytes(out.buffers[0][..8].try_into().unwrap()),
        -7
    );
    let mut spec = npu_spec(&sos().declared, DEPS);
    spec.capacities = Capacities {
        max_deps: Some(16),
        ..Capacities::default()
    };
    let e = NpuSession::open(options())
        .unwrap()
        .run(&spec)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("the orchestration returned -14"), "{e}");
    let e = NpuSession::open(options())
        .unwrap()
        .run(&npu_spec(&sos().malformed, DEPS))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("pto_orchestration_config.max_deps = 100"), "{e}");
}

#[test]
fn pto_launch_on_the_fake_npu_runs_the_declared_program() {
    let out = out_dir("npu");
    let o = launch(
        &sos().declared,
        DEPS,
        "-3",
        &npu(&["--output", out.to_str().unwrap()]),
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains(&format!("finished {} tasks", DEPS + 2)), "{t}");
    assert_eq!(word(&out), -3);
}

#[test]
fn heap_bytes_is_each_rings_own_heap_on_both_backends() {
    let dir = scratch();
    let so = dir.join("libheap.so");
    orchestration_so(&root().join("host/tests/npu_c/heap.c"), &so);
    let run = |bytes: u64, ring: u8, npu: bool| {
        let kernel = if npu {
            &programs().kernel_files[0]
        } else {
            &programs().sim_kernel_files[0]
        };
        let mut c = Command::new(env!("CARGO_BIN_EXE_pto-launch"));
        c.args(["run", "--orchestration"])
            .arg(&so)
            .arg("--kernels")
            .arg(kernel)
            .args(["--arg", &bytes.to_string(), "--arg", &ring.to_string()])
            .args(["--heap-bytes", "4096"]);
        if npu {
            let k = kit();
            c.args(["--backend", "npu", "--clusters", "1", "--aicpu-so"])
                .arg(&k.artifacts.aicpu_so)
                .arg("--dispatcher-so")
                .arg(&k.artifacts.dispatcher_so)
                .arg("--aicore-executor")
                .arg(&k.artifacts.aicore_executor)
                .arg("--cann-dir")
                .arg(&k.cann)
                .args(["--device-ticks-per-us", &ticks_per_us().to_string()]);
        }
        c.output().expect("pto-launch runs")
    };
    for npu in [false, true] {
        for ring in [0, 3] {
            let o = run(4096, ring, npu);
            assert!(o.status.success(), "ring {ring} (npu {npu}): {}", text(&o));
        }
        let o = run(4097, 0, npu);
        let err = text(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("--heap-bytes"),
            "the refusal names the flag: {err}"
        );
    }
}
