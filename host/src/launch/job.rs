//! `pto-launch allreduce` as the launcher: spawns the ranks (with a job secret and a free
//! rendezvous port when forming the job over TCP), watches them through [`spawn_ranks`], and
//! reports how each ended.

use std::fmt;
use std::time::Duration;

use pto_runtime_core::PoisonReason;

use crate::comm::{HUNG_AFTER, poison_reason, sanitize_run_id};
use crate::human;
use crate::transport::secret::JobSecret;

use super::{JobEnd, JobOptions, LaunchError, RankEnd, SpawnPlan, parse_rendezvous, spawn_ranks};

/// Ranks spawned when `--ranks` is not given.
pub const DEFAULT_RANKS: u32 = 2;

/// How one rank of a spawned job ended.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RankOutcome {
    /// The rank.
    pub rank: u32,
    /// `passed`, `failed`, `killed`, `timed_out`, `stopped`, `not_joined` or `unresponsive`.
    pub end: &'static str,
    /// The exit code of a rank that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that killed a rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// From the launch to its end, ms.
    pub after_ms: f64,
    /// From the job's poisoning to its end, ms, for a rank that ended after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_poison_ms: Option<f64>,
    /// What the rank checked (the `results` of its own envelope), with `--json`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<serde_json::Value>,
    #[serde(skip)]
    how: RankEnd,
}

/// The rank a job was given up for.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Culprit {
    /// The rank.
    pub rank: u32,
    /// `died`, `timed_out`, `aborted`, `unresponsive` or `never_joined`.
    pub reason: &'static str,
    #[serde(skip)]
    why: PoisonReason,
}

/// When a rank stopped by fault injection was named unresponsive.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Named {
    /// The stopped rank.
    pub rank: u32,
    /// From stopping it to its being named, ms.
    pub after_ms: f64,
}

/// How a spawned job ended.
#[derive(Clone, Debug, serde::Serialize)]
pub struct JobReport {
    /// Ranks spawned.
    pub ranks: u32,
    /// Whether every rank passed.
    pub passed: bool,
    /// Every rank's end, in rank order.
    pub exits: Vec<RankOutcome>,
    /// The rank the job was given up for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub culprit: Option<Culprit>,
    /// The rank `--stop-rank` stopped, once the launcher named it unresponsive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_rank_named: Option<Named>,
    /// What the job was, as its verdict names it ("allreduce over 2 ranks").
    #[serde(skip)]
    pub what: String,
    /// The terminating signal the launcher received (it stopped every rank).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<i32>,
}

impl JobReport {
    /// The ranks that did not pass.
    pub fn failed(&self) -> Vec<u32> {
        self.exits
            .iter()
            .filter(|e| e.how != RankEnd::Passed)
            .map(|e| e.rank)
            .collect()
    }
}

/// An allreduce job, as its verdict names it.
fn allreduce_over(ranks: u32) -> String {
    format!("allreduce over {}", human::count(ranks.into(), "rank"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn outcome(e: &super::RankExit) -> RankOutcome {
    let (end, exit_code, signal) = match e.end {
        RankEnd::Passed => ("passed", None, None),
        RankEnd::Failed(code) => ("failed", Some(code), None),
        RankEnd::Killed(sig) => ("killed", None, Some(sig)),
        RankEnd::TimedOut => ("timed_out", None, None),
        RankEnd::Stopped => ("stopped", None, None),
        RankEnd::NotJoined => ("not_joined", None, None),
        RankEnd::Unresponsive => ("unresponsive", None, None),
    };
    // A rank's envelope: its `results`, or nothing if it printed none (it failed).
    let checked = e
        .stdout
        .as_deref()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(s.trim()).ok())
        .map(|mut v| v["results"].take())
        .filter(|v| !v.is_null());
    RankOutcome {
        rank: e.rank,
        end,
        exit_code,
        signal,
        after_ms: ms(e.after),
        after_poison_ms: e.after_poison.map(ms),
        checked,
        how: e.end,
    }
}

fn report(ranks: u32, stopped: Option<u32>, job: JobEnd, what: &str) -> JobReport {
    let exits: Vec<RankOutcome> = job.exits.iter().map(outcome).collect();
    JobReport {
        ranks,
        passed: exits.iter().all(|e| e.how == RankEnd::Passed),
        exits,
        culprit: job.culprit.map(|(rank, why)| Culprit {
            rank,
            reason: match why {
                PoisonReason::Died => "died",
                PoisonReason::TimedOut => "timed_out",
                PoisonReason::Aborted => "aborted",
                PoisonReason::Unresponsive => "unresponsive",
                PoisonReason::NeverJoined => "never_joined",
            },
            why,
        }),
        stopped_rank_named: job.named_after.zip(stopped).map(|(t, rank)| Named {
            rank,
            after_ms: ms(t),
        }),
        interrupted_by: job.interrupted,
        what: what.to_owned(),
    }
}

/// Spawns the ranks of the job `opts` describes as processes of this binary (each runs
/// `allreduce` as its rank), watches them until every one ended (bounded by the timeout), and
/// reports how each did. Rank 0 draws the job's progress bar, if its standard error (the
/// launcher's) is a terminal.
pub fn spawn_job(opts: &JobOptions) -> Result<JobReport, LaunchError> {
    let ranks = opts.ranks.unwrap_or(DEFAULT_RANKS);
    for (flag, fault) in [("--kill-rank", opts.kill), ("--stop-rank", opts.stop)] {
        if let Some((rank, _)) = fault
            && rank >= ranks
        {
            return Err(LaunchError::NoSuchRank { flag, rank, ranks });
        }
    }
    let run_id = job_run_id(opts.run_id.as_deref())?;
    let mut args = vec![
        "allreduce".into(),
        "--elements".into(),
        opts.elements.to_string(),
        "--timeout-s".into(),
        opts.timeout_s.to_string(),
    ];
    if opts.json {
        args.push("--json".into());
    }
    let mut secret = None;
    if let Some(r) = &opts.rendezvous {
        // The ranks' secret: the user's, else a fresh one; it reaches them in their
        // environment only.
        secret = Some(match &opts.secret_file {
            Some(p) => JobSecret::from_file(p)?,
            None => match JobSecret::from_env()? {
                Some(s) => s,
                None => JobSecret::generate()?,
            },
        });
        if opts.require_secret {
            args.push("--require-secret".into());
        }
        let at = with_free_port(parse_rendezvous(r)?)?;
        args.extend(["--rendezvous".into(), format!("tcp://{at}")]);
    }
    let plan = SpawnPlan {
        ranks,
        args,
        run_id,
        deadline: opts.timeout() + Duration::from_secs(5),
        kill: opts.kill,
        stop: opts.stop,
        secret,
        grace: opts.grace,
        capture_stdout: opts.json,
    };
    let job = spawn_ranks(&plan)?;
    let what = allreduce_over(ranks);
    Ok(report(ranks, opts.stop.map(|(r, _)| r), job, &what))
}

/// The run id the ranks get: the user's, else made up from this process and the time;
/// sanitised, so the launcher and the ranks mean one object.
fn job_run_id(user: Option<&str>) -> Result<String, LaunchError> {
    let made_up = || {
        format!(
            "job{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis())
        )
    };
    sanitize_run_id(&user.map_or_else(made_up, str::to_owned)).map_err(LaunchError::RunId)
}

/// `at`, with a free port picked for rank 0 to listen on if its port is 0.
fn with_free_port(mut at: std::net::SocketAddr) -> Result<std::net::SocketAddr, LaunchError> {
    if at.port() == 0 {
        let probe = std::net::TcpListener::bind(at)
            .and_then(|l| l.local_addr())
            .map_err(|source| LaunchError::NoFreePort { at, source })?;
        at.set_port(probe.port());
    }
    Ok(at)
}

/// A job whose ranks each run one command of this binary (`pto-launch run ...`, say): what
/// [`spawn_command_job`] spawns.
#[derive(Clone, Debug)]
pub struct CommandJob {
    /// Ranks to spawn.
    pub ranks: u32,
    /// Each rank's arguments: the subcommand and its flags.
    pub args: Vec<String>,
    /// Bound of the whole job: a rank still running past it is killed.
    pub timeout: Duration,
    /// After a rank fails, how long the others get to stop on their own.
    pub grace: Duration,
    /// Take each rank's standard output (its JSON envelope) into its [`RankOutcome`].
    pub json: bool,
    /// Form the job over TCP: the ranks get `--rendezvous tcp://127.0.0.1:PORT` (a free
    /// port) and a fresh job secret in their environment.
    pub rendezvous: bool,
    /// What the job is, as its verdict names it ("ran liborch.so on 2 ranks of the
    /// simulator": every rank passed).
    pub what: String,
}

/// Spawns the ranks of `job` as processes of this binary, each with `PTO_RANK`,
/// `PTO_RANKS` and a fresh `PTO_RUN_ID` in its environment, watches them (a rank that
/// fails takes the job down after the grace; the job's shared object, if the ranks make
/// one, is watched and removed) and reports how each ended.
pub fn spawn_command_job(job: &CommandJob) -> Result<JobReport, LaunchError> {
    let run_id = job_run_id(None)?;
    let mut args = job.args.clone();
    let mut secret = None;
    if job.rendezvous {
        secret = Some(match JobSecret::from_env()? {
            Some(s) => s,
            None => JobSecret::generate()?,
        });
        let at = with_free_port(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))?;
        args.extend(["--rendezvous".into(), format!("tcp://{at}")]);
    }
    let plan = SpawnPlan {
        ranks: job.ranks,
        args,
        run_id,
        deadline: job.timeout,
        kill: None,
        stop: None,
        secret,
        grace: job.grace,
        capture_stdout: job.json,
    };
    let end = spawn_ranks(&plan)?;
    Ok(report(job.ranks, None, end, &job.what))
}

impl fmt::Display for RankOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match self.how {
            RankEnd::Passed => "passed".to_string(),
            RankEnd::Failed(code) => format!("failed (exit code {code})"),
            RankEnd::Killed(sig) => format!("was killed by signal {sig}"),
            RankEnd::TimedOut => "was still running at the deadline and was killed".to_string(),
            RankEnd::Stopped => {
                "was stopped by the launcher: another rank had failed and it had not".to_string()
            }
            RankEnd::NotJoined => "was stopped by the launcher: the job was given up before \
                                   this rank could join it"
                .to_string(),
            RankEnd::Unresponsive => format!(
                "stopped responding (hung or stopped: no progress for {} ms) and was killed by \
                 the launcher",
                HUNG_AFTER.as_millis()
            ),
        };
        let after = human::sig3(self.after_ms);
        write!(f, "rank {}: {how} after {after} ms", self.rank)?;
        if let Some(t) = self.after_poison_ms {
            write!(f, ", {} ms after the poison", human::sig3(t))?;
        }
        Ok(())
    }
}

impl fmt::Display for JobReport {
    /// A line per rank, then why the job was given up; the verdict only when every rank
    /// passed (a failed job's is the launcher's error).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut lines: Vec<String> = self.exits.iter().map(|e| e.to_string()).collect();
        if let Some(c) = self.culprit {
            lines.push(format!(
                "the job was given up because rank {} {}",
                c.rank,
                poison_reason(c.why)
            ));
        }
        if let Some(n) = self.stopped_rank_named {
            lines.push(format!(
                "rank {} was named unresponsive {} ms after it was stopped",
                n.rank,
                human::sig3(n.after_ms)
            ));
        }
        if self.passed {
            lines.push(format!("{}: every rank passed", self.what));
        }
        write!(f, "{}", lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::RankExit;

    fn exit(rank: u32, end: RankEnd, after_ms: u64, stdout: Option<&str>) -> RankExit {
        RankExit {
            rank,
            end,
            after: Duration::from_millis(after_ms),
            after_poison: (end != RankEnd::Passed).then(|| Duration::from_micros(27_540)),
            stdout: stdout.map(str::to_string),
        }
    }

    #[test]
    fn a_failed_job_reports_each_rank_the_culprit_and_no_verdict() {
        let end = JobEnd {
            exits: vec![
                exit(0, RankEnd::Failed(1), 44, Some("")),
                exit(1, RankEnd::Killed(9), 16, None),
                exit(2, RankEnd::Passed, 12, Some(r#"{"results":{"rank":2}}"#)),
            ],
            culprit: Some((1, PoisonReason::Died)),
            named_after: None,
            interrupted: None,
        };
        let r = report(3, None, end, &allreduce_over(3));
        assert!(!r.passed);
        assert_eq!(r.failed(), [0, 1]);
        assert_eq!(
            r.to_string(),
            "rank 0: failed (exit code 1) after 44.0 ms, 27.5 ms after the poison\n\
             rank 1: was killed by signal 9 after 16.0 ms, 27.5 ms after the poison\n\
             rank 2: passed after 12.0 ms\n\
             the job was given up because rank 1 died"
        );
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["exits"][1]["end"], "killed");
        assert_eq!(v["exits"][1]["signal"], 9);
        assert_eq!(v["exits"][0]["exit_code"], 1);
        assert!(
            v["exits"][0].get("checked").is_none(),
            "no envelope, no results"
        );
        assert_eq!(
            v["exits"][2]["checked"]["rank"], 2,
            "the rank's own results"
        );
        assert_eq!(v["culprit"]["reason"], "died");
    }

    #[test]
    fn a_passed_job_says_so_in_words() {
        let end = JobEnd {
            exits: vec![exit(0, RankEnd::Passed, 5, None)],
            culprit: None,
            named_after: None,
            interrupted: None,
        };
        let r = report(1, None, end, &allreduce_over(1));
        assert_eq!(r.failed(), Vec::<u32>::new());
        assert!(
            r.to_string()
                .ends_with("allreduce over 1 rank: every rank passed"),
            "{r}"
        );
    }
}
