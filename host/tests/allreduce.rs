//! `pto-launch allreduce` end to end: rank processes on the shared-memory backend.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn launch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(args)
        .env_remove("PTO_RANK")
        .env_remove("PTO_RANKS")
        .output()
        .expect("pto-launch runs")
}

fn run_id(tag: &str) -> String {
    format!("t-{tag}-{}", std::process::id())
}

fn leftover(id: &str) -> bool {
    Path::new(&format!("/dev/shm/pto-{id}")).exists()
}

#[test]
fn every_rank_gets_the_sum_for_2_3_4_and_8_ranks() {
    for ranks in [2, 3, 4, 8] {
        let id = run_id(&format!("sum{ranks}"));
        let out = launch(&[
            "allreduce",
            "--ranks",
            &ranks.to_string(),
            "--elements",
            "3000",
            "--run-id",
            &id,
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{ranks} ranks: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for r in 0..ranks {
            assert!(stdout.contains(&format!("rank {r}: passed")), "{stdout}");
            assert!(stdout.contains(&format!("rank {r}/{ranks}: sum of 3000 elements checked")));
        }
        assert!(!leftover(&id));
    }
}

#[test]
fn a_killed_rank_takes_the_job_down_quickly_naming_it_and_leaves_nothing() {
    // Kill times drawn from the process id: a different point each run, 0 to 60 ms in.
    let mut seed = std::process::id() as u64 | 1;
    let times: Vec<u64> = (0..3)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % 61
        })
        .collect();
    for (trial, &after_ms) in times.iter().enumerate() {
        let id = run_id(&format!("kill{trial}"));
        let start = Instant::now();
        let out = launch(&[
            "allreduce",
            "--ranks",
            "4",
            "--elements",
            "1000000",
            "--timeout-s",
            "30",
            "--run-id",
            &id,
            "--kill-rank",
            "1",
            "--kill-after-ms",
            &after_ms.to_string(),
        ]);
        let took = start.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "trial {trial}: {stdout}");
        assert!(
            stdout.contains("rank 1: was killed by signal 9"),
            "{stdout}"
        );
        // The others stop because rank 1 died, far sooner than their 30 s timeout.
        assert!(
            took < Duration::from_secs(10),
            "took {took:?}: {stdout}{stderr}"
        );
        // Every other rank finished before the kill, stopped naming rank 1, or (still waiting
        // for the job to be set up) was stopped by the launcher.
        let named = stderr.matches("because rank 1 died").count();
        let passed = stdout.matches("passed").count();
        let stopped = stdout.matches("stopped by the launcher").count();
        assert_eq!(named + passed + stopped, 3, "{stdout}{stderr}");
        assert!(!leftover(&id), "trial {trial} left its shared object");
    }
}

#[test]
fn two_jobs_at_once_do_not_collide() {
    let (a, b) = (run_id("twoA"), run_id("twoB"));
    let ta = std::thread::spawn({
        let a = a.clone();
        move || {
            launch(&[
                "allreduce",
                "--ranks",
                "3",
                "--elements",
                "2000",
                "--run-id",
                &a,
            ])
        }
    });
    let out_b = launch(&[
        "allreduce",
        "--ranks",
        "2",
        "--elements",
        "2000",
        "--run-id",
        &b,
    ]);
    let out_a = ta.join().unwrap();
    assert!(out_a.status.success() && out_b.status.success());
    assert!(!leftover(&a) && !leftover(&b));
}

#[test]
fn bad_rank_counts_are_errors() {
    for n in ["0", "65"] {
        let out = launch(&["allreduce", "--ranks", n]);
        assert_eq!(out.status.code(), Some(2), "the parser's usage error");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--ranks") && err.contains("1..=64"), "{err}");
    }
}

#[test]
fn started_by_mpirun_each_process_runs_as_its_rank() {
    // Two processes as mpirun would start them: no spawning, the rank from the environment,
    // the job's name from Open MPI's job id.
    let job = format!("{}", std::process::id());
    let children = two_ompi_ranks(
        &["allreduce", "--elements", "1000", "--timeout-s", "20"],
        &job,
    );
    for (r, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "rank {r}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!("rank {r}/2: sum of 1000 elements checked")),
            "{stdout}"
        );
    }
    assert!(!leftover(&format!("ompi-{job}")));
}

#[test]
fn under_another_launcher_each_rank_prints_its_own_json_envelope() {
    let job = format!("json{}", std::process::id());
    let children = two_ompi_ranks(
        &[
            "allreduce",
            "--elements",
            "700",
            "--timeout-s",
            "20",
            "--json",
        ],
        &job,
    );
    for (r, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "rank {r}: {stdout}");
        let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
        assert_eq!(
            (v["version"].as_u64(), v["command"].as_str()),
            (Some(1), Some("allreduce"))
        );
        assert_eq!(v["config"]["elements"], 700, "{v}");
        assert_eq!(v["config"]["ranks"], 2, "the launcher's world size: {v}");
        let res = &v["results"];
        assert_eq!(
            (res["rank"].as_u64(), res["ranks"].as_u64()),
            (Some(r as u64), Some(2))
        );
        assert!(res["checked_ms"].as_f64().unwrap() > 0.0, "{v}");
    }
    assert!(!leftover(&format!("ompi-{job}")));
}

/// A rank as another launcher starts it: `vars` name it, nothing of pto-launch's is set.
fn rank_process(args: &[&str], vars: &[(&str, String)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pto-launch"));
    c.args(args);
    for v in ["PTO_RANK", "PTO_RANKS", "PTO_RUN_ID", "PTO_LAUNCHER_PID"] {
        c.env_remove(v);
    }
    for (k, v) in vars {
        c.env(k, v);
    }
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

/// Ranks 0 and 1 of Open MPI job `job`, started as mpirun would start them, running `args`.
fn two_ompi_ranks(args: &[&str], job: &str) -> Vec<std::process::Child> {
    (0..2)
        .map(|r| {
            let vars = [
                ("OMPI_COMM_WORLD_RANK", r.to_string()),
                ("OMPI_COMM_WORLD_SIZE", "2".to_string()),
                ("OMPI_MCA_ess_base_jobid", job.to_string()),
            ];
            rank_process(args, &vars).spawn().expect("starts")
        })
        .collect()
}

#[test]
fn under_another_launcher_a_disagreeing_ranks_and_port_0_are_refused_at_once() {
    let vars = [
        ("OMPI_COMM_WORLD_RANK", "0".to_string()),
        ("OMPI_COMM_WORLD_SIZE", "2".to_string()),
        (
            "OMPI_MCA_ess_base_jobid",
            format!("refuse{}", std::process::id()),
        ),
    ];
    let start = Instant::now();
    let refusals: [(&[&str], [&str; 2]); 2] = [
        (
            &["allreduce", "--ranks", "3"],
            ["--ranks 3", "OMPI_COMM_WORLD_SIZE=2"],
        ),
        (
            &["allreduce", "--rendezvous", "tcp://127.0.0.1:0"],
            ["port 0", "Give a port"],
        ),
    ];
    for (args, says) in refusals {
        let out = rank_process(args, &vars).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(says.iter().all(|s| err.contains(s)), "{err}");
    }
    // At once: not after the 30 s a rank would wait for peers that cannot come.
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_run_id_derived_from_the_rendezvous_address_is_valid() {
    // PMI names no job: the ranks name it after the rendezvous address, dots and colons
    // included, and that name works.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let at = format!("tcp://127.0.0.1:{port}");
    let children: Vec<_> = (0..2)
        .map(|r| {
            rank_process(
                &[
                    "allreduce",
                    "--elements",
                    "500",
                    "--timeout-s",
                    "20",
                    "--rendezvous",
                    &at,
                ],
                &[("PMI_RANK", r.to_string()), ("PMI_SIZE", "2".to_string())],
            )
            .spawn()
            .unwrap()
        })
        .collect();
    for (r, c) in children.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "rank {r}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let left: Vec<_> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .contains(&format!("rdzv-127_0_0_1_{port}"))
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
