//! Two ranks as processes against the fake CANN: each forms its `hccl` windows (VMM windows
//! through the fake HCCL, the TCP bootstrap between the processes), opens an NPU session on
//! its own device and runs `npu_c/ranks_orchestration.c`. A kernel on each rank writes n
//! words into the peer's window and then bumps a counter there; the peer's consumer waits
//! on that counter through deferred completion (a condition on a word of its own window,
//! which the run names as watched) and sums what landed. Both ranks check their sum, the
//! data and the counter in their window, and that nothing they created is live afterwards.
//!
//! The test process is rank 0; rank 1 is the same test binary started again with
//! [`CHILD_ENV`] naming the rendezvous.

mod npu_util;

use std::net::{SocketAddr, TcpListener};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use npu_util::{fake_cann, kit, live, options, ranks_programs};
use pto_device_sys::cann::Cann;
use pto_host::comm::hccl::{HcclComm, HcclConfig};
use pto_host::npu::{BufferSpec, NpuSession, OrchArg, RunSpec};
use pto_host::transport::bootstrap::Bootstrap;

/// Set in rank 1's process: the rendezvous address.
const CHILD_ENV: &str = "PTO_NPU_RANKS_RENDEZVOUS";
/// This test's name, to start it again as rank 1.
const TEST: &str =
    "two_rank_processes_put_into_each_others_hccl_windows_and_wait_on_deferred_counters";
/// Bytes of each rank's window.
const WINDOW: u64 = 65_536;
/// Words each rank sends (enough that a put usually lands after the peer's FIN, so the
/// condition is usually unmet at FIN and waits in the deferred set; the test does not rely
/// on it, the ranks' timing decides, and rank 0 prints which it was).
const N: u64 = 4096;
/// Offsets in a window (as in `ranks_orchestration.c`): counter, data.
const COUNTER: u64 = 0;
/// See [`COUNTER`].
const DATA: u64 = 128;
/// Bounds every wait of the bootstrap (rank 1 builds its kit meanwhile).
const BOOTSTRAP: Duration = Duration::from_secs(120);

/// The first value rank `r` sends (it sends `first(r) + i`).
fn first(rank: u32) -> i64 {
    1000 * (i64::from(rank) + 1)
}

/// Reads the 8-byte word at `addr` of a window mapped in this process.
fn word(addr: u64) -> u64 {
    // SAFETY: callers pass an 8-byte-aligned address inside this rank's window, which the
    // fake maps as host memory for as long as the `HcclComm` lives.
    unsafe { (addr as *const u64).read_volatile() }
}

/// One rank, start to end; what went wrong, in words.
fn rank_main(rank: u32, addr: SocketAddr, listener: Option<TcpListener>) -> Result<(), String> {
    let k = kit();
    let p = ranks_programs();
    let (orchestration, kernels) = (&p.orchestration, &p.kernels);
    let ctl = fake_cann::Control::open(&k.cann);
    let cann = Arc::new(
        Cann::load_from(std::slice::from_ref(&k.cann)).map_err(|e| format!("loading: {e}"))?,
    );
    {
        let mut b = Bootstrap::tcp(rank, 2, "npu-ranks", addr, listener, BOOTSTRAP)
            .map_err(|e| format!("bootstrap: {e}"))?;
        let cfg = HcclConfig {
            device: rank as i32,
            window_bytes: WINDOW,
        };
        let comm = HcclComm::init(&cann, &cfg, &mut b).map_err(|e| format!("windows: {e}"))?;
        let (mine, size) = comm.local_window();
        let peer = comm
            .context()
            .peer_address(1 - rank, mine, size)
            .map_err(|e| format!("the peer's window: {e:?}"))?;
        let mut opts = options();
        opts.device = rank as i32;
        let mut session = NpuSession::open(opts).map_err(|e| format!("session: {e}"))?;
        let mut spec = RunSpec::new(orchestration.clone(), kernels.clone());
        spec.buffers = vec![BufferSpec {
            bytes: 8,
            init: Vec::new(),
        }];
        spec.args = vec![
            OrchArg::Kernel(0),
            OrchArg::Kernel(1),
            OrchArg::Kernel(2),
            OrchArg::Value(mine),
            OrchArg::Value(peer),
            OrchArg::Value(N),
            OrchArg::Value(first(rank) as u64),
            OrchArg::Buffer(0),
        ];
        spec.watched = vec![(mine, size)];
        spec.records = 16;
        let out = session.run(&spec).map_err(|e| format!("run: {e}"))?;
        if out.status.finished() != 3 {
            return Err(format!("3 tasks should finish: {}", out.status));
        }
        let from = first(1 - rank);
        let n = N as i64;
        let sum = i64::from_le_bytes(out.buffers[0][..8].try_into().unwrap());
        if sum != n * from + n * (n - 1) / 2 {
            return Err(format!("the sum of what landed is {sum}, not of {from}.."));
        }
        for i in 0..N {
            let got = word(mine + DATA + 8 * i) as i64;
            if got != from + i as i64 {
                return Err(format!("word {i} of the window is {got}"));
            }
        }
        // The records: the wait task went through the deferred set, its consumer started
        // only once its condition held.
        let of = |kernel: u32| out.records.iter().find(|r| r.kernel == kernel).copied();
        let (Some(wait), Some(sum)) = (of(1), of(2)) else {
            return Err(format!("no records of wait and sum: {:?}", out.records));
        };
        if out.records.len() != 3 || wait.deferred_done == 0 || wait.deferred_done < wait.fin {
            return Err(format!("wait was not deferred: {:?}", out.records));
        }
        if sum.dispatch < wait.deferred_done {
            return Err(format!(
                "sum started before wait completed: {sum:?} {wait:?}"
            ));
        }
        eprintln!(
            "rank {rank}: the condition held {} ticks after the wait's FIN",
            wait.deferred_done - wait.fin
        );
        let counter = word(mine + COUNTER) as u32;
        if counter != 1 {
            return Err(format!("the counter is {counter}, not 1"));
        }
        // Neither lets its window go before the peer is done with it.
        b.barrier().map_err(|e| format!("the last barrier: {e}"))?;
        drop(session);
        drop(comm);
    }
    let left = live(&ctl);
    if left.iter().any(|&(_, n)| n != 0) {
        return Err(format!("left live: {left:?}"));
    }
    Ok(())
}

#[test]
fn two_rank_processes_put_into_each_others_hccl_windows_and_wait_on_deferred_counters() {
    if let Ok(at) = std::env::var(CHILD_ENV) {
        let addr = at.parse().expect("the rendezvous address");
        rank_main(1, addr, None).unwrap_or_else(|e| panic!("rank 1: {e}"));
        return;
    }
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, addr.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rank 1 starts");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let mine = rank_main(0, addr, Some(l));
    let Ok(theirs) = rx.recv_timeout(BOOTSTRAP + Duration::from_secs(60)) else {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("rank 1 did not end; rank 0: {mine:?}");
    };
    let theirs = theirs.expect("waiting for rank 1");
    let text = format!(
        "rank 0: {mine:?}\nrank 1 ({}):\n{}{}",
        theirs.status,
        String::from_utf8_lossy(&theirs.stdout),
        String::from_utf8_lossy(&theirs.stderr)
    );
    assert!(mine.is_ok() && theirs.status.success(), "{text}");
    assert!(
        String::from_utf8_lossy(&theirs.stdout).contains("1 passed"),
        "rank 1 ran the test: {text}"
    );
}
