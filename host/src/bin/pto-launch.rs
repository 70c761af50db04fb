//! `pto-launch`: runs PTO jobs and benchmarks.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use pto_host::bench::{Workload, run_bench};
use pto_runtime_core::Config;
use pto_sim::SimOptions;

/// Launcher of the PTO device runtime (simulator backend by default).
#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Runs a synthetic task DAG on the simulator and reports ns/task, tasks/s and the
    /// ready-to-complete latency (medians over --repeat runs, after one warm-up run).
    Bench(BenchArgs),
}

#[derive(clap::Args, Debug)]
struct BenchArgs {
    /// Shape of the DAG.
    #[arg(long, value_enum, default_value = "independent")]
    workload: Workload,
    /// Tasks per run.
    #[arg(long, default_value_t = 10_000)]
    tasks: u64,
    /// Scheduler threads.
    #[arg(long, default_value_t = 1)]
    schedulers: u8,
    /// Simulated AIC (cube) cores.
    #[arg(long, default_value_t = 1)]
    aic: u16,
    /// Simulated AIV (vector) cores.
    #[arg(long, default_value_t = 2)]
    aiv: u16,
    /// Task slots of the one ring the bench uses (a power of two). The default holds a
    /// 10 000-task run, so the orchestrator never waits for reclaim; lower it to measure
    /// back-pressure.
    #[arg(long, default_value_t = 16384)]
    task_window: u32,
    /// Measured runs; the figures are their medians.
    #[arg(long, default_value_t = 5)]
    repeat: u32,
    /// Spin iterations an idle simulated core polls before it parks.
    #[arg(long, default_value_t = SimOptions::default().spin_before_park)]
    spin_before_park: u32,
    /// Let threads float over the host CPUs instead of pinning schedulers and simulated cores
    /// to separate CPUs.
    #[arg(long)]
    no_pin: bool,
    /// Seed of the random workload.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    match cli.command {
        Command::Bench(a) => {
            let cfg = Config {
                rings: 1,
                task_window: a.task_window,
                aic_cores: a.aic,
                aiv_cores: a.aiv,
                schedulers: a.schedulers,
                record_latency: true,
                ..Config::default()
            };
            let sim = SimOptions {
                spin_before_park: a.spin_before_park,
                pin_threads: !a.no_pin,
            };
            match run_bench(cfg, sim, a.workload, a.tasks, a.repeat, a.seed) {
                Ok(r) if a.json => match serde_json::to_string(&r) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("error: cannot encode the result: {e}");
                        return ExitCode::FAILURE;
                    }
                },
                Ok(r) => println!("{r}"),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}
