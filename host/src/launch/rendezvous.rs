//! Forming a job over TCP before anything else: where rank 0 listens (`--rendezvous
//! tcp://HOST:PORT`, or torchrun's `MASTER_ADDR`/`MASTER_PORT`), which host every rank runs
//! on, and a name for the job's shared objects that rank 0 makes unique and every rank
//! learns from it.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use crate::transport::bootstrap::{Bootstrap, BootstrapError};
use crate::transport::secret::JobSecret;
use crate::transport::tcp::TcpTransport;
use crate::transport::wire::MAX_RUN_ID;
use crate::transport::{ErrorKind, TransportError};

/// Why a job could not form over TCP.
#[derive(Debug, thiserror::Error)]
pub enum RendezvousError {
    /// A rendezvous that is not `tcp://HOST:PORT`, or a host that does not resolve.
    #[error("rendezvous {given:?}: {why}")]
    Address {
        /// What was given.
        given: String,
        /// What is wrong with it.
        why: String,
    },
    /// The bootstrap failed.
    #[error("{0}")]
    Bootstrap(#[from] BootstrapError),
    /// A peer sent a record this rank cannot read.
    #[error("rank {rank} sent an unreadable {what}")]
    BadRecord {
        /// The rank.
        rank: usize,
        /// The record.
        what: &'static str,
    },
}

/// Where rank 0 listens: `tcp://HOST:PORT`, resolved (the first address).
pub fn parse_rendezvous(s: &str) -> Result<SocketAddr, RendezvousError> {
    let bad = |why: &str| RendezvousError::Address {
        given: s.to_string(),
        why: why.to_string(),
    };
    let rest = s
        .strip_prefix("tcp://")
        .ok_or_else(|| bad("use tcp://HOST:PORT"))?;
    let mut addrs = rest
        .to_socket_addrs()
        .map_err(|e| bad(&format!("cannot resolve: {e}")))?;
    addrs.next().ok_or_else(|| bad("resolves to no address"))
}

/// The rendezvous from torchrun's `MASTER_ADDR` and `MASTER_PORT`.
pub fn master_rendezvous(host: &str, port: u16) -> Result<SocketAddr, RendezvousError> {
    parse_rendezvous(&format!("tcp://{host}:{port}"))
}

/// What identifies this machine: its host name and boot id (two containers of one kernel
/// share /dev/shm only if they share the boot id and the host name).
pub fn host_id() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    format!(
        "{}/{}",
        read("/proc/sys/kernel/hostname"),
        read("/proc/sys/kernel/random/boot_id")
    )
}

/// The run id as hellos carry it: itself when it fits the wire's 64 bytes, else a prefix
/// and a hash of the whole (every rank derives the same).
pub fn wire_run_id(run_id: &str) -> String {
    if run_id.len() <= MAX_RUN_ID {
        return run_id.to_string();
    }
    // FNV-1a, 64 bits.
    let hash = run_id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    let mut prefix: String = run_id.chars().take(MAX_RUN_ID - 17).collect();
    while prefix.len() > MAX_RUN_ID - 17 {
        prefix.pop();
    }
    format!("{prefix}-{hash:016x}")
}

/// A job formed over TCP.
pub struct FormedJob {
    /// The bootstrap, kept for the control-plane barrier at the end.
    pub bootstrap: Bootstrap<TcpTransport>,
    /// The name rank 0 chose for the job's shared objects.
    pub shm_name: String,
    /// Each rank's host id, in rank order.
    pub hosts: Vec<String>,
}

impl FormedJob {
    /// The distinct hosts, in order of their first rank.
    pub fn distinct_hosts(&self) -> Vec<&str> {
        let mut seen: Vec<&str> = Vec::new();
        for h in &self.hosts {
            if !seen.contains(&h.as_str()) {
                seen.push(h);
            }
        }
        seen
    }
}

/// Forms job `run_id` of `ranks` ranks at `at`: bootstraps (every hello proving `secret`
/// when given), gathers every rank's host, and takes rank 0's name for the shared objects
/// (`run_id` plus rank 0's process id and clock, so that two runs at one address never meet
/// in /dev/shm).
pub fn form_job(
    rank: u32,
    ranks: u32,
    run_id: &str,
    at: SocketAddr,
    timeout: Duration,
    secret: Option<JobSecret>,
) -> Result<FormedJob, RendezvousError> {
    let wire_id = wire_run_id(run_id);
    let joined = Bootstrap::tcp_with_secret(rank, ranks, &wire_id, at, None, timeout, secret);
    let mut b = joined.map_err(|e| match e {
        BootstrapError::Transport(TransportError {
            kind: ErrorKind::Io(std::io::ErrorKind::AddrInUse),
            detail,
            ..
        }) => RendezvousError::Address {
            given: format!("tcp://{at}"),
            why: format!(
                "{detail}; another process holds the port (under torchrun the elastic \
                 agent's store holds MASTER_PORT: pass --rendezvous with another port)"
            ),
        },
        e => e.into(),
    })?;
    let hosts = b
        .allgather(host_id().as_bytes())?
        .into_iter()
        .enumerate()
        .map(|(rank, h)| {
            String::from_utf8(h).map_err(|_| RendezvousError::BadRecord {
                rank,
                what: "host id",
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mine = format!(
        "{run_id}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    let name = b.broadcast(mine.as_bytes())?;
    let shm_name = String::from_utf8(name).map_err(|_| RendezvousError::BadRecord {
        rank: 0,
        what: "job name",
    })?;
    Ok(FormedJob {
        bootstrap: b,
        shm_name,
        hosts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendezvous_addresses_parse_or_say_why_not() {
        assert_eq!(
            parse_rendezvous("tcp://127.0.0.1:29500").unwrap(),
            "127.0.0.1:29500".parse().unwrap()
        );
        assert!(parse_rendezvous("tcp://localhost:1").is_ok());
        assert_eq!(
            parse_rendezvous("tcp://[::1]:7").unwrap(),
            "[::1]:7".parse().unwrap()
        );
        for bad in [
            "127.0.0.1:1",
            "udp://127.0.0.1:1",
            "tcp://127.0.0.1",
            "tcp://no.such.host.invalid:1",
        ] {
            let e = parse_rendezvous(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
        assert!(!host_id().is_empty());
        let long = "x".repeat(100);
        assert_eq!(wire_run_id("short"), "short");
        assert_eq!(wire_run_id(&long).len(), MAX_RUN_ID);
        assert_ne!(wire_run_id(&long), wire_run_id(&"x".repeat(101)));
    }
}
