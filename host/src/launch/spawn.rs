//! Spawning ranks as processes of this binary, watching them, and taking the job down
//! cleanly when one dies, stops responding or the launcher is told to stop: its peers are
//! told at once (the job's barrier is poisoned in its name), every wait is bounded, no rank
//! outlives the launcher (each dies with it, SIGKILL included) and no shared object of the job
//! outlives the job.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pto_runtime_core::PoisonReason;

use crate::comm::{HUNG_AFTER, JobWatch, sweep_stale};
use crate::signals;
use crate::transport::secret::{JobSecret, SECRET_ENV};

use super::LaunchError;

/// The variable that tells a spawned rank which process launched it (it dies with it).
pub const LAUNCHER_PID: &str = "PTO_LAUNCHER_PID";
/// How often the launcher looks at its ranks.
const POLL: Duration = Duration::from_millis(1);

/// What to spawn.
#[derive(Clone, Debug)]
pub struct SpawnPlan {
    /// Ranks (processes).
    pub ranks: u32,
    /// Arguments every rank process gets (the subcommand and its options).
    pub args: Vec<String>,
    /// Names the job's shared objects (a valid run id, see
    /// [`crate::comm::sanitize_run_id`]); passed to the ranks as `PTO_RUN_ID`.
    pub run_id: String,
    /// How long the job may take before the remaining ranks are killed.
    pub deadline: Duration,
    /// Fault injection: kill this rank (SIGKILL) after this long.
    pub kill: Option<(u32, Duration)>,
    /// Fault injection: stop this rank (SIGSTOP) this long after the job's object appeared.
    pub stop: Option<(u32, Duration)>,
    /// The job secret, passed to every rank in its environment ([`SECRET_ENV`]), never on
    /// its command line.
    pub secret: Option<JobSecret>,
    /// After a rank failed, how long the others get to stop on their own (they see the
    /// poisoned barrier within milliseconds) before the launcher stops them.
    pub grace: Duration,
    /// Take what each rank prints on its standard output (its JSON envelope) into its
    /// [`RankExit::stdout`], instead of letting it through to the launcher's.
    pub capture_stdout: bool,
}

/// How a rank ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RankEnd {
    /// Exit code 0.
    Passed,
    /// Another exit code.
    Failed(i32),
    /// Killed by a signal.
    Killed(i32),
    /// Still running at the deadline (then killed).
    TimedOut,
    /// Still running `grace` after another rank failed (then stopped).
    Stopped,
    /// Waiting to join a job that was given up and can no longer form: its object's name is
    /// gone, or its creator died before making it (then stopped at once).
    NotJoined,
    /// Stopped making progress (hung, or stopped by a signal: its heartbeat stalled for
    /// [`HUNG_AFTER`]), then killed by the launcher.
    Unresponsive,
}

/// One rank's end and when it came.
#[derive(Clone, Debug)]
pub struct RankExit {
    /// The rank.
    pub rank: u32,
    /// How it ended.
    pub end: RankEnd,
    /// Time from the launch.
    pub after: Duration,
    /// Time from the job's poisoning to this rank's end, for ranks that ended after it.
    pub after_poison: Option<Duration>,
    /// What it printed on its standard output, when the plan captured it.
    pub stdout: Option<String>,
}

/// How the job ended.
#[derive(Clone, Debug)]
pub struct JobEnd {
    /// Every rank's end, in rank order.
    pub exits: Vec<RankExit>,
    /// The rank the job was given up for, and why.
    pub culprit: Option<(u32, PoisonReason)>,
    /// For a stopped rank (`--stop-rank`): the time from stopping it to its being named.
    pub named_after: Option<Duration>,
    /// The terminating signal the launcher received (it stopped the ranks), if any.
    pub interrupted: Option<i32>,
}

/// The command that starts `rank` of `plan` from `exe`: the plan's arguments, and the rank,
/// job, launcher and secret in the environment.
pub fn rank_command(exe: &std::path::Path, plan: &SpawnPlan, rank: u32) -> Command {
    let mut c = Command::new(exe);
    c.args(&plan.args)
        .env("PTO_RANK", rank.to_string())
        .env("PTO_RANKS", plan.ranks.to_string())
        .env("PTO_RUN_ID", &plan.run_id)
        .env(LAUNCHER_PID, std::process::id().to_string());
    if let Some(s) = &plan.secret {
        c.env(SECRET_ENV, s.to_hex());
    }
    c
}

/// One rank process while it runs.
struct Running {
    rank: u32,
    pid: u32,
    child: Option<Child>,
    /// Since when `/proc` says it is stopped (SIGSTOP), while it does.
    stopped_since: Option<Instant>,
}

/// Spawns the ranks and waits for all of them (bounded by `plan.deadline`). The first rank
/// to fail poisons the job's barrier in its name, so the others stop within milliseconds
/// instead of at their timeout. SIGINT, SIGTERM and SIGHUP to the launcher are passed on to
/// the ranks. The job's shared object is removed at the end if no rank removed it.
pub fn spawn_ranks(plan: &SpawnPlan) -> Result<JobEnd, LaunchError> {
    let exe = std::env::current_exe().map_err(LaunchError::NoBinary)?;
    signals::record_signals().map_err(LaunchError::Signals)?;
    // Objects of earlier jobs killed whole (launcher and ranks at once) go first.
    sweep_stale();
    let start = Instant::now();
    let mut ranks: Vec<Running> = Vec::new();
    for rank in 0..plan.ranks {
        let mut command = rank_command(&exe, plan, rank);
        if plan.capture_stdout {
            command.stdout(Stdio::piped());
        }
        let child = command.spawn();
        match child {
            Ok(c) => ranks.push(Running {
                rank,
                pid: c.id(),
                child: Some(c),
                stopped_since: None,
            }),
            Err(e) => {
                for r in ranks.iter_mut() {
                    if let Some(c) = r.child.as_mut() {
                        let _ = c.kill();
                        let _ = c.wait();
                    }
                }
                // Rank 0 may have made the job's object before it was killed.
                if let Some(r) = ranks.first() {
                    let _ = JobWatch::remove_leftover(&plan.run_id, r.pid);
                }
                return Err(LaunchError::Start { rank, source: e });
            }
        }
    }
    let creator = ranks.first().map_or(0, |r| r.pid);
    let mut job = Job {
        plan,
        watch: None,
        watched_at: None,
        creator,
        culprit: None,
        poisoned_at: None,
        failed_at: None,
        interrupted: None,
        stopped_at: None,
        named_after: None,
        last_check: start,
    };
    let mut exits = Vec::new();
    let mut killed = false;
    while exits.len() < plan.ranks as usize {
        let now = start.elapsed();
        job.look_at_the_job();
        if let Some(sig) = signals::take_pending() {
            // Ctrl-C reaches the ranks too; a signal to the launcher alone is passed on.
            job.interrupted = Some(sig);
            job.failed_at.get_or_insert(now);
            for r in ranks.iter().filter(|r| r.child.is_some()) {
                signals::send(r.pid, sig);
            }
        }
        if let Some((victim, after)) = plan.kill
            && !killed
            && now >= after
        {
            killed = true;
            if let Some(r) = ranks.iter().find(|r| r.rank == victim && r.child.is_some()) {
                signals::send(r.pid, libc::SIGKILL);
            }
        }
        job.stop_for_fault_injection(&ranks);
        let creator_gone = ranks.first().is_some_and(|r| r.child.is_none());
        for r in ranks.iter_mut() {
            let Some(end) = job.end_of(r, now, creator_gone) else {
                continue;
            };
            // The rank has exited: its pipe holds what it printed, and is closed.
            let stdout = r
                .child
                .take()
                .and_then(|mut c| c.stdout.take())
                .map(|mut out| {
                    let mut text = String::new();
                    let _ = out.read_to_string(&mut text);
                    text
                });
            if end != RankEnd::Passed && job.culprit.is_none() {
                let reason = match end {
                    RankEnd::Killed(_) => PoisonReason::Died,
                    RankEnd::Unresponsive => PoisonReason::Unresponsive,
                    RankEnd::TimedOut => PoisonReason::TimedOut,
                    _ => PoisonReason::Aborted,
                };
                job.poison(r.rank, reason);
            }
            if end != RankEnd::Passed {
                job.failed_at.get_or_insert(now);
            }
            exits.push(RankExit {
                rank: r.rank,
                end,
                after: start.elapsed(),
                after_poison: job.poisoned_at.map(|t| t.elapsed()),
                stdout,
            });
        }
        std::thread::sleep(POLL);
    }
    job.remove_name()?;
    exits.sort_by_key(|e| e.rank);
    Ok(JobEnd {
        exits,
        culprit: job.culprit,
        named_after: job.named_after,
        interrupted: job.interrupted,
    })
}

/// The launcher's state of the job while its ranks run.
struct Job<'a> {
    plan: &'a SpawnPlan,
    /// The job's object, once rank 0 made it.
    watch: Option<JobWatch>,
    watched_at: Option<Instant>,
    /// Rank 0's process id: only an object it made is this job's.
    creator: u32,
    /// The rank the job was given up for, once it was.
    culprit: Option<(u32, PoisonReason)>,
    poisoned_at: Option<Instant>,
    /// When the first rank failed (the others' grace starts).
    failed_at: Option<Duration>,
    interrupted: Option<i32>,
    stopped_at: Option<Instant>,
    named_after: Option<Duration>,
    last_check: Instant,
}

impl Job<'_> {
    /// Maps the job's object once it exists (delivering a poison decided before it did),
    /// learns of a poison a rank decided, and looks at the ranks' heartbeats.
    fn look_at_the_job(&mut self) {
        if self.watch.is_none()
            && let Ok(Some(w)) = JobWatch::open(&self.plan.run_id, self.plan.ranks, self.creator)
        {
            if let Some((rank, reason)) = self.culprit {
                w.poison(rank, reason);
            }
            self.watch = Some(w);
            self.watched_at = Some(Instant::now());
        }
        let Some(w) = self.watch.as_mut() else { return };
        if self.culprit.is_none() {
            let found = if self.last_check.elapsed() >= Duration::from_millis(10) {
                self.last_check = Instant::now();
                w.check()
            } else {
                w.poisoned()
            };
            if let Some(c) = found {
                self.culprit = Some(c);
                self.poisoned_at = Some(Instant::now());
                self.note_named(c);
            }
        }
    }

    /// Records when a stopped rank (fault injection) was named.
    fn note_named(&mut self, (rank, reason): (u32, PoisonReason)) {
        if let (Some(at), Some((victim, _))) = (self.stopped_at, self.plan.stop)
            && rank == victim
            && reason == PoisonReason::Unresponsive
        {
            self.named_after = Some(at.elapsed());
        }
    }

    /// Gives the job up in `rank`'s name (now if its object is mapped, else once it is).
    fn poison(&mut self, rank: u32, reason: PoisonReason) {
        self.culprit = Some((rank, reason));
        self.poisoned_at = Some(Instant::now());
        if let Some(w) = &self.watch {
            w.poison(rank, reason);
            // The first poison wins: a rank may have named another culprit a moment ago.
            if let Some(c) = w.poisoned() {
                self.culprit = Some(c);
            }
        }
        if let Some(c) = self.culprit {
            self.note_named(c);
        }
    }

    fn stop_for_fault_injection(&mut self, ranks: &[Running]) {
        let (Some((victim, after)), Some(watched)) = (self.plan.stop, self.watched_at) else {
            return;
        };
        if self.stopped_at.is_none() && watched.elapsed() >= after {
            if let Some(r) = ranks.iter().find(|r| r.rank == victim && r.child.is_some()) {
                signals::send(r.pid, libc::SIGSTOP);
            }
            self.stopped_at = Some(Instant::now());
        }
    }

    /// How rank `r` ended, if it did (or is to be ended now).
    fn end_of(&mut self, r: &mut Running, now: Duration, creator_gone: bool) -> Option<RankEnd> {
        let child = r.child.as_mut()?;
        let kill = |child: &mut Child, end: RankEnd| {
            let _ = child.kill();
            let _ = child.wait();
            Some(end)
        };
        match child.try_wait() {
            Ok(Some(status)) => Some(match (status.code(), status.signal()) {
                (Some(0), _) => RankEnd::Passed,
                (Some(code), _) => RankEnd::Failed(code),
                (None, Some(sig)) => RankEnd::Killed(sig),
                (None, None) => RankEnd::Failed(-1),
            }),
            Err(_) => Some(RankEnd::Failed(-1)),
            Ok(None) if now > self.plan.deadline => kill(child, RankEnd::TimedOut),
            Ok(None) if self.culprit == Some((r.rank, PoisonReason::Unresponsive)) => {
                kill(child, RankEnd::Unresponsive)
            }
            Ok(None) if self.failed_at.is_some_and(|t| now > t + self.plan.grace) => {
                kill(child, RankEnd::Stopped)
            }
            // A rank failed before rank 0 made the job's object, and rank 0 is gone: the
            // others wait for an object that will never come. Stop them now.
            Ok(None) if self.failed_at.is_some() && creator_gone && self.watch.is_none() => {
                kill(child, RankEnd::NotJoined)
            }
            // The job was given up while it formed and its name is gone: a rank that has not
            // opened the object yet waits for one that will never come (the cause of 8-rank
            // peers that never stopped). Stop it now.
            Ok(None)
                if self.culprit.is_some()
                    && self
                        .watch
                        .as_ref()
                        .is_some_and(|w| w.name_removed() && !w.joined(r.rank)) =>
            {
                kill(child, RankEnd::NotJoined)
            }
            Ok(None) => {
                // A rank stopped by a signal before it joined has no heartbeat to stall:
                // `/proc` says it is stopped.
                if matches!(signals::process_state(r.pid), Some('T' | 't')) {
                    let since = *r.stopped_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= HUNG_AFTER && self.culprit.is_none() {
                        self.poison(r.rank, PoisonReason::Unresponsive);
                    }
                } else {
                    r.stopped_since = None;
                }
                None
            }
        }
    }

    /// Removes the job's name if no rank did, once every rank ended: found by the name the
    /// run id gives, whether the launcher ever mapped the object or not (rank 0 may have made
    /// it and died at once), and removed if rank 0 made it.
    fn remove_name(&self) -> Result<(), LaunchError> {
        JobWatch::remove_leftover(&self.plan.run_id, self.creator)
            .map(drop)
            .map_err(LaunchError::Cleanup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_goes_in_a_rank_s_environment_never_on_its_command_line() {
        let secret = JobSecret::generate().unwrap();
        let plan = SpawnPlan {
            ranks: 2,
            args: vec![
                "allreduce".into(),
                "--rendezvous".into(),
                "tcp://h:1".into(),
            ],
            run_id: "job".into(),
            deadline: Duration::from_secs(1),
            kill: None,
            stop: None,
            secret: Some(secret.clone()),
            grace: Duration::from_secs(1),
            capture_stdout: false,
        };
        let c = rank_command(std::path::Path::new("/bin/true"), &plan, 1);
        let hex = secret.to_hex();
        assert!(c.get_args().all(|a| !a.to_string_lossy().contains(&hex)));
        let env: Vec<_> = c.get_envs().collect();
        assert!(
            env.iter()
                .any(|(k, v)| *k == SECRET_ENV && v.is_some_and(|v| v == hex.as_str())),
            "{env:?}"
        );
    }
}
