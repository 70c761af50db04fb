//! Every numeric flag of `pto-launch` at 0, 1, its maximum and `u64::MAX`.

mod cli_util;
use cli_util::launch;

/// What `pto-launch` must do with one value of a flag.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    /// Exit 0.
    Runs,
    /// The parser's usage error (exit 2), naming the flag and its range.
    Refused,
    /// Exit 1 with an error containing this.
    Fails(&'static str),
    /// Not run here (too long for a test at this value; the parser's unit test covers it).
    Skip,
}

#[test]
fn every_numeric_flag_at_0_1_max_and_u64_max_is_a_clear_error_or_a_correct_run() {
    use Outcome::*;
    const MAX: &str = "18446744073709551615";
    // The largest values that would run for minutes are run with no cores, so the run is
    // refused right after the flags were taken (the value parsed, nothing wrapped).
    const NO_CORES: &[&str] = &["--aic", "0", "--aiv", "0"];
    let no_cores = Fails("at least one core");
    // --kernel-ns without --silicon is refused whatever its value (0 is the default).
    const SMALL_RUN: &[&str] = &["bench", "--tasks", "10", "--repeat", "1"];
    // (flag, its maximum, base arguments, outcome at 0, 1, maximum, u64::MAX)
    type Case = (
        &'static str,
        &'static str,
        &'static [&'static str],
        [Outcome; 4],
    );
    let allreduce: &[&str] = &["allreduce", "--elements", "20000", "--ranks", "2"];
    let bench: &[&str] = &["bench", "--tasks", "200", "--repeat", "1"];
    let cases: &[Case] = &[
        // 64 ranks with few elements each: the flag's range is under test, not the
        // machine (20000 elements over 64 ranks take 9 s of a debug build on 2 CPUs).
        (
            "--ranks",
            "64",
            &["allreduce", "--elements", "1000"],
            [Refused, Runs, Runs, Refused],
        ),
        (
            "--elements",
            "2147483648",
            allreduce,
            [Refused, Runs, Fails("cannot be mapped"), Refused],
        ),
        (
            "--timeout-s",
            "86400",
            allreduce,
            [Refused, Runs, Runs, Refused],
        ),
        (
            "--grace-ms",
            "600000",
            allreduce,
            [Runs, Runs, Runs, Refused],
        ),
        (
            "--kill-rank",
            "63",
            allreduce,
            [
                Fails("rank 0: was killed by signal 9"),
                Fails("rank 1: was killed by signal 9"),
                Fails("--kill-rank 63: the job has ranks 0 to 1"),
                Refused,
            ],
        ),
        (
            "--kill-after-ms",
            "86400000",
            allreduce,
            [Runs, Runs, Runs, Refused],
        ),
        (
            "--stop-rank",
            "63",
            allreduce,
            [
                Fails("rank 0: stopped responding"),
                Fails("rank 1: stopped responding"),
                Fails("--stop-rank 63: the job has ranks 0 to 1"),
                Refused,
            ],
        ),
        (
            "--stop-after-ms",
            "86400000",
            allreduce,
            [Runs, Runs, Runs, Refused],
        ),
        (
            "--tasks",
            "100000000",
            bench,
            [Refused, Runs, no_cores, Refused],
        ),
        ("--schedulers", "16", bench, [Refused, Runs, Runs, Refused]),
        ("--aic", "128", bench, [Runs, Runs, Fails("cores"), Refused]),
        ("--aiv", "128", bench, [Runs, Runs, Fails("cores"), Refused]),
        (
            "--task-window",
            "1048576",
            bench,
            [Refused, Refused, no_cores, Refused],
        ),
        (
            "--repeat",
            "1000",
            bench,
            [Refused, Runs, no_cores, Refused],
        ),
        (
            "--spin-before-park",
            "1000000000",
            bench,
            [Runs, Runs, no_cores, Refused],
        ),
        (
            "--kernel-ns",
            "1000000000",
            SMALL_RUN,
            [
                Runs,
                Fails("give --silicon"),
                Fails("give --silicon"),
                Refused,
            ],
        ),
        (
            "--seed",
            MAX,
            &[
                "bench",
                "--workload",
                "random",
                "--tasks",
                "200",
                "--repeat",
                "1",
            ],
            [Runs, Runs, Runs, Runs],
        ),
        (
            "--pending",
            "1048576",
            &[
                "bench",
                "--workload",
                "deferred",
                "--tasks",
                "200",
                "--repeat",
                "1",
            ],
            [Runs, Runs, no_cores, Refused],
        ),
        (
            "--ranks",
            "64",
            &["bench", "--workload", "barrier"],
            [Refused, Runs, Runs, Refused],
        ),
        (
            "--message-bytes",
            "67108864",
            &["bench", "--workload", "transport", "--repeat", "1"],
            [Refused, Refused, Skip, Refused],
        ),
        (
            "--blocks",
            "128",
            &[
                "bench",
                "--workload",
                "spmd",
                "--tasks",
                "200",
                "--repeat",
                "1",
            ],
            [
                Refused,
                Runs,
                Fails("is not in 1 to the 2 vector cores"),
                Refused,
            ],
        ),
        (
            "--args",
            "32",
            &[
                "bench",
                "--workload",
                "tensors",
                "--tasks",
                "200",
                "--repeat",
                "1",
            ],
            [Runs, Runs, Runs, Refused],
        ),
    ];
    for &(flag, max, base, outcomes) in cases {
        for (value, outcome) in ["0", "1", max, MAX].into_iter().zip(outcomes) {
            if matches!(outcome, Skip) {
                continue;
            }
            // The flag's value replaces the base's, if the base sets it.
            let mut args: Vec<&str> = Vec::new();
            let mut i = 0;
            while i < base.len() {
                if base[i] == flag {
                    i += 2;
                    continue;
                }
                args.push(base[i]);
                i += 1;
            }
            args.extend([flag, value]);
            if matches!(outcome, Fails(m) if m == "at least one core") {
                args.extend(NO_CORES);
            }
            let run_id = format!(
                "cli-{}-{value}-{}",
                flag.trim_matches('-'),
                std::process::id()
            );
            if args[0] == "allreduce" {
                args.extend(["--run-id", &run_id]);
            }
            let out = launch(&args);
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            let all = format!("{}{err}", String::from_utf8_lossy(&out.stdout));
            let what = format!("{args:?}");
            assert!(!all.contains("panicked"), "{what} panicked: {all}");
            match outcome {
                Runs => assert!(out.status.success(), "{what} runs: {all}"),
                Refused => {
                    assert_eq!(out.status.code(), Some(2), "{what}: a usage error: {all}");
                    assert!(
                        err.contains(flag)
                            && (err.contains("is not in") || err.contains("too large")),
                        "{what}: names the flag and its range: {err}"
                    );
                }
                Fails(m) => {
                    assert_eq!(out.status.code(), Some(1), "{what}: {all}");
                    assert!(all.contains(m), "{what}: says {m:?}: {all}");
                }
                Skip => {}
            }
            assert!(
                !std::path::Path::new(&format!("/dev/shm/pto-{run_id}")).exists(),
                "{what} left its object"
            );
        }
    }
}
