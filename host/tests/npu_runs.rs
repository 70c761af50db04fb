//! Runs on an NPU through CANN, against the fake CANN (`device-sys/cann/fake/`): a DAG from
//! a C orchestration SO with tensor arguments, checked, 20 times in one session; a kernel
//! error and a hang, each reported with the device's run status, and a new session that
//! works after each.

mod npu_util;

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use npu_util::{check_sums, dag, fake_cann, kit, live, options};
use pto_host::npu::{NpuError, NpuSession, Timeouts};

/// The fake's state is the process's: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn control() -> fake_cann::Control {
    fake_cann::Control::open(&kit().cann)
}

/// Closes a session a failure left unusable: nothing of it stays live, and a new session
/// runs the DAG with every result checked.
fn closes_clean_and_the_next_session_works(ctl: &fake_cann::Control, session: NpuSession) {
    drop(session);
    assert!(live(ctl).iter().all(|&(_, n)| n == 0), "{:?}", live(ctl));
    let mut next = NpuSession::open(options()).unwrap_or_else(|e| panic!("{e}"));
    let out = next.run(&dag(0, 0)).unwrap_or_else(|e| panic!("{e}"));
    check_sums(&out.buffers[0]).unwrap();
}

#[test]
fn a_dag_runs_twenty_times_in_one_session_every_result_checked() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = control();
    let mut session = NpuSession::open(options()).unwrap_or_else(|e| panic!("{e}"));
    let (uploads, registrations) = (
        ctl.calls_of("rtAicpuKernelLaunchExWithArgs"),
        ctl.calls_of("rtRegisterAllKernel"),
    );
    let mut last = 0;
    let start = std::time::Instant::now();
    let mut mallocs = vec![ctl.calls_of("aclrtMalloc")];
    for i in 0..20 {
        let out = session
            .run(&dag(0, 0))
            .unwrap_or_else(|e| panic!("run {i}: {e} {:?}", e.device_status()));
        assert!(out.status.ok(), "run {i}: {}", out.status);
        assert_eq!(
            out.status.finished(),
            4 * npu_util::BLOCKS,
            "{}",
            out.status
        );
        assert!(
            out.status.0.run > last,
            "the SO counts its runs: {}",
            out.status
        );
        last = out.status.0.run;
        check_sums(&out.buffers[0]).unwrap_or_else(|e| panic!("run {i}: {e}"));
        mallocs.push(ctl.calls_of("aclrtMalloc"));
    }
    let per_run: Vec<i64> = mallocs.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        per_run[1..].iter().all(|&n| n == per_run[1]),
        "every later run allocates alike: {per_run:?}"
    );
    assert_eq!(
        per_run[0] - per_run[1],
        npu_util::kit().kernels.len() as i64 + 1,
        "the kernels and the orchestration SO are uploaded by the first run only: {per_run:?}"
    );
    eprintln!("20 runs in {:?}", start.elapsed());
    assert_eq!(
        ctl.calls_of("rtAicpuKernelLaunchExWithArgs"),
        uploads,
        "no upload after the first"
    );
    assert_eq!(
        ctl.calls_of("rtRegisterAllKernel"),
        registrations,
        "the executor is registered once, not per run"
    );
    assert!(ctl.calls_of("rtKernelLaunchWithHandleV2") >= 20);
    drop(session);
    assert!(
        live(&ctl).iter().all(|&(_, n)| n == 0),
        "everything given back: {:?}",
        live(&ctl)
    );
}

#[test]
fn a_failing_kernel_is_reported_with_the_run_status_and_the_next_session_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = control();
    let mut session = NpuSession::open(options()).unwrap_or_else(|e| panic!("{e}"));
    let e = session.run(&dag(1, 0)).expect_err("a kernel fails");
    let status = e
        .device_status()
        .unwrap_or_else(|| panic!("no device status: {e}"));
    assert_eq!(status.error_kind(), 3, "kernel failed: {e}");
    assert_eq!(status.0.sched.error_detail, 42, "the kernel's code: {e}");
    let text = e.to_string();
    assert!(text.contains("kernel failed on task"), "{text}");
    assert!(text.contains("device:"), "{text}");
    assert!(e.host_code().is_none(), "no host call failed: {text}");
    assert!(!session.usable());
    assert!(matches!(
        session.run(&dag(0, 0)),
        Err(NpuError::Unusable(0))
    ));
    closes_clean_and_the_next_session_works(&ctl, session);
}

#[test]
fn a_hung_kernel_is_reported_with_the_run_status_and_the_aicore_timeout() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = control();
    let mut opts = options();
    // Device task timeout < device watchdog < op-execute < stream sync. The AICore's stream
    // ends only at op-execute (its kernel hangs until the recovery), and the AICPU must have
    // reported well before: on a loaded 2-CPU machine its ~1.2 s (the task timeout, then
    // the exit handshake's bound for the hung core) once took more than 4 s, so the watchdog
    // (which would report the run aborted instead) waits 7 s.
    opts.timeouts = Timeouts {
        task_us: 200_000,
        submit_us: 1_000_000,
        deferred_us: 1_000_000,
        core_handshake_us: 1_000_000,
        device_watchdog_us: 7_000_000,
        op_execute_us: 10_000_000,
        stream_sync_ms: 12_000,
        recovery_ms: 500,
    };
    let mut session = NpuSession::open(opts).unwrap_or_else(|e| panic!("{e}"));
    static FLAG: AtomicI64 = AtomicI64::new(0);
    FLAG.store(0, Ordering::SeqCst);
    // The hung kernel is freed once the host started its recovery (a real device is reset).
    let syncs = ctl.calls_of("aclrtSynchronizeDeviceWithTimeout");
    let releaser = std::thread::spawn(move || {
        let ctl = control();
        for _ in 0..60_000 {
            if ctl.calls_of("aclrtSynchronizeDeviceWithTimeout") > syncs {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        FLAG.store(1, Ordering::SeqCst);
    });
    let e = session
        .run(&dag(2, FLAG.as_ptr() as u64))
        .expect_err("a kernel hangs");
    releaser.join().unwrap();
    let status = e
        .device_status()
        .unwrap_or_else(|| panic!("no device status: {e}"));
    assert_eq!(status.error_kind(), 1, "task timeout: {e}");
    assert_eq!(e.host_code(), Some(507014), "the AICore op timed out: {e}");
    let text = e.to_string();
    assert!(text.contains("ACL_ERROR_RT_AICORE_TIMEOUT"), "{text}");
    assert!(text.contains("task timeout on task"), "{text}");
    assert!(
        text.contains("stall class: running-stalled: "),
        "the device's report is classed as on the simulator: {text}"
    );
    closes_clean_and_the_next_session_works(&ctl, session);
}

#[test]
fn timeouts_out_of_order_are_refused_before_anything_is_loaded() {
    let mut opts = options();
    opts.timeouts.op_execute_us = opts.timeouts.stream_sync_ms as u64 * 1000;
    let e = NpuSession::open(opts).expect_err("op-execute must be below stream sync");
    assert!(e.to_string().contains("timeouts out of order"), "{e}");
}

#[test]
fn a_session_used_from_another_thread_sets_the_device_there_and_gives_it_back() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = control();
    let mut session = NpuSession::open(options()).unwrap_or_else(|e| panic!("{e}"));
    let sets = ctl.calls_of("aclrtSetDevice");
    let session = std::thread::spawn(move || {
        let out = session.run(&dag(0, 0)).unwrap_or_else(|e| panic!("{e}"));
        check_sums(&out.buffers[0]).unwrap();
        session
    })
    .join()
    .unwrap();
    assert_eq!(
        ctl.calls_of("aclrtSetDevice"),
        sets + 1,
        "the device is set on the new thread, once"
    );
    assert_eq!(ctl.live_of("device"), 2, "one setting per thread");
    drop(session);
    assert!(live(&ctl).iter().all(|&(_, n)| n == 0), "{:?}", live(&ctl));
}
