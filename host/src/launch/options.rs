//! What an allreduce job is asked to do: the same options for the launcher and for each rank.

use std::path::PathBuf;
use std::time::Duration;

/// The options of `pto-launch allreduce`, as the launcher and every rank take them.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct JobOptions {
    /// Ranks to spawn; under another launcher, its world size (a different count is an error).
    /// `None`: 2 when spawning, the launcher's count otherwise.
    pub ranks: Option<u32>,
    /// Elements (u64) per rank.
    pub elements: u64,
    /// Names the job's shared objects (default: from the environment, else made up).
    pub run_id: Option<String>,
    /// Bound of every wait, in seconds (at most a day, so no sum of deadlines overflows).
    pub timeout_s: u64,
    /// After a rank fails, how long the others get to stop on their own before the launcher
    /// stops them.
    #[serde(rename = "grace_ms", serialize_with = "millis")]
    pub grace: Duration,
    /// `tcp://HOST:PORT` where rank 0 listens, to form the job over TCP first.
    pub rendezvous: Option<String>,
    /// The job secret's file (32 hex digits, mode 600 or stricter).
    pub secret_file: Option<PathBuf>,
    /// Refuse to form the job without a job secret.
    pub require_secret: bool,
    /// Fault injection: kill this rank (SIGKILL) this long after the launch.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "fault")]
    pub kill: Option<(u32, Duration)>,
    /// Fault injection: stop this rank (SIGSTOP) this long after the job's object appeared.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "fault")]
    pub stop: Option<(u32, Duration)>,
    /// Ask the ranks for one JSON envelope each, and gather them into the launcher's.
    pub json: bool,
}

impl JobOptions {
    /// The bound of every wait.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_s)
    }
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u128(d.as_millis())
}

fn fault<S: serde::Serializer>(f: &Option<(u32, Duration)>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let Some((rank, after)) = f else {
        return s.serialize_none();
    };
    let mut st = s.serialize_struct("Fault", 2)?;
    st.serialize_field("rank", rank)?;
    st.serialize_field("after_ms", &after.as_millis())?;
    st.end()
}
