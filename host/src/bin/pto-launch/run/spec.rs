//! What `pto-launch run`'s flags name, read into a [`RunSpec`]: the orchestration SO, the
//! kernels (a directory's `*.bin` in name order, or a comma-separated list), the buffers and
//! the orchestration's arguments; and the buffers written back after the run.

use std::path::{Path, PathBuf};

use pto_host::orch_config::{Capacities, RunCapacities, resolve};
use pto_host::program::{BufferSpec, OrchArg, RunSpec};
use pto_host::program_ranks::RankWindows;

use super::RunArgs;
use crate::error::CliError;
use crate::numbers::bits64;

pub fn bad(why: String) -> CliError {
    CliError::Run(why)
}

fn read(what: &str, path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|e| bad(format!("cannot read {what} {}: {e}", path.display())))
}

/// The kernel files, in id order.
pub fn kernel_files(spec: &str) -> Result<Vec<PathBuf>, CliError> {
    let dir = Path::new(spec);
    if dir.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| bad(format!("cannot list {}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(bad(format!("{} holds no *.bin kernel", dir.display())));
        }
        return Ok(files);
    }
    Ok(spec
        .split(',')
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect())
}

/// A kernel's name: its file's stem.
pub fn kernel_name(path: &Path) -> String {
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

fn orch_arg(s: &str, windows: Option<&RankWindows>) -> Result<OrchArg, CliError> {
    let num = |v: &str| {
        bits64(v).map_err(|e| {
            bad(format!(
                "--arg {s:?}: want a number, buffer:N, kernel:N, rank, ranks, window, \
                 window:R, window:+K or window-bytes ({e})"
            ))
        })
    };
    let ranked = |what: &dyn Fn(&RankWindows) -> Option<u64>| {
        let w = windows.ok_or_else(|| {
            bad(format!(
                "--arg {s}: names the job's ranks, and this run has one (give --ranks)"
            ))
        })?;
        what(w).map(OrchArg::Value).ok_or_else(|| {
            bad(format!(
                "--arg {s}: the job has {} ranks",
                w.addresses.len()
            ))
        })
    };
    Ok(match s {
        "rank" => ranked(&|w| Some(u64::from(w.rank)))?,
        "ranks" => ranked(&|w| Some(w.addresses.len() as u64))?,
        "window" => ranked(&|w| Some(w.local()))?,
        "window-bytes" => ranked(&|w| Some(w.bytes))?,
        _ => {
            // An index counts from 0: a negative one is refused, not wrapped.
            let index = |v: &str| match v.starts_with('-') {
                true => Err(bad(format!(
                    "--arg {s}: {v} is negative; indices count from 0"
                ))),
                false => num(v),
            };
            if let Some(n) = s.strip_prefix("buffer:") {
                OrchArg::Buffer(usize::try_from(index(n)?).unwrap_or(usize::MAX))
            } else if let Some(n) = s.strip_prefix("kernel:") {
                OrchArg::Kernel(usize::try_from(index(n)?).unwrap_or(usize::MAX))
            } else if let Some(k) = s.strip_prefix("window:+") {
                // K ranks on, around the ring.
                let k = index(k)?;
                ranked(&|w| {
                    let n = w.addresses.len() as u64;
                    w.window(((u64::from(w.rank) + k % n) % n) as u32)
                })?
            } else if let Some(r) = s.strip_prefix("window:") {
                let r = u32::try_from(index(r)?).unwrap_or(u32::MAX);
                ranked(&|w| w.window(r))?
            } else {
                OrchArg::Value(num(s)?)
            }
        }
    })
}

fn buffer(s: &str) -> Result<BufferSpec, CliError> {
    let (bytes, file) = match s.split_once('=') {
        Some((b, f)) => (b, Some(f)),
        None => (s, None),
    };
    let bytes: usize = bytes.parse().ok().filter(|&b| b > 0).ok_or_else(|| {
        bad(format!(
            "--buffer {s:?}: want BYTES or BYTES=FILE, BYTES > 0"
        ))
    })?;
    let init = match file {
        Some(f) => read("the buffer's contents", Path::new(f))?,
        None => Vec::new(),
    };
    Ok(BufferSpec { bytes, init })
}

/// The kernels' names: their files' stems, in id order.
pub fn kernel_names(a: &RunArgs) -> Result<Vec<String>, CliError> {
    Ok(kernel_files(&a.kernels)?
        .iter()
        .map(|p| kernel_name(p))
        .collect())
}

/// The run the flags describe (checked), for a rank with `windows` if any.
pub fn spec(a: &RunArgs, records: u32, windows: Option<&RankWindows>) -> Result<RunSpec, CliError> {
    let files = kernel_files(&a.kernels)?;
    let kernels = files
        .iter()
        .map(|p| read("the kernel", p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut spec = RunSpec::new(read("the orchestration SO", &a.orchestration)?, kernels);
    spec.buffers = a
        .buffers
        .iter()
        .map(|b| buffer(b))
        .collect::<Result<_, _>>()?;
    spec.args = a
        .args
        .iter()
        .map(|s| orch_arg(s, windows))
        .collect::<Result<_, _>>()?;
    spec.capacities = given(a);
    spec.records = records;
    spec.check().map_err(bad)?;
    Ok(spec)
}

/// The capacities the flags give (the rest come from the SO or the defaults).
fn given(a: &RunArgs) -> Capacities {
    Capacities {
        max_deps: a.max_deps,
        max_tensors: a.max_tensors,
        max_args: a.max_args,
        task_window: a.task_window,
        heap_bytes: a.heap_bytes,
    }
}

/// The run's capacities: each from its flag, else the orchestration SO's declaration, else
/// the default; a malformed declaration is refused naming the SO's file and the field.
pub fn capacities(a: &RunArgs) -> Result<RunCapacities, CliError> {
    let so = read("the orchestration SO", &a.orchestration)?;
    resolve(&given(a), &so).map_err(|e| bad(format!("{}: {e}", a.orchestration.display())))
}

/// Writes each buffer to `DIR/buffer_<n>.bin` (`DIR/rank_<r>/...` for rank `r` of a job);
/// the files written.
pub fn write_outputs(
    a: &RunArgs,
    rank: Option<u32>,
    buffers: &[Vec<u8>],
) -> Result<Vec<PathBuf>, CliError> {
    let Some(dir) = &a.output else {
        return Ok(Vec::new());
    };
    let dir = match rank {
        Some(r) => dir.join(format!("rank_{r}")),
        None => dir.clone(),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| bad(format!("cannot make {}: {e}", dir.display())))?;
    let mut outputs = Vec::new();
    for (i, b) in buffers.iter().enumerate() {
        let p = dir.join(format!("buffer_{i}.bin"));
        std::fs::write(&p, b).map_err(|e| bad(format!("cannot write {}: {e}", p.display())))?;
        outputs.push(p);
    }
    Ok(outputs)
}

/// Where `--trace` goes: the path given, or for rank `r` of a job the same with `.rank<r>`
/// before its extension.
pub fn trace_path(a: &RunArgs, rank: Option<u32>) -> Option<PathBuf> {
    let path = a.trace.clone()?;
    let Some(r) = rank else {
        return Some(path);
    };
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = match path.extension() {
        Some(ext) => format!("{stem}.rank{r}.{}", ext.to_string_lossy()),
        None => format!("{stem}.rank{r}"),
    };
    Some(path.with_file_name(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows() -> RankWindows {
        RankWindows {
            rank: 2,
            bytes: 4096,
            addresses: vec![0x1000, 0x2000, 0x3000],
        }
    }

    #[test]
    fn rank_arguments_name_windows_around_the_ring_and_need_ranks() {
        let w = windows();
        let value = |s: &str| match orch_arg(s, Some(&w)) {
            Ok(OrchArg::Value(v)) => v,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(value("rank"), 2);
        assert_eq!(value("ranks"), 3);
        assert_eq!(value("window"), 0x3000);
        assert_eq!(value("window:0"), 0x1000);
        assert_eq!(value("window:+1"), 0x1000, "rank 2's next is rank 0");
        assert_eq!(value("window:+5"), 0x2000);
        assert_eq!(value("window-bytes"), 4096);
        let err = |s: &str, w: Option<&RankWindows>| match orch_arg(s, w) {
            Err(e) => e.to_string(),
            Ok(a) => panic!("{s} gave {a:?}"),
        };
        assert!(err("window:3", Some(&w)).contains("the job has 3 ranks"));
        assert!(err("window", None).contains("give --ranks"));
        assert!(err("window:x", Some(&w)).contains("want a number"));
        assert!(matches!(orch_arg("buffer:1", None), Ok(OrchArg::Buffer(1))));
        assert!(matches!(orch_arg("0x10", None), Ok(OrchArg::Value(16))));
    }
}
