//! What `pto-launch run`'s flags name, read into a [`RunSpec`]: the orchestration SO, the
//! kernels (a directory's kernel files in name order, or a comma-separated list, each
//! `FILE` or `FILE:SYMBOL`), the buffers and the orchestration's arguments; and the buffers
//! written back after the run.

use std::path::{Path, PathBuf};

use pto_host::orch_config::{Capacities, RunCapacities, resolve};
use pto_host::program::{BufferSpec, KernelSpec, OrchArg, RunSpec};
use pto_host::program_ranks::RankWindows;

use super::{RunArgs, RunBackend};
use crate::error::CliError;
use crate::numbers::bits64;

pub fn bad(why: String) -> CliError {
    CliError::Run(why)
}

fn read(what: &str, path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|e| bad(format!("cannot read {what} {}: {e}", path.display())))
}

/// One kernel as `--kernels` names it: its file and, if given, the symbol of its entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelArg {
    /// The file.
    pub path: PathBuf,
    /// The entry's symbol after a colon (`FILE:SYMBOL`), if given.
    pub entry: Option<String>,
}

/// The extension of the kernel files a directory given to `--kernels` holds, by backend: a
/// shared object of this host for the simulator, an AICore object file for an NPU.
pub fn kernel_extension(backend: RunBackend) -> &'static str {
    match backend {
        RunBackend::Sim => "so",
        RunBackend::Npu => "o",
    }
}

/// Whether `s` can be a C symbol (what may follow the colon of `FILE:SYMBOL`).
fn is_symbol(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The kernels `--kernels` names, in id order: a directory's files with the backend's
/// extension in name order, or a comma-separated list of `FILE` or `FILE:SYMBOL`.
pub fn kernel_args(spec: &str, backend: RunBackend) -> Result<Vec<KernelArg>, CliError> {
    let dir = Path::new(spec);
    if dir.is_dir() {
        let ext = kernel_extension(backend);
        let entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| bad(format!("cannot list {}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        let mut files: Vec<PathBuf> = entries
            .iter()
            .filter(|p| p.extension().is_some_and(|x| x == ext))
            .cloned()
            .collect();
        files.sort();
        if files.is_empty() {
            let raw = entries
                .iter()
                .any(|p| p.extension().is_some_and(|x| x == "bin"));
            let note = if raw {
                " (its *.bin files look like raw code, which kernels no longer are: their \
                 entries are found by symbol in an ELF file)"
            } else {
                ""
            };
            return Err(bad(format!(
                "{} holds no *.{ext} kernel{note}; {}",
                dir.display(),
                build_hint(backend)
            )));
        }
        return Ok(files
            .into_iter()
            .map(|path| KernelArg { path, entry: None })
            .collect());
    }
    Ok(spec
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| match s.rsplit_once(':') {
            Some((file, sym)) if is_symbol(sym) && !file.is_empty() => KernelArg {
                path: PathBuf::from(file),
                entry: Some(sym.to_owned()),
            },
            _ => KernelArg {
                path: PathBuf::from(s),
                entry: None,
            },
        })
        .collect())
}

/// How to build a kernel `backend` takes.
pub fn build_hint(backend: RunBackend) -> &'static str {
    match backend {
        RunBackend::Sim => pto_sim::BUILD_HINT,
        RunBackend::Npu => {
            "build each kernel as an AICore ELF object (`ccec -c`), its entry \
             `pto_kernel_entry` or named after a colon"
        }
    }
}

/// The kernels `--kernels` names, read.
pub fn kernels(a: &RunArgs) -> Result<Vec<KernelSpec>, CliError> {
    kernel_args(&a.kernels, a.backend)?
        .iter()
        .map(|k| {
            KernelSpec::read(&k.path, k.entry.as_deref())
                .map_err(|e| bad(format!("cannot read the kernel {}: {e}", k.path.display())))
        })
        .collect()
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

/// The run the flags describe (checked), for a rank with `windows` if any.
pub fn spec(a: &RunArgs, records: u32, windows: Option<&RankWindows>) -> Result<RunSpec, CliError> {
    let kernels = kernels(a)?;
    let mut spec = RunSpec::new(read("the orchestration SO", &a.orchestration)?, kernels);
    spec.orchestration_name = a.orchestration.display().to_string();
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

    #[test]
    fn kernels_are_files_with_an_optional_entry_symbol() {
        let ks = kernel_args("square.so:square,sum.so,dir/a:b.so", RunBackend::Sim).unwrap();
        assert_eq!(ks[0].path, Path::new("square.so"));
        assert_eq!(ks[0].entry.as_deref(), Some("square"));
        assert_eq!(
            (ks[1].path.as_path(), ks[1].entry.as_deref()),
            (Path::new("sum.so"), None)
        );
        assert_eq!(
            (ks[2].path.as_path(), ks[2].entry.as_deref()),
            (Path::new("dir/a:b.so"), None),
            "a colon not followed by a symbol is part of the path"
        );
    }

    #[test]
    fn a_directory_gives_its_kernels_of_the_backend_in_name_order() {
        let dir = std::env::temp_dir().join(format!("pto-kernels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["b.so", "a.so", "c.o", "d.bin"] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        let names = |b| -> Vec<String> {
            kernel_args(dir.to_str().unwrap(), b)
                .unwrap()
                .iter()
                .map(|k| k.path.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(RunBackend::Sim), ["a.so", "b.so"]);
        assert_eq!(names(RunBackend::Npu), ["c.o"]);
        for f in ["b.so", "a.so", "c.o"] {
            std::fs::remove_file(dir.join(f)).unwrap();
        }
        let e = kernel_args(dir.to_str().unwrap(), RunBackend::Sim)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("holds no *.so kernel") && e.contains("raw code"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
