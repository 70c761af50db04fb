//! `pto-launch trace FILE`: what a run's Chrome trace (`pto-launch run --trace`, `bench
//! --trace`) says about it: each kernel's count and durations, each class's and each core's
//! busy share of the makespan, the tasks skipped and cancelled (`pto_trace::RunTrace`, the
//! file parsed as it is read); for a trace that carries its DAG (a scene's, or a program's
//! run on the simulator or an NPU) also the overhead shares and the critical path with its
//! blame; and with `--svg` a swimlane picture.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::error::CliError;

/// `pto-launch trace`'s flags.
#[derive(Args, Debug)]
pub struct TraceArgs {
    /// The trace: a Chrome trace JSON file `pto-launch run --trace` or `bench --trace` wrote.
    #[arg(value_name = "FILE.json")]
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also draw the run as SVG swimlanes to FILE: a lane per core, slices coloured by
    /// kernel, the critical path's chain outlined (a scene's trace).
    #[arg(long, value_name = "FILE.svg")]
    pub svg: Option<PathBuf>,
}

/// What `--json` reports it was asked.
#[derive(Serialize)]
struct TraceConfig<'a> {
    file: &'a std::path::Path,
    svg: Option<&'a std::path::Path>,
}

/// Reads `a.file` and prints its summary.
pub fn trace(a: &TraceArgs) -> Result<(), CliError> {
    let named = |e: &dyn std::fmt::Display| CliError::Run(format!("{}: {e}", a.file.display()));
    // Parsed as it is read: a trace of a million tasks never sits whole in memory as JSON.
    let file = std::fs::File::open(&a.file).map_err(|e| named(&e))?;
    let run = pto_trace::RunTrace::from_reader(file).map_err(|e| named(&e))?;
    let summary = run.summary();
    if let Some(path) = &a.svg {
        let svg = run.swimlane_svg();
        std::fs::write(path, svg)
            .map_err(|e| CliError::Run(format!("cannot write {}: {e}", path.display())))?;
    }
    let config = TraceConfig {
        file: &a.file,
        svg: a.svg.as_deref(),
    };
    crate::print("trace", &config, &summary, a.json)
}
