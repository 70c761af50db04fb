//! Kills in a job's first milliseconds leave nothing in /dev/shm: `pto-launch allreduce
//! --ranks 4` has rank 0, another rank, the launcher, the launcher then a rank, or its whole
//! process group SIGKILLed at a random point of its first 200 ms, while rank 0 makes the
//! job's object and the ranks join it. After each trial (every process of the job gone) no
//! object of the trial's run id may be left, except after a whole-group kill, where nobody
//! survives to remove it: the next `pto-launch`'s sweep must.
//!
//! `PTO_EARLY_KILL_TRIALS` sets the number of trials (default 100, spread evenly over the five
//! kinds); `PTO_EARLY_KILL_SEED` replays a run's random points (its seed is printed).

mod job_util;

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use job_util::{BOUND, become_subreaper, group_gone, launcher, object, pid, processes, serial};
use rustix::process::Signal;

/// Elements per rank: a 128 MiB object at 4 ranks, whose reservation and joining span the
/// first tens of milliseconds (so the 200 ms of kills land before, during and after them)
/// while a trial stays short on two cores.
const ELEMENTS: &str = "1048576";
/// The kills land in the first this many microseconds of a job.
const WINDOW_US: u64 = 200_000;

/// What a trial kills.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Rank0,
    OtherRank,
    Launcher,
    LauncherThenRank,
    Group,
}

const KINDS: [Kind; 5] = [
    Kind::Rank0,
    Kind::OtherRank,
    Kind::Launcher,
    Kind::LauncherThenRank,
    Kind::Group,
];

/// A small xorshift generator: the trials' random points, replayable from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

/// Per kind: trials, objects left when the job ended, objects left after the next sweep.
#[derive(Default, Clone, Copy)]
struct Tally {
    trials: u32,
    left_at_end: u32,
    left_after_sweep: u32,
    /// Wall time of the trials, from the launch to every process gone.
    took: Duration,
}

/// The rank processes launcher `launcher` has spawned so far, as `(rank, pid)`: its children
/// whose environment names their rank (a child between fork and exec does not yet).
fn ranks_of(launcher: u32) -> Vec<(u32, u32)> {
    processes()
        .into_iter()
        .filter(|&(_, state, ppid, _)| ppid == launcher && !matches!(state, 'Z' | 'X'))
        .filter_map(|(p, ..)| {
            let env = std::fs::read(format!("/proc/{p}/environ")).ok()?;
            let rank = env
                .split(|&b| b == 0)
                .find_map(|v| v.strip_prefix(b"PTO_RANK="))?;
            Some((std::str::from_utf8(rank).ok()?.parse().ok()?, p))
        })
        .collect()
}

/// Waits (bounded) for rank `rank` of `launcher` to exist, and returns its process id; `None`
/// if it never came (the job ended first).
fn wait_for_rank(launcher: &mut Child, rank: u32) -> Option<u32> {
    let start = Instant::now();
    while start.elapsed() < BOUND {
        if let Some(&(_, p)) = ranks_of(launcher.id()).iter().find(|(r, _)| *r == rank) {
            return Some(p);
        }
        if launcher.try_wait().ok().flatten().is_some() {
            return None;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    None
}

fn kill(p: u32) {
    let _ = rustix::process::kill_process(pid(p), Signal::KILL);
}

/// Waits (bounded) for `child` to end, killing it past the bound.
fn reap(child: &mut Child) {
    let start = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if start.elapsed() > BOUND {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Starts `pto-launch allreduce` of 4 ranks as job `run_id`, a process group of its own, its
/// output into `log` (a file, so that no pipe held open by an orphaned rank blocks a reader).
fn start(run_id: &str, log: &Path) -> Child {
    let out = File::create(log).expect("the trial's log");
    let err = out.try_clone().expect("the trial's log");
    launcher(&[
        "allreduce",
        "--ranks",
        "4",
        "--elements",
        ELEMENTS,
        "--run-id",
        run_id,
        "--timeout-s",
        "10",
    ])
    .stdout(Stdio::from(out))
    .stderr(Stdio::from(err))
    .process_group(0)
    .spawn()
    .expect("pto-launch starts")
}

/// Runs one trial of `kind` at `at` (and, for the launcher then a rank, `then` later).
fn trial(kind: Kind, run_id: &str, log: &Path, at: Duration, then: Duration, victim: u32) {
    let mut child = start(run_id, log);
    let started = Instant::now();
    let group = child.id();
    let until = |t: Duration| {
        if let Some(rest) = t.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
    };
    match kind {
        Kind::Rank0 | Kind::OtherRank => {
            let rank = if kind == Kind::Rank0 { 0 } else { victim };
            until(at);
            if let Some(p) = wait_for_rank(&mut child, rank) {
                kill(p);
            }
        }
        Kind::Launcher => {
            until(at);
            kill(group);
        }
        Kind::LauncherThenRank => {
            until(at);
            // The ranks spawned so far, known before their launcher goes (then they are
            // ours, and still say their rank).
            let ranks = ranks_of(group);
            kill(group);
            until(at + then);
            if let Some(&(_, p)) = ranks.iter().find(|(r, _)| *r == victim) {
                kill(p);
            } else if let Some(&(_, p)) = ranks.first() {
                kill(p);
            }
        }
        Kind::Group => {
            until(at);
            let _ = rustix::process::kill_process_group(pid(group), Signal::KILL);
        }
    }
    reap(&mut child);
    let left = group_gone(group);
    assert!(
        left.is_empty(),
        "{kind:?} at {at:?}: processes {left:?} outlived the job ({BOUND:?} later)\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

/// Runs a one-rank job whose launcher sweeps /dev/shm first; returns what it printed.
fn sweep_by_next_launch(run_id: &str, log: &Path) -> String {
    let out = File::create(log).expect("the sweep's log");
    let err = out.try_clone().expect("the sweep's log");
    let mut child = launcher(&[
        "allreduce",
        "--ranks",
        "1",
        "--elements",
        "64",
        "--run-id",
        run_id,
    ])
    .stdout(Stdio::from(out))
    .stderr(Stdio::from(err))
    .spawn()
    .expect("pto-launch starts");
    reap(&mut child);
    std::fs::read_to_string(log).unwrap_or_default()
}

#[test]
fn early_kills_of_ranks_and_launcher_leave_nothing_in_dev_shm() {
    let _one = serial();
    become_subreaper();
    let trials: u32 = std::env::var("PTO_EARLY_KILL_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let seed: u64 = std::env::var("PTO_EARLY_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
        | 1;
    println!("PTO_EARLY_KILL_SEED={seed}");
    let mut rng = Rng(seed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let log = dir.join(format!("early-kill-{}.log", std::process::id()));
    let mut tally = [Tally::default(); KINDS.len()];
    let mut leftovers = Vec::new();
    let start = Instant::now();
    for i in 0..trials {
        let k = i as usize % KINDS.len();
        let kind = KINDS[k];
        let run_id = format!("ek-{}-{i}", std::process::id());
        let at = Duration::from_micros(rng.next(WINDOW_US));
        let then = Duration::from_micros(rng.next(5_000));
        let victim = 1 + rng.next(3) as u32;
        let began = Instant::now();
        trial(kind, &run_id, &log, at, then, victim);
        let t = &mut tally[k];
        t.trials += 1;
        t.took += began.elapsed();
        let path = object(&run_id);
        if Path::new(&path).exists() {
            t.left_at_end += 1;
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            println!("{kind:?} at {at:?}: {path} left when the job ended\n{said}");
            let sweeper = format!("{run_id}-next");
            let swept = sweep_by_next_launch(&sweeper, &log);
            if Path::new(&path).exists() {
                t.left_after_sweep += 1;
                leftovers.push(format!("{kind:?} at {at:?}: {path}\n{swept}"));
                let _ = std::fs::remove_file(&path);
            } else {
                assert!(
                    swept.contains(&format!("pto-{run_id}")),
                    "the sweep says which object it removed: {swept}"
                );
            }
        }
    }
    let _ = std::fs::remove_file(&log);
    println!(
        "{trials} early kills in {:.1} s (kind: trials, objects left at the job's end, after \
         the next launch's sweep):",
        start.elapsed().as_secs_f64()
    );
    for (kind, t) in KINDS.iter().zip(&tally) {
        println!(
            "  {kind:?}: {} trials, {} left at the end, {} after the sweep ({:.0} ms a trial)",
            t.trials,
            t.left_at_end,
            t.left_after_sweep,
            t.took.as_secs_f64() * 1e3 / t.trials.max(1) as f64
        );
    }
    assert!(
        leftovers.is_empty(),
        "objects outlived their job and the next launch's sweep:\n{}",
        leftovers.join("\n")
    );
    for (kind, t) in KINDS.iter().zip(&tally) {
        if *kind != Kind::Group {
            assert_eq!(
                t.left_at_end, 0,
                "{kind:?}: someone survives such a kill and must remove the object"
            );
        }
    }
}
