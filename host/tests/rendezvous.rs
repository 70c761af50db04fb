//! `pto-launch allreduce` forming its job over TCP: ranks it spawns, ranks started the way
//! torchrun starts them, ranks in separate network namespaces (when root), and bad
//! rendezvous addresses.

use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_pto-launch");

/// `pto-launch` with no launcher variables inherited.
fn command(prefix: &[&str]) -> Command {
    let mut c = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(BIN);
            c
        }
        None => Command::new(BIN),
    };
    for v in [
        "PTO_RANK",
        "PTO_RANKS",
        "PTO_RUN_ID",
        "RANK",
        "WORLD_SIZE",
        "MASTER_ADDR",
        "MASTER_PORT",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "PMI_RANK",
        "PMI_SIZE",
        "SLURM_PROCID",
        "SLURM_NTASKS",
        "SLURM_JOB_ID",
        "PTO_JOB_SECRET",
        "PTO_REQUIRE_SECRET",
    ] {
        c.env_remove(v);
    }
    c
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits for every child, bounded; kills the rest past the limit.
fn wait_all(children: Vec<Child>) -> Vec<Output> {
    let start = Instant::now();
    let mut children: Vec<Option<Child>> = children.into_iter().map(Some).collect();
    loop {
        let running = children
            .iter_mut()
            .flatten()
            .any(|c| c.try_wait().ok().flatten().is_none());
        if !running {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            for c in children.iter_mut().flatten() {
                let _ = c.kill();
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    children
        .iter_mut()
        .map(|c| c.take().unwrap().wait_with_output().unwrap())
        .collect()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn assert_ranks_passed(outs: &[Output], ranks: usize) {
    for (r, o) in outs.iter().enumerate() {
        assert!(o.status.success(), "rank {r}: {}", text(o));
        assert!(
            text(o).contains(&format!("rank {r}/{ranks}: sum of")),
            "rank {r}: {}",
            text(o)
        );
    }
}

#[test]
fn spawned_ranks_form_the_job_over_tcp() {
    let id = format!("rdzv-spawn-{}", std::process::id());
    let out = command(&[])
        .args([
            "allreduce",
            "--ranks",
            "3",
            "--elements",
            "1000",
            "--run-id",
            &id,
            "--rendezvous",
            "tcp://127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("every rank passed"), "{}", text(&out));
    let left: Vec<_> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(&id))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn ranks_started_like_torchrun_meet_at_master_addr() {
    let port = free_port().to_string();
    let children = torchrun_style(&port, |c| c);
    assert_ranks_passed(&wait_all(children), 3);
}

/// Three allreduce ranks started as torchrun starts them (`RANK`, `WORLD_SIZE`,
/// `MASTER_ADDR`, `MASTER_PORT` = `port`), each command first given to `more`.
fn torchrun_style(port: &str, more: impl Fn(&mut Command) -> &mut Command) -> Vec<Child> {
    (0..3)
        .map(|r| {
            let mut c = command(&[]);
            c.args(["allreduce", "--elements", "500", "--timeout-s", "20"])
                .env("RANK", r.to_string())
                .env("WORLD_SIZE", "3")
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", port)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            more(&mut c).spawn().unwrap()
        })
        .collect()
}

#[test]
fn bad_rendezvous_addresses_are_clear_errors() {
    let out = command(&[])
        .args(["allreduce", "--ranks", "2", "--rendezvous", "http://x:1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("use tcp://HOST:PORT"), "{}", text(&out));

    // Rank 0's port is taken.
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = format!("tcp://{}", held.local_addr().unwrap());
    let out = command(&[])
        .args(["allreduce", "--rendezvous", &at, "--timeout-s", "2"])
        .env("PTO_RANK", "0")
        .env("PTO_RANKS", "2")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out).contains("another process holds the port"),
        "{}",
        text(&out)
    );

    // Nobody at the rendezvous: a bounded timeout naming it.
    let port = free_port();
    let start = Instant::now();
    let out = command(&[])
        .args([
            "allreduce",
            "--rendezvous",
            &format!("tcp://127.0.0.1:{port}"),
            "--timeout-s",
            "1",
        ])
        .env("PTO_RANK", "1")
        .env("PTO_RANKS", "2")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out).contains(&format!("127.0.0.1:{port}")),
        "{}",
        text(&out)
    );
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn ranks_started_like_torchrun_with_an_exported_secret_form_the_job() {
    let port = free_port().to_string();
    let secret = "00112233445566778899aabbccddeeff";
    let children = torchrun_style(&port, |c| {
        c.arg("--require-secret")
            .env("PTO_JOB_SECRET", secret)
            .env("RUST_LOG", "warn")
    });
    let outs = wait_all(children);
    assert_ranks_passed(&outs, 3);
    assert!(
        outs.iter().all(|o| !text(o).contains("unauthenticated")),
        "a rank with the secret warned"
    );
}

#[test]
fn a_rank_without_a_secret_warns_once_or_fails_when_one_is_required() {
    let port = free_port();
    let at = format!("tcp://127.0.0.1:{port}");
    for require in [
        &["--require-secret"][..],
        &[][..], // with PTO_REQUIRE_SECRET=1 below
    ] {
        let out = command(&[])
            .args(["allreduce", "--rendezvous", &at, "--timeout-s", "1"])
            .args(require)
            .env(
                "PTO_REQUIRE_SECRET",
                if require.is_empty() { "1" } else { "0" },
            )
            .env("PTO_RANK", "1")
            .env("PTO_RANKS", "2")
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(text(&out).contains("no job secret"), "{}", text(&out));
    }
    // Not required: it runs (and here times out, nobody being at the address), warning once.
    let out = command(&[])
        .args(["allreduce", "--rendezvous", &at, "--timeout-s", "1"])
        .env("RUST_LOG", "warn")
        .env("PTO_RANK", "1")
        .env("PTO_RANKS", "2")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(
        text(&out).matches("unauthenticated").count(),
        1,
        "{}",
        text(&out)
    );
}

#[test]
fn a_secret_file_others_can_read_is_refused_and_an_owner_only_one_is_used() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("pto-rdzv-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("job.secret");
    let secret = "ffeeddccbbaa99887766554433221100";
    std::fs::write(&file, format!("{secret}\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let args = |f: &std::path::Path| {
        let mut c = command(&[]);
        c.args(["allreduce", "--ranks", "3", "--elements", "200000"])
            .args(["--rendezvous", "tcp://127.0.0.1:0", "--secret-file"])
            .arg(f);
        c
    };
    let out = args(&file).output().unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("chmod 600"), "{}", text(&out));

    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut launcher = args(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While the job runs, every rank it spawned holds the secret in its environment and
    // nowhere on its command line.
    let (mut seen, mut leaked) = (Vec::new(), Vec::new());
    while launcher.try_wait().unwrap().is_none() {
        for (pid, cmdline, environ) in children_of(launcher.id()) {
            if environ.contains(&format!("PTO_JOB_SECRET={secret}")) && !seen.contains(&pid) {
                seen.push(pid);
            }
            if cmdline.contains(secret) {
                leaked.push(cmdline);
            }
        }
    }
    let out = launcher.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        leaked.is_empty(),
        "the secret on a command line: {leaked:?}"
    );
    assert!(!seen.is_empty(), "no rank was seen running with the secret");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The processes whose parent is `parent`: pid, command line and environment, with NULs as
/// spaces (a process that ended meanwhile is skipped).
fn children_of(parent: u32) -> Vec<(u32, String, String)> {
    let read = |pid: u32, what: &str| {
        std::fs::read(format!("/proc/{pid}/{what}"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .ok()
    };
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        // The parent is the 4th field of stat, after the command name in parentheses.
        let Some(stat) = read(pid, "stat") else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid != Some(parent) {
            continue;
        }
        if let (Some(c), Some(env)) = (read(pid, "cmdline"), read(pid, "environ")) {
            out.push((pid, c, env));
        }
    }
    out
}

/// Two network namespaces joined by a veth pair, removed on drop.
struct Namespaces {
    names: [String; 2],
}

impl Namespaces {
    /// Sets them up, or says why it cannot.
    fn new(tag: &str) -> Result<Self, String> {
        // Root is needed for `ip netns`: read the effective user id.
        let uid = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("Uid:"))
                    .and_then(|l| l.split_whitespace().nth(2).map(str::to_string))
            })
            .unwrap_or_default();
        if uid != "0" {
            return Err(format!("not root (effective uid {uid:?})"));
        }
        if Command::new("ip").arg("-V").output().is_err() {
            return Err("iproute2 (`ip`) is not installed".into());
        }
        let ns = Namespaces {
            names: [format!("pto{tag}a"), format!("pto{tag}b")],
        };
        let [a, b] = &ns.names;
        let (va, vb) = (format!("v{tag}a"), format!("v{tag}b"));
        let steps: Vec<Vec<&str>> = vec![
            vec!["netns", "add", a],
            vec!["netns", "add", b],
            vec!["link", "add", &va, "type", "veth", "peer", "name", &vb],
            vec!["link", "set", &va, "netns", a],
            vec!["link", "set", &vb, "netns", b],
            vec!["-n", a, "addr", "add", "10.231.7.1/24", "dev", &va],
            vec!["-n", b, "addr", "add", "10.231.7.2/24", "dev", &vb],
            vec!["-n", a, "link", "set", &va, "up"],
            vec!["-n", b, "link", "set", &vb, "up"],
            vec!["-n", a, "link", "set", "lo", "up"],
            vec!["-n", b, "link", "set", "lo", "up"],
        ];
        for s in steps {
            let out = Command::new("ip")
                .args(&s)
                .output()
                .map_err(|e| e.to_string())?;
            if !out.status.success() {
                // `ns` drops here and removes what was made.
                return Err(format!(
                    "`ip {}` failed: {}",
                    s.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
        Ok(ns)
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end in it, and with it the pair.
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

#[test]
fn ranks_in_separate_network_namespaces_form_the_job() {
    let tag = format!("{}", std::process::id() % 100_000);
    let ns = match Namespaces::new(&tag) {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("SKIPPED ranks_in_separate_network_namespaces_form_the_job: {why}");
            return;
        }
    };
    // Rank 0 in the first namespace, ranks 1 and 2 in the second: they reach rank 0 only
    // over the veth pair.
    let at = "tcp://10.231.7.1:29517";
    let id = format!("netns-{tag}");
    let children: Vec<Child> = (0..3)
        .map(|r| {
            let n = &ns.names[(r > 0) as usize];
            command(&["ip", "netns", "exec", n])
                .args(["allreduce", "--elements", "500", "--timeout-s", "20"])
                .args(["--rendezvous", at, "--run-id", &id])
                .env("PTO_RANK", r.to_string())
                .env("PTO_RANKS", "3")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs = wait_all(children);
    assert_ranks_passed(&outs, 3);
    drop(ns);
}
