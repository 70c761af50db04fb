//! `pto-launch`: runs PTO jobs and benchmarks. A thin shell over `pto_host`: the flags
//! (clap), the choice of the library call, and printing (text, or one JSON envelope with
//! `--json`, see `pto_host::envelope`).

mod allreduce;
mod bench;
mod error;
mod knobs;
mod numbers;
mod run;
mod trace;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde::Serialize;

use pto_host::envelope::Envelope;

use allreduce::AllreduceArgs;
use bench::BenchArgs;
use error::CliError;
use run::RunArgs;
use trace::TraceArgs;

/// Launcher of the PTO device runtime (simulator backend by default).
#[derive(Parser, Debug)]
#[command(name = "pto-launch", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Sums a vector across ranks on the simulator: spawns --ranks rank processes (or, when
    /// mpirun, a PMI launcher, Slurm or torchrun started this process, runs as the rank they
    /// name), each checking its result; exits 0 only if every rank passed.
    Allreduce(AllreduceArgs),
    /// Runs a synthetic task DAG on the simulator and reports ns/task, tasks/s and the
    /// ready-to-complete latency (medians over --repeat runs, after one warm-up run).
    Bench(BenchArgs),
    /// Runs an orchestration SO and its kernels on the simulator (the default; kernels are
    /// shared objects of this host) or on an NPU through CANN (`--backend npu`), writing the
    /// buffers back with --output and checking them against golden files with --expect.
    Run(Box<RunArgs>),
    /// Summarises a run from its Chrome trace (`run --trace`, `bench --trace`): each
    /// kernel's count, total, median and p99 duration, each class's and core's busy share
    /// of the makespan, the tasks skipped and cancelled; for a scene's trace the overhead
    /// shares and the critical path with its blame; `--svg` draws its swimlanes.
    Trace(TraceArgs),
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    let (result, words) = match cli.command {
        Command::Bench(a) => (bench::bench(&a), knobs::Command::Bench),
        Command::Allreduce(a) => (allreduce::allreduce(&a), knobs::Command::Allreduce),
        Command::Run(a) => (run::run(&a), knobs::Command::Run),
        // A trace's errors name no runtime setting: run's wording leaves them as they are.
        Command::Trace(a) => (trace::trace(&a), knobs::Command::Run),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One write, so that ranks sharing the launcher's stderr do not interleave
            // their lines (stderr is unbuffered: `eprintln!` writes piece by piece). The
            // libraries name knobs by their Rust names: the line names this command's flags.
            let line = knobs::error_line(words, &e);
            let _ = std::io::stderr().write_all(line.as_bytes());
            e.exit_code()
        }
    }
}

/// Prints `command`'s `results` as text, or with `json` as one envelope with its `config`.
fn print<C: Serialize, R: Serialize + std::fmt::Display>(
    command: &str,
    config: &C,
    results: &R,
    json: bool,
) -> Result<(), CliError> {
    let text = if json {
        Envelope::new(command, config, results).to_json()?
    } else {
        results.to_string()
    };
    out(&text)
}

/// Writes `text` and a newline to stdout. A reader that went away (`| head`) is not an
/// error: what it did not read is dropped, as every Unix tool drops it.
fn out(text: &str) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::Run(format!("cannot write the results: {e}")))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allreduce::MAX_ELEMENTS;
    use pto_host::bench::MAX_PENDING;

    /// Every numeric flag: its subcommand, its range, and how to read it back.
    type Read = fn(&Command) -> Option<u64>;

    fn allreduce(c: &Command) -> Option<&AllreduceArgs> {
        match c {
            Command::Allreduce(a) => Some(a),
            Command::Bench(_) | Command::Run(_) | Command::Trace(_) => None,
        }
    }

    fn bench(c: &Command) -> Option<&BenchArgs> {
        match c {
            Command::Bench(b) => Some(b),
            Command::Allreduce(_) | Command::Run(_) | Command::Trace(_) => None,
        }
    }

    fn run(c: &Command) -> Option<&RunArgs> {
        match c {
            Command::Run(r) => Some(r),
            Command::Allreduce(_) | Command::Bench(_) | Command::Trace(_) => None,
        }
    }

    /// The flags `sub` cannot parse without.
    fn required(sub: &str) -> &'static [&'static str] {
        match sub {
            "run" => &[
                "--orchestration",
                "o.so",
                "--kernels",
                "k.bin",
                "--trace",
                "t.json",
            ],
            _ => &[],
        }
    }

    const FLAGS: &[(&str, &str, u64, u64, Read)] = &[
        ("allreduce", "--ranks", 1, 64, |c| {
            allreduce(c)?.ranks.map(u64::from)
        }),
        ("allreduce", "--elements", 1, MAX_ELEMENTS, |c| {
            Some(allreduce(c)?.elements)
        }),
        ("allreduce", "--timeout-s", 1, 86_400, |c| {
            Some(allreduce(c)?.timeout_s)
        }),
        ("allreduce", "--grace-ms", 0, 600_000, |c| {
            Some(allreduce(c)?.grace_ms)
        }),
        ("allreduce", "--kill-rank", 0, 63, |c| {
            allreduce(c)?.kill_rank.map(u64::from)
        }),
        ("allreduce", "--kill-after-ms", 0, 86_400_000, |c| {
            Some(allreduce(c)?.kill_after_ms)
        }),
        ("allreduce", "--stop-rank", 0, 63, |c| {
            allreduce(c)?.stop_rank.map(u64::from)
        }),
        ("allreduce", "--stop-after-ms", 0, 86_400_000, |c| {
            Some(allreduce(c)?.stop_after_ms)
        }),
        ("bench", "--tasks", 1, 100_000_000, |c| bench(c)?.tasks),
        ("bench", "--schedulers", 1, 16, |c| {
            Some(bench(c)?.schedulers.into())
        }),
        ("bench", "--aic", 0, 128, |c| Some(bench(c)?.aic.into())),
        ("bench", "--aiv", 0, 128, |c| Some(bench(c)?.aiv.into())),
        ("bench", "--task-window", 2, 1 << 20, |c| {
            Some(bench(c)?.task_window.into())
        }),
        ("bench", "--repeat", 1, 1000, |c| {
            Some(bench(c)?.repeat.into())
        }),
        ("bench", "--spin-before-park", 0, 1_000_000_000, |c| {
            Some(bench(c)?.spin_before_park.into())
        }),
        ("bench", "--kernel-ns", 0, 1_000_000_000, |c| {
            Some(bench(c)?.kernel_ns)
        }),
        ("bench", "--seed", 0, u64::MAX, |c| Some(bench(c)?.seed)),
        ("bench", "--pending", 0, MAX_PENDING, |c| {
            Some(bench(c)?.pending)
        }),
        ("bench", "--ranks", 1, 64, |c| Some(bench(c)?.ranks.into())),
        ("bench", "--message-bytes", 4096, 64 << 20, |c| {
            Some(bench(c)?.message_bytes as u64)
        }),
        ("bench", "--args", 0, 32, |c| {
            Some(bench(c)?.tensor_args.into())
        }),
        ("bench", "--blocks", 1, 128, |c| {
            Some(bench(c)?.blocks.into())
        }),
        ("run", "--device", 0, 63, |c| {
            run(c)?.device.map(|d| d as u64)
        }),
        ("run", "--clusters", 0, 25, |c| {
            Some(run(c)?.clusters.into())
        }),
        ("run", "--schedulers", 1, 5, |c| {
            Some(run(c)?.schedulers.into())
        }),
        ("run", "--task-window", 4, 1 << 20, |c| {
            run(c)?.task_window.map(u64::from)
        }),
        ("run", "--heap-bytes", 64, 1 << 34, |c| run(c)?.heap_bytes),
        ("run", "--max-deps", 1, 64, |c| {
            run(c)?.max_deps.map(u64::from)
        }),
        ("run", "--max-tensors", 0, 32, |c| {
            run(c)?.max_tensors.map(u64::from)
        }),
        ("run", "--max-args", 0, 32, |c| {
            run(c)?.max_args.map(u64::from)
        }),
        ("run", "--max-conditions", 1, 64, |c| {
            Some(run(c)?.max_conditions.into())
        }),
        ("run", "--task-timeout-ms", 1, 10_000, |c| {
            Some(run(c)?.task_timeout_ms)
        }),
        ("run", "--submit-timeout-ms", 1, 10_000, |c| {
            Some(run(c)?.submit_timeout_ms)
        }),
        ("run", "--deferred-timeout-ms", 1, 10_000, |c| {
            Some(run(c)?.deferred_timeout_ms)
        }),
        ("run", "--trace-records", 1, 1 << 20, |c| {
            run(c)?.trace_records.map(u64::from)
        }),
        ("run", "--ranks", 1, 64, |c| Some(run(c)?.ranks.into())),
        ("run", "--window-bytes", 64, 1 << 34, |c| {
            Some(run(c)?.window_bytes)
        }),
        ("run", "--timeout-s", 1, 86_400, |c| Some(run(c)?.timeout_s)),
    ];

    #[test]
    fn every_numeric_flag_parses_exactly_its_range_at_0_1_max_and_u64_max() {
        for &(sub, flag, lo, hi, read) in FLAGS {
            for v in [0, 1, hi, hi.saturating_add(1), u64::MAX] {
                let text = v.to_string();
                let args = ["pto-launch", sub, flag, &text];
                let parsed = Cli::try_parse_from(args.iter().chain(required(sub)));
                if (lo..=hi).contains(&v) {
                    let cli = parsed.unwrap_or_else(|e| panic!("{sub} {flag} {v}: {e}"));
                    assert_eq!(read(&cli.command), Some(v), "{sub} {flag} {v}: no wrap");
                } else {
                    let e = parsed.expect_err(&format!("{sub} {flag} {v} is refused"));
                    let msg = e.to_string();
                    assert!(
                        msg.contains(flag) && msg.contains(&text),
                        "{sub} {flag} {v}: the error names the flag and value: {msg}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_value_that_may_be_negative_parses_negative_as_its_twos_complement() {
        let cli = Cli::try_parse_from(["pto-launch", "bench", "--seed", "-1"]).unwrap();
        assert_eq!(bench(&cli.command).unwrap().seed, u64::MAX);
        let cli =
            Cli::try_parse_from(["pto-launch", "bench", "--seed", "-9223372036854775808"]).unwrap();
        assert_eq!(bench(&cli.command).unwrap().seed, 1 << 63);
        for bad in ["-9223372036854775809", "18446744073709551616"] {
            let e = Cli::try_parse_from(["pto-launch", "bench", "--seed", bad]).unwrap_err();
            assert!(e.to_string().contains("--seed"), "{e}");
        }
        let base = [
            "pto-launch",
            "run",
            "--orchestration",
            "o.so",
            "--kernels",
            "k.bin",
        ];
        let cli = Cli::try_parse_from(base.iter().chain(&["--arg", "-256", "--arg", "7"])).unwrap();
        assert_eq!(run(&cli.command).unwrap().args, ["-256", "7"]);
        // Where a value cannot be negative, a negative one is refused by name.
        for flag in ["--task-window", "--max-deps", "--heap-bytes"] {
            let e = Cli::try_parse_from(base.iter().chain(&[flag, "-4"])).unwrap_err();
            assert!(
                e.to_string().contains(flag) || e.to_string().contains("-4"),
                "{e}"
            );
        }
    }
}
