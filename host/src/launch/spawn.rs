//! Spawning ranks as processes of this binary, watching them, and taking the job down
//! cleanly when one dies: its peers are told at once (the job's barrier is poisoned in its
//! name), every wait is bounded, and no shared object of the job outlives it.

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use pto_runtime_core::PoisonReason;

use crate::comm::ShmComm;
use crate::transport::secret::{JobSecret, SECRET_ENV};

/// What to spawn.
#[derive(Clone, Debug)]
pub struct SpawnPlan {
    /// Ranks (processes).
    pub ranks: u32,
    /// Arguments every rank process gets (the subcommand and its options).
    pub args: Vec<String>,
    /// Names the job's shared objects; passed to the ranks as `PTO_RUN_ID`.
    pub run_id: String,
    /// How long the job may take before the remaining ranks are killed.
    pub deadline: Duration,
    /// Fault injection: kill this rank (SIGKILL) after this long.
    pub kill: Option<(u32, Duration)>,
    /// The job secret, passed to every rank in its environment ([`SECRET_ENV`]), never on
    /// its command line.
    pub secret: Option<JobSecret>,
    /// After a rank failed, how long the others get to stop on their own (they see the
    /// poisoned barrier within milliseconds; a rank still waiting for the job's object to
    /// appear cannot) before the launcher stops them.
    pub grace: Duration,
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
    /// Still running `grace` after another rank failed (then killed).
    Stopped,
}

/// One rank's end and when it came.
#[derive(Clone, Copy, Debug)]
pub struct RankExit {
    /// The rank.
    pub rank: u32,
    /// How it ended.
    pub end: RankEnd,
    /// Time from the launch.
    pub after: Duration,
}

/// The command that starts `rank` of `plan` from `exe`: the plan's arguments, and the rank,
/// job and secret in the environment.
pub fn rank_command(exe: &std::path::Path, plan: &SpawnPlan, rank: u32) -> Command {
    let mut c = Command::new(exe);
    c.args(&plan.args)
        .env("PTO_RANK", rank.to_string())
        .env("PTO_RANKS", plan.ranks.to_string())
        .env("PTO_RUN_ID", &plan.run_id);
    if let Some(s) = &plan.secret {
        c.env(SECRET_ENV, s.to_hex());
    }
    c
}

/// Spawns the ranks and waits for all of them (bounded by `plan.deadline`). The first rank
/// to fail poisons the job's barrier in its name, so the others stop within their barrier's
/// poll interval instead of their timeout. The job's shared object is removed at the end.
pub fn spawn_ranks(plan: &SpawnPlan) -> Result<Vec<RankExit>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let start = Instant::now();
    let mut children: Vec<(u32, Option<Child>)> = Vec::new();
    for rank in 0..plan.ranks {
        let child = rank_command(&exe, plan, rank).spawn();
        match child {
            Ok(c) => children.push((rank, Some(c))),
            Err(e) => {
                for (_, c) in children.iter_mut() {
                    if let Some(c) = c {
                        let _ = c.kill();
                        let _ = c.wait();
                    }
                }
                let _ = ShmComm::remove_job(&plan.run_id);
                return Err(format!("cannot start rank {rank}: {e}"));
            }
        }
    }
    let mut exits = Vec::new();
    let mut poisoned = false;
    let mut killed = false;
    let mut failed_at: Option<Duration> = None;
    while exits.len() < plan.ranks as usize {
        let now = start.elapsed();
        if let Some((victim, after)) = plan.kill
            && !killed
            && now >= after
        {
            killed = true;
            if let Some((_, Some(c))) = children.iter_mut().find(|(r, _)| *r == victim) {
                let _ = c.kill();
            }
        }
        for (rank, slot) in children.iter_mut() {
            let Some(child) = slot else { continue };
            let end = match child.try_wait() {
                Ok(Some(status)) => match (status.code(), status.signal()) {
                    (Some(0), _) => RankEnd::Passed,
                    (Some(code), _) => RankEnd::Failed(code),
                    (None, Some(sig)) => RankEnd::Killed(sig),
                    (None, None) => RankEnd::Failed(-1),
                },
                Ok(None) if now > plan.deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    RankEnd::TimedOut
                }
                Ok(None) if failed_at.is_some_and(|t| now > t + plan.grace) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    RankEnd::Stopped
                }
                Ok(None) => continue,
                Err(_) => RankEnd::Failed(-1),
            };
            *slot = None;
            if end != RankEnd::Passed && !poisoned {
                poisoned = true;
                failed_at = Some(now);
                let _ = ShmComm::poison_job(&plan.run_id, *rank, PoisonReason::Died);
            }
            exits.push(RankExit {
                rank: *rank,
                end,
                after: now,
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Ranks that died never left: remove what they left behind.
    ShmComm::remove_job(&plan.run_id).map_err(|e| e.to_string())?;
    exits.sort_by_key(|e| e.rank);
    Ok(exits)
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
            secret: Some(secret.clone()),
            grace: Duration::from_secs(1),
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
