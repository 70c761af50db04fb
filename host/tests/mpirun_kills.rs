//! Under mpirun, a rank SIGKILLed is named by a surviving rank before mpirun's own teardown
//! (which ends every other rank soon after one dies) silences them: 8 ranks of `pto-launch
//! allreduce`, rank 4 killed 250 ms after mpirun started (the ranks have joined, they are
//! summing), and as soon as its process appears (before it joined: its peers never learn its
//! process, only that it never came).
//!
//! `PTO_MPIRUN_KILL_TRIALS` sets the trials of each point (default 2). Skipped, saying so,
//! where mpirun is not installed.

mod job_util;

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use job_util::{BOUND, group_gone, has_thread, object, pid, processes, serial};
use rustix::process::Signal;

/// When rank 4 is killed.
#[derive(Clone, Copy, Debug)]
enum Point {
    /// 250 ms after mpirun started.
    At250Ms,
    /// As soon as its process exists: before it could join.
    BeforeJoining,
}

/// The process of rank `rank` of the job `run_id` (mpirun passes `PTO_RUN_ID` to each).
fn rank_process(run_id: &str, rank: u32) -> Option<u32> {
    let want_rank = format!("OMPI_COMM_WORLD_RANK={rank}");
    let want_job = format!("PTO_RUN_ID={run_id}");
    processes()
        .into_iter()
        .filter(|&(_, state, ..)| !matches!(state, 'Z' | 'X'))
        .find(|&(p, ..)| {
            let exe = std::fs::read_link(format!("/proc/{p}/exe"));
            let ours = exe.is_ok_and(|e| e.ends_with("pto-launch"));
            ours && std::fs::read(format!("/proc/{p}/environ")).is_ok_and(|env| {
                let vars: Vec<&[u8]> = env.split(|&b| b == 0).collect();
                vars.contains(&want_rank.as_bytes()) && vars.contains(&want_job.as_bytes())
            })
        })
        .map(|(p, ..)| p)
}

/// One trial: returns a surviving rank's line that named rank 4, if one did, whether rank 4 had joined when
/// it was killed, and what mpirun printed.
fn trial(point: Point, run_id: &str, log: &PathBuf) -> (Option<String>, Option<bool>, String) {
    let out = File::create(log).expect("the trial's log");
    let err = out.try_clone().expect("the trial's log");
    let mut child = Command::new("mpirun")
        // As root Open MPI needs --allow-run-as-root; past the core count, --oversubscribe.
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "8"])
        .args(["-x", &format!("PTO_RUN_ID={run_id}")])
        .arg(env!("CARGO_BIN_EXE_pto-launch"))
        .args(["allreduce", "--elements", "300000", "--timeout-s", "20"])
        .env_remove("PTO_RANK")
        .env_remove("PTO_RANKS")
        .env_remove("PTO_LAUNCHER_PID")
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0)
        .spawn()
        .expect("mpirun starts");
    let start = Instant::now();
    let group = child.id();
    let mut joined = None;
    while start.elapsed() < BOUND && child.try_wait().ok().flatten().is_none() {
        let due = match point {
            Point::At250Ms => start.elapsed() >= Duration::from_millis(250),
            Point::BeforeJoining => true,
        };
        if due && let Some(p) = rank_process(run_id, 4) {
            joined = Some(has_thread(p, "heartbeat-"));
            let _ = rustix::process::kill_process(pid(p), Signal::KILL);
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    while child.try_wait().ok().flatten().is_none() {
        if start.elapsed() > BOUND {
            let _ = rustix::process::kill_process_group(pid(group), Signal::KILL);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let said = std::fs::read_to_string(log).unwrap_or_default();
    let left = group_gone(group);
    assert!(
        left.is_empty(),
        "processes {left:?} outlived mpirun\n{said}"
    );
    assert!(
        !std::path::Path::new(&object(run_id)).exists(),
        "{} outlived the job\n{said}",
        object(run_id)
    );
    // A survivor's line, not mpirun's own ("process rank 4 with PID ... exited").
    let named = said
        .lines()
        .find(|l| l.contains("rank 4 died") || l.contains("rank 4 never joined"));
    (named.map(str::to_string), joined, said)
}

#[test]
fn a_rank_killed_under_mpirun_is_named_by_a_survivor() {
    let _one = serial();
    let Ok(found) = Command::new("mpirun").arg("--version").output() else {
        println!("skipped: mpirun not found (apt-get install openmpi-bin; .ci/run installs it)");
        return;
    };
    if !found.status.success() {
        println!("skipped: mpirun --version failed");
        return;
    }
    let trials: u32 = std::env::var("PTO_MPIRUN_KILL_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mpirun-kill-{}.log", std::process::id()));
    let mut failures = Vec::new();
    let start = Instant::now();
    for point in [Point::At250Ms, Point::BeforeJoining] {
        let (mut named, mut joined_at_kill) = (0, 0);
        for i in 0..trials {
            let run_id = format!("mk-{}-{point:?}-{i}", std::process::id());
            let (line, joined, said) = trial(point, &run_id, &log);
            let ok = line.is_some();
            if let (Some(l), 0) = (&line, named) {
                println!("{point:?}: {l}");
            }
            named += ok as u32;
            joined_at_kill += (joined == Some(true)) as u32;
            if joined.is_none() {
                failures.push(format!("{point:?}: rank 4 never seen to kill\n{said}"));
            } else if !ok {
                failures.push(format!("{point:?}: no survivor named rank 4\n{said}"));
            }
        }
        println!(
            "rank 4 of 8 killed {point:?}: named by a survivor in {named} of {trials} trials \
             (it had joined at the kill in {joined_at_kill})"
        );
    }
    let _ = std::fs::remove_file(&log);
    println!("{:.1} s", start.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
