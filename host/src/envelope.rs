//! The one JSON shape every `pto-launch` subcommand prints under `--json`:
//!
//! ```json
//! {"version": 1, "pto_launch": "0.1.0", "command": "bench",
//!  "config": {"workload": "chain", "tasks": 10000, ...},
//!  "results": {"ns_per_task": 812.3, ...}}
//! ```
//!
//! `version` is the envelope's format (raised when a field changes meaning or goes away);
//! `pto_launch` the version of the binary; `command` the subcommand; `config` what it was
//! asked to do, defaults filled in; `results` what it measured or checked, as the
//! subcommand's result type serialises. A `pto-launch run` that failed prints the same
//! envelope with `error` (its message, and its stall class when it stalled) in place of
//! `results` ([`Envelope::failed`]).

use serde::Serialize;

/// The envelope's format version.
pub const ENVELOPE_VERSION: u32 = 1;

/// One subcommand's output (see the module docs): `results`, or for a failed `run` its
/// `error`, after the same four fields.
#[derive(Debug, Serialize)]
pub struct Envelope<'a, C: Serialize, R: Serialize> {
    /// [`ENVELOPE_VERSION`].
    pub version: u32,
    /// The version of the binary that printed it.
    pub pto_launch: &'static str,
    /// The subcommand (`bench`, `allreduce`).
    pub command: &'a str,
    /// What the subcommand was asked to do.
    pub config: &'a C,
    /// What it found, or why it failed.
    #[serde(flatten)]
    pub body: Body<'a, R>,
}

/// An envelope's last field: `results`, or `error` in their place.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Body<'a, R: Serialize> {
    /// What the subcommand found.
    Results(&'a R),
    /// Why it failed.
    Error(&'a R),
}

impl<'a, C: Serialize, R: Serialize> Envelope<'a, C, R> {
    /// The envelope of `command`'s `results` under `config`.
    pub fn new(command: &'a str, config: &'a C, results: &'a R) -> Self {
        Self::with(command, config, Body::Results(results))
    }

    /// The envelope of `command`'s failure `error` under `config`.
    pub fn failed(command: &'a str, config: &'a C, error: &'a R) -> Self {
        Self::with(command, config, Body::Error(error))
    }

    fn with(command: &'a str, config: &'a C, body: Body<'a, R>) -> Self {
        Envelope {
            version: ENVELOPE_VERSION,
            pto_launch: env!("CARGO_PKG_VERSION"),
            command,
            config,
            body,
        }
    }

    /// The envelope as one line of JSON.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }
}
