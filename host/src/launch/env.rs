//! Which rank this process is, when an existing launcher (mpirun, a PMI launcher, Slurm,
//! torchrun) started it: read from that launcher's environment variables.

use pto_runtime_core::MAX_RANKS;

use crate::comm::sanitize_run_id;

/// The launcher whose convention named the rank.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Launcher {
    /// `pto-launch` itself, for the ranks it spawns: `PTO_RANK`, `PTO_RANKS`.
    PtoLaunch,
    /// Open MPI's `mpirun`: `OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`.
    Mpirun,
    /// A PMI launcher (MPICH's `mpiexec`, Hydra): `PMI_RANK`, `PMI_SIZE`.
    Pmi,
    /// Slurm's `srun`: `SLURM_PROCID`, `SLURM_NTASKS`.
    Slurm,
    /// PyTorch's `torchrun`: `RANK`, `WORLD_SIZE` (and `MASTER_ADDR`, `MASTER_PORT`).
    Torchrun,
}

impl Launcher {
    /// The variables naming the rank and the rank count, in this convention.
    pub fn variables(self) -> (&'static str, &'static str) {
        match self {
            Launcher::PtoLaunch => ("PTO_RANK", "PTO_RANKS"),
            Launcher::Mpirun => ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
            Launcher::Pmi => ("PMI_RANK", "PMI_SIZE"),
            Launcher::Slurm => ("SLURM_PROCID", "SLURM_NTASKS"),
            Launcher::Torchrun => ("RANK", "WORLD_SIZE"),
        }
    }

    /// Every convention, in the order they are looked for.
    pub const ALL: [Launcher; 5] = [
        Launcher::PtoLaunch,
        Launcher::Mpirun,
        Launcher::Pmi,
        Launcher::Slurm,
        Launcher::Torchrun,
    ];
}

/// This process's place in a job started by another launcher.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RankEnv {
    /// The convention it came from.
    pub launcher: Launcher,
    /// This rank, `0..ranks`.
    pub rank: u32,
    /// Ranks in the job.
    pub ranks: u32,
    /// Rendezvous host and port, when the launcher gives them (torchrun).
    pub master: Option<(String, u16)>,
}

/// An environment that names a rank, but not usably.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum EnvError {
    /// One variable of a pair is set, the other is not.
    #[error("{set} is set but {missing} is not: a launcher sets both")]
    Incomplete {
        /// The variable that is set.
        set: &'static str,
        /// The one that is missing.
        missing: &'static str,
    },
    /// A variable that is not a number.
    #[error("{var}={value:?} is not a number")]
    NotANumber {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// A rank count of 0 or above the limit.
    #[error("{var}={ranks}: a job has 1 to {MAX_RANKS} ranks")]
    RankCount {
        /// The variable.
        var: &'static str,
        /// Its value.
        ranks: u32,
    },
    /// A rank at or past the rank count.
    #[error("{var}={rank} but the job has {ranks} ranks")]
    RankOutOfRange {
        /// The variable.
        var: &'static str,
        /// The rank.
        rank: u32,
        /// The rank count.
        ranks: u32,
    },
    /// `MASTER_PORT` that is not a port.
    #[error("MASTER_PORT={0:?} is not a port number")]
    BadPort(String),
}

/// The rank this process has under the first launcher convention whose variables are set
/// (pto-launch, mpirun, PMI, Slurm, torchrun), or `None` when none is: the process then launches ranks
/// itself. `var` reads a variable (`std::env::var` in `pto-launch`, a map in tests).
pub fn rank_from_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<RankEnv>, EnvError> {
    for launcher in Launcher::ALL {
        let (rank_var, size_var) = launcher.variables();
        let (rank, size) = match (var(rank_var), var(size_var)) {
            (None, None) => continue,
            (Some(_), None) => {
                return Err(EnvError::Incomplete {
                    set: rank_var,
                    missing: size_var,
                });
            }
            (None, Some(_)) => {
                return Err(EnvError::Incomplete {
                    set: size_var,
                    missing: rank_var,
                });
            }
            (Some(r), Some(s)) => (number(rank_var, &r)?, number(size_var, &s)?),
        };
        if size == 0 || size as usize > MAX_RANKS {
            return Err(EnvError::RankCount {
                var: size_var,
                ranks: size,
            });
        }
        if rank >= size {
            return Err(EnvError::RankOutOfRange {
                var: rank_var,
                rank,
                ranks: size,
            });
        }
        let master = match (var("MASTER_ADDR"), var("MASTER_PORT")) {
            (Some(addr), Some(port)) if launcher == Launcher::Torchrun => Some((
                addr,
                port.trim().parse().map_err(|_| EnvError::BadPort(port))?,
            )),
            _ => None,
        };
        return Ok(Some(RankEnv {
            launcher,
            rank,
            ranks: size,
            master,
        }));
    }
    Ok(None)
}

/// A name every rank of the job derives alike from its launcher's environment, to name the
/// job's shared objects: `PTO_RUN_ID`, else Slurm's job and step, Open MPI's job id,
/// torchrun's run id or its rendezvous address. `None` when no variable names the job.
pub fn job_id_from_env(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    // The one sanitiser the launcher uses too: every rank and the launcher mean one object.
    let clean = |s: String| sanitize_run_id(&s).ok();
    if let Some(id) = var("PTO_RUN_ID") {
        return clean(id);
    }
    if let Some(job) = var("SLURM_JOB_ID") {
        let step = var("SLURM_STEP_ID").unwrap_or_default();
        return clean(format!("slurm-{job}-{step}"));
    }
    if let Some(job) = var("OMPI_MCA_ess_base_jobid") {
        return clean(format!("ompi-{job}"));
    }
    if let Some(run) = var("TORCHELASTIC_RUN_ID") {
        return clean(format!("torch-{run}"));
    }
    match (var("MASTER_ADDR"), var("MASTER_PORT")) {
        (Some(a), Some(p)) => clean(format!("torch-{a}-{p}")),
        _ => None,
    }
}

fn number(var: &'static str, value: &str) -> Result<u32, EnvError> {
    value.trim().parse().map_err(|_| EnvError::NotANumber {
        var,
        value: value.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn each_launcher_convention_names_the_rank() {
        for launcher in Launcher::ALL {
            let (r, s) = launcher.variables();
            let got = rank_from_env(env(&[(r, "2"), (s, "4")])).unwrap().unwrap();
            assert_eq!((got.launcher, got.rank, got.ranks), (launcher, 2, 4));
        }
        assert_eq!(
            rank_from_env(env(&[])),
            Ok(None),
            "no launcher: launch ranks ourselves"
        );
    }

    #[test]
    fn torchrun_brings_its_rendezvous_address() {
        let got = rank_from_env(env(&[
            ("RANK", "0"),
            ("WORLD_SIZE", "2"),
            ("MASTER_ADDR", "10.0.0.1"),
            ("MASTER_PORT", "29500"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(got.master, Some(("10.0.0.1".to_string(), 29500)));
        let bad = rank_from_env(env(&[
            ("RANK", "0"),
            ("WORLD_SIZE", "2"),
            ("MASTER_ADDR", "h"),
            ("MASTER_PORT", "http"),
        ]));
        assert_eq!(bad, Err(EnvError::BadPort("http".into())));
    }

    #[test]
    fn the_first_convention_set_wins() {
        let got = rank_from_env(env(&[
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "2"),
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "8"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((got.launcher, got.rank), (Launcher::Mpirun, 3));
    }

    #[test]
    fn every_rank_of_a_job_derives_the_same_job_id() {
        assert_eq!(
            job_id_from_env(env(&[("SLURM_JOB_ID", "77"), ("SLURM_STEP_ID", "0")])),
            Some("slurm-77-0".into())
        );
        assert_eq!(
            job_id_from_env(env(&[("OMPI_MCA_ess_base_jobid", "123:4")])),
            Some("ompi-123_4".into())
        );
        assert_eq!(
            job_id_from_env(env(&[
                ("MASTER_ADDR", "10.0.0.1"),
                ("MASTER_PORT", "29500")
            ])),
            Some("torch-10_0_0_1-29500".into())
        );
        assert_eq!(
            job_id_from_env(env(&[("PTO_RUN_ID", "mine"), ("SLURM_JOB_ID", "1")])),
            Some("mine".into())
        );
        assert_eq!(job_id_from_env(env(&[])), None);
    }

    #[test]
    fn bad_environments_are_errors_that_name_the_variable() {
        let e = rank_from_env(env(&[("PMI_RANK", "0")])).unwrap_err();
        assert_eq!(
            e,
            EnvError::Incomplete {
                set: "PMI_RANK",
                missing: "PMI_SIZE"
            }
        );
        let e = rank_from_env(env(&[("RANK", "x"), ("WORLD_SIZE", "2")])).unwrap_err();
        assert!(e.to_string().contains("RANK=\"x\""), "{e}");
        let e = rank_from_env(env(&[("RANK", "2"), ("WORLD_SIZE", "2")])).unwrap_err();
        assert!(e.to_string().contains("has 2 ranks"), "{e}");
        for size in ["0", "65"] {
            let e = rank_from_env(env(&[("RANK", "0"), ("WORLD_SIZE", size)])).unwrap_err();
            assert!(matches!(e, EnvError::RankCount { .. }), "{e}");
        }
    }
}
