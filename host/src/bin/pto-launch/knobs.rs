//! What a `pto-launch` user changes where an error names a knob: the libraries' messages
//! name knobs by their Rust names in backticks (`pto_runtime_core::Knob`), and each
//! subcommand replaces every one with its flag, or, where it has none, with what can be done
//! from its command line. The table is total over `Knob::ALL` for every subcommand, so a new
//! knob does not build until each subcommand says how to reach it.

use pto_runtime_core::Knob;

/// The subcommand whose flags an error is worded in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `pto-launch run`.
    Run,
    /// `pto-launch bench`.
    Bench,
    /// `pto-launch allreduce`.
    Allreduce,
}

/// How `cmd`'s user changes `knob`: its flag, or a phrase that reads where the knob's name
/// stood and says what the command line can do.
pub fn lever(cmd: Command, knob: Knob) -> &'static str {
    use Command::*;
    use Knob::*;
    match (cmd, knob) {
        (Run, TaskWindow) | (Bench, TaskWindow) => "--task-window",
        (Run, MaxDeps) => "--max-deps",
        (Run, MaxArgs) => "--max-args",
        (Run, MaxTensors) => "--max-tensors",
        (Run, Schedulers) | (Bench, Schedulers) => "--schedulers",
        (Run, SubmitTimeout) => "--submit-timeout-ms",
        (Run, TaskTimeout) => "--task-timeout-ms",
        (Run, DeferredTimeout) => "--deferred-timeout-ms",
        (Run, MaxConditions) => "--max-conditions",
        (Run, ProfileCapacity) => "--trace-records",
        (Run, HeapBytes) => "--heap-bytes",
        (Run, WindowBytes) => "--window-bytes",
        (Run, MemoryBytes) => {
            "the simulated memory (it holds the --buffer sizes and --heap-bytes for each ring)"
        }
        (Run, Rings) => "the ring count (pto-launch run uses 4 rings; --task-window sizes each)",
        (Run, DeferredCapacity) => {
            "the deferred sets (4096 conditions per scheduler in pto-launch run: more --schedulers \
             hold more)"
        }
        (Run, DeferredPollBudget) => "the deferred poll budget (64 in pto-launch run)",
        (Run, Completion) => "the completion mode (pto-launch run polls)",
        (Bench, MaxTensors) | (Bench, MaxArgs) => "--args",
        (Bench, DeferredCapacity) | (Bench, MaxConditions) => "--pending",
        (Bench, ProfileCapacity) => "the task records kept (--profile tasks keeps 65536)",
        (Bench, Completion) => "--completion",
        (Bench, TaskTimeout) | (Bench, SubmitTimeout) | (Bench, DeferredTimeout) => {
            "the timeouts (10 s in pto-launch bench: lower --tasks)"
        }
        (Bench, HeapBytes) | (Bench, MemoryBytes) | (Bench, WindowBytes) => {
            "the workload's memory (set by pto-launch bench from --tasks and --message-bytes)"
        }
        (Bench, MaxDeps) | (Bench, Rings) | (Bench, DeferredPollBudget) => {
            "the workload's shape (fixed by pto-launch bench for each --workload)"
        }
        (Allreduce, WindowBytes) | (Allreduce, MemoryBytes) => {
            "--elements (each rank's window holds --ranks x --elements x 8 bytes)"
        }
        (Allreduce, SubmitTimeout | TaskTimeout | DeferredTimeout) => {
            "--timeout-s (or lower --elements, or run fewer --ranks than a loaded machine can \
             serve)"
        }
        (
            Allreduce,
            Rings | TaskWindow | MaxDeps | MaxArgs | MaxTensors | Schedulers | ProfileCapacity
            | MaxConditions | DeferredCapacity | DeferredPollBudget | Completion | HeapBytes,
        ) => "the runtime's size (fixed by pto-launch allreduce for its --elements)",
    }
}

/// `text` with every knob's backticked Rust name replaced by `cmd`'s lever for it.
pub fn worded(cmd: Command, text: &str) -> String {
    let mut out = text.to_owned();
    for knob in Knob::ALL {
        out = out.replace(&knob.to_string(), lever(cmd, knob));
    }
    out
}

/// The line `pto-launch` prints for error `e` of `cmd`: `error: `, the error worded in
/// `cmd`'s flags, a newline.
pub fn error_line(cmd: Command, e: &dyn std::fmt::Display) -> String {
    format!("error: {}\n", worded(cmd, &e.to_string()))
}

#[cfg(test)]
mod samples;
#[cfg(test)]
mod tests;
