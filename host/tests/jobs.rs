//! Jobs that never leak, never orphan and always name the culprit: `pto-launch allreduce`
//! interrupted, its launcher killed, a rank killed under an mpirun-style launch, a run id the
//! ranks sanitise, a rank stopped with SIGSTOP, and how fast peers stop once the job is
//! poisoned. Every trial checks that nothing is left in /dev/shm and no process behind.
//!
//! The trials run one at a time (a lock): each starts up to 8 rank processes on a small
//! machine, and the timings they check must not be those of a machine running several.

mod job_util;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use job_util::*;
use pto_host::comm::{NAMED_WITHIN, sanitize_run_id};
use rustix::process::Signal;

#[test]
fn ctrl_c_to_the_process_group_leaves_nothing_at_4_and_8_ranks() {
    let _one = serial();
    each_job_at_4_and_8_ranks("int", |ranks, run_id, child, delay| {
        let group = child.id();
        // What a terminal does on Ctrl-C: SIGINT to every process of the group.
        rustix::process::kill_process_group(pid(group), Signal::INT).expect("SIGINT");
        let out = finish(child);
        let what = format!("{ranks} ranks, SIGINT {delay:?} after the object appeared");
        assert_eq!(out.status.code(), Some(130), "{what}: {}", text(&out));
        assert!(text(&out).contains("interrupted by signal 2"), "{what}");
        assert_clean(&what, run_id, group, &text(&out));
    });
}

#[test]
fn sigkill_of_the_launcher_takes_its_ranks_down_and_leaves_nothing_at_4_and_8_ranks() {
    let _one = serial();
    become_subreaper();
    each_job_at_4_and_8_ranks("lk", |ranks, run_id, child, delay| {
        let group = child.id();
        rustix::process::kill_process(pid(group), Signal::KILL).expect("SIGKILL");
        let out = finish(child);
        let what = format!("{ranks} ranks, launcher SIGKILLed {delay:?} after the object");
        assert_clean(&what, run_id, group, &text(&out));
    });
}

#[test]
fn sigterm_to_the_launcher_alone_is_passed_on_to_the_ranks() {
    let _one = serial();
    become_subreaper();
    let run_id = id("term");
    let child = start_job(&run_id, 4);
    let group = child.id();
    rustix::process::kill_process(pid(group), Signal::TERM).expect("SIGTERM");
    let out = finish(child);
    assert_eq!(out.status.code(), Some(128 + 15), "{}", text(&out));
    assert!(
        text(&out).contains("was killed by signal 15"),
        "{}",
        text(&out)
    );
    assert_clean("SIGTERM to the launcher", &run_id, group, &text(&out));
}

#[test]
fn a_rank_sigkilled_under_an_mpirun_style_launch_leaves_nothing_at_4_and_8_ranks() {
    let _one = serial();
    for ranks in [4u32, 8] {
        for (trial, delay) in delays(2).into_iter().enumerate() {
            let job = format!("{}{ranks}{trial}", std::process::id());
            let run_id = format!("ompi-{job}");
            let mut children = start_mpirun_style(&job, ranks, "300000", "20");
            let group = children[0].id();
            let pids: Vec<u32> = children.iter().map(|c| c.id()).collect();
            // Every rank has joined (its heartbeat thread runs): its peers know its process
            // and heartbeat, so they can tell that it died. Mapping the object is not enough:
            // a rank killed after it mapped the object but before it joined is one its peers
            // never knew, and they time out (the "early" case below).
            if !wait_joined(&pids) {
                for c in &mut children {
                    let _ = c.kill();
                }
                let all: String = children
                    .into_iter()
                    .map(|c| format!("\n{}", text(&finish(c))))
                    .collect();
                let _ = std::fs::remove_file(object(&run_id));
                panic!("{ranks} ranks: not every rank joined or ended within {BOUND:?}:{all}");
            }
            std::thread::sleep(delay);
            let mut victim = children.remove(1);
            victim.kill().expect("SIGKILL");
            let killed = Instant::now();
            victim.wait().expect("reaped");
            let what = format!("{ranks} ranks, rank 1 SIGKILLed {delay:?} after all joined");
            // Every survivor's end first, so that a failure shows them all (and when each
            // ended: a rank that waited out its timeout did not see the death at all).
            let ends: Vec<(usize, bool, String)> = children
                .into_iter()
                .enumerate()
                .map(|(i, c)| {
                    let rank = if i == 0 { 0 } else { i + 1 };
                    let out = finish(c);
                    let t = text(&out);
                    let ms = killed.elapsed().as_secs_f64() * 1e3;
                    let said = format!(
                        "rank {rank} ({}, ended by {ms:.0} ms after the kill): {t}",
                        out.status
                    );
                    (rank, out.status.success(), said)
                })
                .collect();
            let all: String = ends.iter().map(|(.., said)| format!("\n{said}")).collect();
            for (rank, passed, said) in &ends {
                // A rank that had its sum and left before the kill passes; the others stop
                // on their own, naming rank 1.
                assert!(
                    *passed || said.contains("because rank 1 died"),
                    "{what}: rank {rank} neither passed nor named rank 1's death; every survivor:{all}"
                );
            }
            assert_clean(&what, &run_id, group, &all);
        }
    }
    // Killed before its peers knew it: they time out (bounded), and remove the object.
    let job = format!("{}early", std::process::id());
    let run_id = format!("ompi-{job}");
    let mut children = start_mpirun_style(&job, 4, "1000", "2");
    let group = children[0].id();
    let mut victim = children.remove(1);
    victim.kill().expect("SIGKILL");
    victim.wait().expect("reaped");
    for c in children {
        let out = finish(c);
        assert!(
            !out.status.success(),
            "a job without rank 1 cannot pass: {}",
            text(&out)
        );
    }
    assert_clean("rank 1 SIGKILLed at once", &run_id, group, "");
}

#[test]
fn a_run_id_the_ranks_sanitise_names_one_object_that_never_outlives_the_job() {
    let _one = serial();
    let long = format!("{}-{}", "l".repeat(150), std::process::id());
    for user in [
        format!("a/b-{}", std::process::id()),
        format!("x.y-{}", std::process::id()),
        long,
    ] {
        let run_id = sanitize_run_id(&user).expect("a valid id");
        assert_ne!(run_id, user, "the trial's id needs sanitising");
        for ranks in [4u32, 8] {
            // A run that passes, then one whose rank 1 is killed while the job forms.
            for kill in [None, Some("5")] {
                let mut args = vec![
                    "allreduce".to_string(),
                    "--ranks".into(),
                    ranks.to_string(),
                    "--elements".into(),
                    "20000".into(),
                    "--run-id".into(),
                    user.clone(),
                ];
                if let Some(after) = kill {
                    args.extend(["--kill-rank".into(), "1".into()]);
                    args.extend(["--kill-after-ms".into(), after.into()]);
                }
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let (group, out) = run_as_group(launcher(&args));
                let what = format!("run id {user:?}, {ranks} ranks, kill {kill:?}");
                assert_eq!(
                    out.status.success(),
                    kill.is_none(),
                    "{what}: {}",
                    text(&out)
                );
                if kill.is_some() {
                    assert!(
                        text(&out).contains("rank 1: was killed by signal 9"),
                        "{what}"
                    );
                }
                assert_clean(&what, &run_id, group, &text(&out));
            }
        }
    }
}

#[test]
fn a_stopped_rank_is_named_as_the_culprit_within_2_s_at_4_and_8_ranks() {
    let _one = serial();
    for ranks in [4u32, 8] {
        let run_id = id(&format!("stop{ranks}"));
        let (group, out) = run_as_group(allreduce_job(
            ranks,
            "300000",
            &run_id,
            &["--stop-rank", "2", "--stop-after-ms", "20"],
        ));
        let t = text(&out);
        assert!(!out.status.success(), "{t}");
        assert!(
            t.contains("rank 2: stopped responding"),
            "the stopped rank is named as such: {t}"
        );
        assert!(
            t.contains("the job was given up because rank 2 stopped responding"),
            "{t}"
        );
        for r in (0..ranks).filter(|&r| r != 2) {
            assert!(
                t.contains(&format!(
                    "rank {r}: stopped because rank 2 stopped responding"
                )),
                "rank {r} blames the stopped rank, not a healthy one: {t}"
            );
        }
        let named = millis_after(&t, "rank 2 was named unresponsive ").expect("the figure");
        println!("{ranks} ranks: the stopped rank was named {named:.1} ms after it was stopped");
        assert!(
            named < NAMED_WITHIN.as_secs_f64() * 1e3,
            "named after {named} ms, past the stated bound of {NAMED_WITHIN:?}"
        );
        assert_clean("a stopped rank", &run_id, group, &t);
    }
}

#[test]
fn every_peer_stops_on_its_own_after_the_poison_at_8_ranks() {
    let _one = serial();
    let mut all = Vec::new();
    for trial in 0..4 {
        let run_id = id(&format!("lat{trial}"));
        // Rank 1 is stopped as soon as the job's object appears, so every peer is waiting
        // for it, then killed: the launcher poisons the job in its name, and measures when
        // each peer's process ends after that.
        let (group, out) = run_as_group(allreduce_job(
            8,
            "20000",
            &run_id,
            &[
                "--stop-rank",
                "1",
                "--stop-after-ms",
                "0",
                "--kill-rank",
                "1",
                "--kill-after-ms",
                "400",
            ],
        ));
        let t = text(&out);
        assert!(t.contains("rank 1: was killed by signal 9"), "{t}");
        for r in (0..8).filter(|&r| r != 1) {
            let line = format!("rank {r}: failed (exit code 1) after ");
            let at = t
                .find(&line)
                .unwrap_or_else(|| panic!("rank {r} stops: {t}"));
            let rest = &t[at..];
            let ms = millis_after(rest, "ms, ").expect("a figure after the poison");
            all.push(ms);
            assert!(
                t.contains(&format!("rank {r}: stopped because rank 1 died")),
                "rank {r} names rank 1: {t}"
            );
        }
        assert_clean("poison latency", &run_id, group, &t);
    }
    all.sort_by(f64::total_cmp);
    let (median, max) = (all[all.len() / 2], all[all.len() - 1]);
    println!(
        "8 ranks, {} peer stops: median {median:.1} ms, max {max:.1} ms after the poison",
        all.len()
    );
    // On its own: before the launcher's grace (2 s by default) runs out and it stops the
    // peers itself. How fast is a figure for the record (`docs/ranks-and-transport.md`'s),
    // not a bound a loaded machine could break: one run at load 20 measured 592 ms.
    assert!(max < 2_000.0, "a peer took {max} ms to stop: {all:?}");
}

#[test]
fn under_mpirun_jobs_pass_and_a_killed_rank_leaves_nothing() {
    let _one = serial();
    let Ok(found) = Command::new("mpirun").arg("--version").output() else {
        println!("skipped: mpirun not found (apt-get install openmpi-bin; .ci/run installs it)");
        return;
    };
    if !found.status.success() {
        println!("skipped: mpirun --version failed: {}", text(&found));
        return;
    }
    let mpirun = |ranks: u32, run_id: &str, elements: &str| {
        let mut c = Command::new("mpirun");
        // As root Open MPI needs --allow-run-as-root; past the core count, --oversubscribe.
        c.args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            &ranks.to_string(),
        ])
        .args(["-x", &format!("PTO_RUN_ID={run_id}")])
        .arg(env!("CARGO_BIN_EXE_pto-launch"))
        .args(["allreduce", "--elements", elements, "--timeout-s", "20"])
        .env_remove("PTO_RANK")
        .env_remove("PTO_RANKS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
        c
    };
    for ranks in [4u32, 8] {
        let run_id = id(&format!("mpi{ranks}"));
        let (group, out) = run_as_group(mpirun(ranks, &run_id, "1000"));
        assert!(out.status.success(), "{ranks} ranks: {}", text(&out));
        for r in 0..ranks {
            assert!(
                text(&out).contains(&format!("rank {r}/{ranks}: sum of 1000 elements checked")),
                "{}",
                text(&out)
            );
        }
        assert_clean("under mpirun", &run_id, group, &text(&out));
        // Rank 1 killed once every rank mapped the object.
        let run_id = id(&format!("mpik{ranks}"));
        let child = mpirun(ranks, &run_id, "300000")
            .spawn()
            .expect("mpirun starts");
        let group = child.id();
        let start = Instant::now();
        let ranks_of_job = || -> Vec<u32> {
            processes()
                .into_iter()
                .filter(|&(p, ..)| maps(p, &run_id))
                .map(|(p, ..)| p)
                .collect()
        };
        let mut seen = ranks_of_job();
        while seen.len() < ranks as usize && start.elapsed() < BOUND {
            std::thread::sleep(Duration::from_micros(200));
            seen = ranks_of_job();
        }
        let victim = seen.iter().copied().find(|&p| {
            std::fs::read(format!("/proc/{p}/environ"))
                .is_ok_and(|e| e.split(|&b| b == 0).any(|v| v == b"OMPI_COMM_WORLD_RANK=1"))
        });
        if let Some(v) = victim {
            let _ = rustix::process::kill_process(pid(v), Signal::KILL);
        }
        let out = finish(child);
        assert!(!out.status.success(), "{}", text(&out));
        let left: Vec<u32> = processes()
            .into_iter()
            .filter(|&(p, state, ..)| !matches!(state, 'Z' | 'X') && maps(p, &run_id))
            .map(|(p, ..)| p)
            .collect();
        assert!(left.is_empty(), "ranks {left:?} left: {}", text(&out));
        assert_clean("a rank killed under mpirun", &run_id, group, &text(&out));
    }
}

#[test]
fn at_8_ranks_no_rank_waits_for_a_job_given_up_while_it_formed() {
    let _one = serial();
    // Rank 1 killed while the job forms (rank 0 is still reserving 512 MiB, or the others
    // are still joining): once the job is given up, no rank may be left waiting for an
    // object whose name is gone until the launcher's grace runs out (10 s here).
    for after_ms in ["0", "20", "40", "60", "90"] {
        let run_id = id(&format!("form{after_ms}"));
        let (group, out) = run_as_group(allreduce_job(
            8,
            "1000000",
            &run_id,
            &[
                "--grace-ms",
                "10000",
                "--kill-rank",
                "1",
                "--kill-after-ms",
                after_ms,
            ],
        ));
        let t = text(&out);
        assert!(t.contains("rank 1: was killed by signal 9"), "{t}");
        assert!(
            !t.contains("another rank had failed and it had not"),
            "a rank waited out the grace: {t}"
        );
        for r in (0..8).filter(|&r| r != 1) {
            let named = t.contains(&format!("rank {r}: stopped because rank 1 died"));
            let not_joined = t.contains(&format!("rank {r}: was stopped by the launcher: the job"));
            let passed = t.contains(&format!("rank {r}: passed"));
            assert!(named || not_joined || passed, "rank {r}: {t}");
        }
        assert_clean("killed while forming", &run_id, group, &t);
    }
}
