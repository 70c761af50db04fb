//! Helpers for the job trials: launching `pto-launch` and mpirun-style ranks, reading
//! `/proc`, reaping, and checking that a job left nothing behind. Every wait is bounded.
#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every generous bound of these tests: nothing here should take a tenth of it.
pub const BOUND: Duration = Duration::from_secs(30);

pub fn launcher(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pto-launch"));
    c.args(args);
    for var in [
        "PTO_RANK",
        "PTO_RANKS",
        "PTO_RUN_ID",
        "PTO_LAUNCHER_PID",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_MCA_ess_base_jobid",
    ] {
        c.env_remove(var);
    }
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

pub fn id(tag: &str) -> String {
    format!("jobs-{tag}-{}", std::process::id())
}

pub fn object(run_id: &str) -> String {
    format!("/dev/shm/pto-{run_id}")
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn pid(raw: u32) -> Pid {
    Pid::from_raw(raw as i32).expect("a process id is not 0")
}

/// `(pid, state, ppid, pgrp)` of every process.
pub fn processes() -> Vec<(u32, char, u32, u32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            let mut f = stat.rsplit_once(')')?.1.split_whitespace();
            let state = f.next()?.chars().next()?;
            let ppid = f.next()?.parse().ok()?;
            let pgrp = f.next()?.parse().ok()?;
            Some((p, state, ppid, pgrp))
        })
        .collect()
}

/// Waits (bounded) until no live process is left in process group `group`, reaping those
/// that became this process's children (it is their subreaper). Returns the live ones left.
pub fn group_gone(group: u32) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let me = std::process::id();
        let mut live = Vec::new();
        for (p, state, ppid, pgrp) in processes() {
            if pgrp != group {
                continue;
            }
            if ppid == me && p != group {
                // An orphaned rank, now ours: reap it if it ended.
                let _ = rustix::process::waitpid(Some(pid(p)), WaitOptions::NOHANG);
            }
            if !matches!(state, 'Z' | 'X') {
                live.push(p);
            }
        }
        if live.is_empty() || start.elapsed() > BOUND {
            return live;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Ranks orphaned by a killed launcher come to this process, so it can reap them and tell
/// that they ended.
pub fn become_subreaper() {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
        .expect("PR_SET_CHILD_SUBREAPER");
}

/// Whether process `p` has the object of `run_id` mapped (also once its name is removed).
pub fn maps(p: u32, run_id: &str) -> bool {
    let path = object(run_id);
    std::fs::read_to_string(format!("/proc/{p}/maps")).is_ok_and(|m| {
        m.lines()
            .any(|l| l.split_whitespace().nth(5) == Some(&path[..]))
    })
}

/// Waits (bounded) until every process in `pids` has mapped the object of `run_id`.
pub fn wait_mapped(pids: &[u32], run_id: &str) -> bool {
    let start = Instant::now();
    while start.elapsed() < BOUND {
        if pids.iter().all(|&p| maps(p, run_id)) {
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    false
}

/// Whether process `p` runs a thread whose name starts with `prefix`.
pub fn has_thread(p: u32, prefix: &str) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with(prefix))
    })
}

/// Whether process `p` has ended (a zombie not reaped yet, or gone).
pub fn ended(p: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{p}/stat")).map_or(true, |s| {
        let state = s
            .rsplit_once(')')
            .and_then(|(_, r)| r.trim_start().chars().next());
        matches!(state, Some('Z' | 'X'))
    })
}

/// Waits (bounded) until every rank in `pids` has joined its job, or ended (a job done before
/// this looked, a rank that failed on its own): a rank starts its heartbeat thread
/// (`heartbeat-<rank>`) only once it has published its process id and its first heartbeat, so
/// from then on its peers can tell that it died. Mapping the object comes before that: a rank
/// killed between the two is one its peers never knew (they time out).
pub fn wait_joined(pids: &[u32]) -> bool {
    let start = Instant::now();
    let mut joined = vec![false; pids.len()];
    while start.elapsed() < BOUND {
        for (j, &p) in joined.iter_mut().zip(pids) {
            *j = *j || has_thread(p, "heartbeat-") || ended(p);
        }
        if joined.iter().all(|&j| j) {
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    false
}

/// Waits for `child` (bounded; killed past the bound) and returns its output.
pub fn finish(child: Child) -> Output {
    let pid = child.id();
    let start = Instant::now();
    let waiter = std::thread::spawn(move || child.wait_with_output().expect("waits"));
    while !waiter.is_finished() {
        if start.elapsed() > BOUND {
            let _ = rustix::process::kill_process(self::pid(pid), Signal::KILL);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    waiter.join().expect("the waiter")
}

/// Runs `cmd` to the end (bounded, as [`finish`]) as a process group of its own; returns the
/// group (for [`assert_clean`]) and the output.
pub fn run_as_group(mut cmd: Command) -> (u32, Output) {
    let child = cmd.process_group(0).spawn().expect("starts");
    let group = child.id();
    (group, finish(child))
}

/// Checks that the job left nothing: no object, no live process in its group.
pub fn assert_clean(what: &str, run_id: &str, group: u32, out: &str) {
    let left = group_gone(group);
    assert!(
        left.is_empty(),
        "{what}: processes {left:?} left behind\n{out}"
    );
    assert!(
        !Path::new(&object(run_id)).exists(),
        "{what}: {} left behind\n{out}",
        object(run_id)
    );
}

/// Small delays, drawn from the process id, after the sync point of a trial: some trials
/// hit the job before every rank mapped its object, some after.
pub fn delays(n: usize) -> Vec<Duration> {
    let mut seed = std::process::id() as u64 | 1;
    (0..n)
        .map(|i| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // The first trial at once; then 0 to 15 ms.
            Duration::from_micros(if i == 0 { 0 } else { seed % 15_000 })
        })
        .collect()
}

/// `pto-launch allreduce` of `ranks` ranks over `elements` elements as job `run_id`, with
/// the `extra` arguments.
pub fn allreduce_job(ranks: u32, elements: &str, run_id: &str, extra: &[&str]) -> Command {
    let ranks = ranks.to_string();
    let mut args = vec![
        "allreduce",
        "--ranks",
        &ranks,
        "--elements",
        elements,
        "--run-id",
        run_id,
    ];
    args.extend_from_slice(extra);
    launcher(&args)
}

/// Starts `pto-launch allreduce` as its own process group with a job long enough to be
/// interrupted, and returns it once it has mapped the job's object (rank 0 made it).
pub fn start_job(run_id: &str, ranks: u32) -> Child {
    let child = allreduce_job(ranks, "300000", run_id, &["--timeout-s", "20"])
        .process_group(0)
        .spawn()
        .expect("pto-launch starts");
    assert!(
        wait_mapped(&[child.id()], run_id),
        "the launcher never mapped the job's object"
    );
    child
}

/// Three trials at 4 and at 8 ranks: starts a job named after `prefix`, waits one of
/// `delays` after its object appeared, and hands it to `f` (ranks, run id, launcher, delay).
pub fn each_job_at_4_and_8_ranks(prefix: &str, mut f: impl FnMut(u32, &str, Child, Duration)) {
    for ranks in [4u32, 8] {
        for (trial, delay) in delays(3).into_iter().enumerate() {
            let run_id = id(&format!("{prefix}{ranks}-{trial}"));
            let child = start_job(&run_id, ranks);
            std::thread::sleep(delay);
            f(ranks, &run_id, child, delay);
        }
    }
}

/// Starts `ranks` processes as mpirun would (its variables, no pto-launch parent), in one
/// process group led by rank 0.
pub fn start_mpirun_style(job: &str, ranks: u32, elements: &str, timeout_s: &str) -> Vec<Child> {
    let mut children: Vec<Child> = Vec::new();
    for r in 0..ranks {
        let group = children.first().map_or(0, |c| c.id() as i32);
        let child = launcher(&[
            "allreduce",
            "--elements",
            elements,
            "--timeout-s",
            timeout_s,
        ])
        .env("OMPI_COMM_WORLD_RANK", r.to_string())
        .env("OMPI_COMM_WORLD_SIZE", ranks.to_string())
        .env("OMPI_MCA_ess_base_jobid", job)
        .process_group(group)
        .spawn()
        .expect("a rank starts");
        children.push(child);
    }
    children
}

/// The figure after `prefix` in `text`, in milliseconds (`... 12.3 ms ...`).
pub fn millis_after(text: &str, prefix: &str) -> Option<f64> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    rest.split_whitespace().next()?.parse().ok()
}
