//! The hccl backend against the fake CANN: ranks on threads form their windows over the TCP
//! bootstrap and see each other's memory; a failure injected at every CANN call, on one rank
//! or two, ends every rank with an error and leaves nothing live.

#[path = "../../device-sys/tests/fake_cann/mod.rs"]
mod fake_cann;

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use pto_device_sys::cann::Cann;
use pto_host::comm::hccl::{HcclComm, HcclConfig, HcclError};
use pto_host::transport::bootstrap::Bootstrap;

/// The fake's state is per process: one test at a time.
static FAKE: Mutex<()> = Mutex::new(());

fn fake() -> &'static (Arc<Cann>, PathBuf) {
    static F: OnceLock<(Arc<Cann>, PathBuf)> = OnceLock::new();
    F.get_or_init(|| {
        let dir = fake_cann::build("hccl", &[]);
        (
            Arc::new(Cann::load_from(std::slice::from_ref(&dir)).unwrap()),
            dir,
        )
    })
}

/// Forms `ranks` ranks' windows on threads; every rank's outcome, in rank order.
fn form(ranks: u32) -> Vec<Result<HcclComm, HcclError>> {
    let (cann, _) = fake();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let mut l = Some(l);
    let run = format!("hccl-{}", std::process::id());
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..ranks)
            .map(|rank| {
                let l = if rank == 0 { l.take() } else { None };
                let run = run.clone();
                s.spawn(move || {
                    let mut b = Bootstrap::tcp(rank, ranks, &run, addr, l, Duration::from_secs(5))?;
                    let cfg = HcclConfig {
                        device: rank as i32,
                        window_bytes: 100_000,
                    };
                    HcclComm::init(cann, &cfg, &mut b)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn ranks_see_each_others_windows_and_leave_nothing_behind() {
    let _g = FAKE.lock().unwrap_or_else(|p| p.into_inner());
    let ctl = fake_cann::Control::open(&fake().1);
    let comms: Vec<HcclComm> = form(3).into_iter().map(Result::unwrap).collect();
    for (r, c) in comms.iter().enumerate() {
        let (base, size) = c.local_window();
        assert_eq!(size, 131_072, "rounded up to the granularity");
        assert_eq!(c.peer_windows(), 2);
        assert_eq!(c.context().local_window(), base);
        // SAFETY: the fake maps host memory at the window's address, `size` bytes.
        unsafe { (base as *mut u64).write_volatile(100 + r as u64) };
    }
    for (r, c) in comms.iter().enumerate() {
        let (base, _) = c.local_window();
        for peer in 0..3u32 {
            let at = c.context().peer_address(peer, base, 8).unwrap();
            // SAFETY: `at` is the peer's window as mapped in this process.
            let v = unsafe { (at as *const u64).read_volatile() };
            assert_eq!(v, 100 + peer as u64, "rank {r} reading rank {peer}");
        }
    }
    drop(comms);
    assert_eq!(ctl.live(), 0);
}

#[test]
fn a_failure_at_any_call_ends_every_rank_with_an_error_and_leaks_nothing() {
    let _g = FAKE.lock().unwrap_or_else(|p| p.into_inner());
    let ctl = fake_cann::Control::open(&fake().1);
    for ranks in [1u32, 2] {
        // The calls a clean run makes until every rank is set up.
        let before = ctl.calls();
        let ok = form(ranks);
        let setup = ctl.calls() - before;
        assert!(ok.iter().all(Result::is_ok));
        drop(ok);
        assert_eq!(ctl.live(), 0);
        for k in 1..=setup {
            ctl.fail_at(k);
            let outcome = form(ranks);
            ctl.fail_at(0);
            let failed = outcome.iter().filter(|r| r.is_err()).count();
            assert_eq!(
                failed, ranks as usize,
                "{ranks} rank(s), call {k}: every rank fails"
            );
            assert!(
                outcome.iter().any(|r| matches!(r, Err(HcclError::Cann(_)))),
                "call {k}: one rank reports the CANN call"
            );
            drop(outcome);
            assert_eq!(ctl.live(), 0, "{ranks} rank(s), failure at call {k}");
        }
    }
}

#[test]
fn pto_launch_says_when_cann_is_missing_and_finds_it_through_ascend_home_path() {
    let run = |home: Option<&std::path::Path>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_pto-launch"));
        c.args(["allreduce", "--backend", "hccl"])
            .env_remove("ASCEND_HOME_PATH")
            .env_remove("ASCEND_TOOLKIT_HOME");
        if let Some(h) = home {
            c.env("ASCEND_HOME_PATH", h);
        }
        let out = c.output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let missing = run(None);
    assert!(
        missing.contains("CANN is not installed or not found")
            && missing.contains("libascendcl.so")
            && missing.contains("ASCEND_HOME_PATH"),
        "{missing}"
    );
    let home = fake().1.parent().unwrap();
    let found = run(Some(home));
    assert!(
        found.contains(&format!(
            "CANN found ({}",
            home.join("lib64/libascendcl.so").display()
        )),
        "{found}"
    );
}
