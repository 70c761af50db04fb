//! Golden checks of a run's buffers (`pto-launch run --expect N=FILE`): each buffer named
//! compared with a file of expected elements of one [`Dtype`], within a [`Tolerance`], the
//! way the C++ runtime's users compare a scene's output with its golden output.
//!
//! The file holds the expected elements, little-endian, and may be shorter than the buffer:
//! the buffer's first bytes are compared.
//!
//! ```
//! use pto_host::golden::{Expect, check};
//! use pto_sim::{Dtype, Tolerance};
//!
//! let dir = std::env::temp_dir().join(format!("golden-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let file = dir.join("z.bin");
//! std::fs::write(&file, [1.5f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>())?;
//! let buffers = vec![[1.5f32, 2.0, 9.0].iter().flat_map(|v| v.to_le_bytes()).collect()];
//! let expect: Expect = format!("0={}", file.display()).parse()?;
//! let checks = check(&[expect], &buffers, Dtype::F32, Tolerance::default_for(Dtype::F32))?;
//! assert!(checks[0].passed());
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::PathBuf;

use serde::Serialize;

use pto_sim::{Comparison, Dtype, Tolerance, compare_bytes};

/// One `--expect N=FILE`: buffer `buffer` must match the elements in `file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expect {
    /// The buffer's index (the n-th `--buffer`).
    pub buffer: usize,
    /// The file of expected elements.
    pub file: PathBuf,
}

impl std::str::FromStr for Expect {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (n, file) = s
            .split_once('=')
            .filter(|(n, f)| !n.is_empty() && !f.is_empty())
            .ok_or_else(|| format!("--expect {s:?}: want N=FILE (buffer N, its golden file)"))?;
        let buffer = n
            .parse()
            .map_err(|_| format!("--expect {s:?}: {n:?} is not a buffer number"))?;
        Ok(Expect {
            buffer,
            file: PathBuf::from(file),
        })
    }
}

/// Buffer `buffer` compared with `file`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GoldenCheck {
    /// The buffer.
    pub buffer: usize,
    /// The golden file.
    pub file: PathBuf,
    /// What the comparison found.
    pub comparison: Comparison,
}

impl GoldenCheck {
    /// Whether every element is within the tolerance.
    pub fn passed(&self) -> bool {
        self.comparison.passed()
    }
}

impl std::fmt::Display for GoldenCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verdict = if self.passed() {
            "matches the golden output"
        } else {
            "does not match the golden output"
        };
        write!(
            f,
            "buffer {} {verdict} {}: {}",
            self.buffer,
            self.file.display(),
            self.comparison
        )
    }
}

/// Checks each of `expects` against `buffers` (a run's buffers, by index), elements of
/// `dtype` within `tol`. An expect that cannot be checked (no such buffer, an unreadable or
/// ragged file, a file longer than its buffer) is an error naming it; a mismatch is a check
/// that did not pass.
pub fn check(
    expects: &[Expect],
    buffers: &[Vec<u8>],
    dtype: Dtype,
    tol: Tolerance,
) -> Result<Vec<GoldenCheck>, String> {
    expects
        .iter()
        .map(|e| {
            let actual = buffers.get(e.buffer).ok_or_else(|| {
                format!(
                    "--expect {}={}: the run has {} buffers",
                    e.buffer,
                    e.file.display(),
                    buffers.len()
                )
            })?;
            let expected = std::fs::read(&e.file).map_err(|err| {
                format!("cannot read the golden file {}: {err}", e.file.display())
            })?;
            let comparison = compare_bytes(dtype, actual, &expected, tol).map_err(|err| {
                format!("buffer {} against {}: {err}", e.buffer, e.file.display())
            })?;
            Ok(GoldenCheck {
                buffer: e.buffer,
                file: e.file.clone(),
                comparison,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expect_is_a_buffer_number_and_a_file() {
        let e: Expect = "2=out/z.bin".parse().unwrap();
        assert_eq!((e.buffer, e.file), (2, PathBuf::from("out/z.bin")));
        for bad in ["2", "=f", "2=", "x=f"] {
            assert!(bad.parse::<Expect>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_missing_buffer_or_file_is_an_error_naming_it() {
        let expects = [Expect {
            buffer: 3,
            file: "nowhere.bin".into(),
        }];
        let e = check(&expects, &[vec![0; 8]], Dtype::F32, Tolerance::EXACT).unwrap_err();
        assert!(e.contains("the run has 1 buffers"), "{e}");
        let expects = [Expect {
            buffer: 0,
            file: "/nonexistent/golden.bin".into(),
        }];
        let e = check(&expects, &[vec![0; 8]], Dtype::F32, Tolerance::EXACT).unwrap_err();
        assert!(
            e.contains("cannot read the golden file /nonexistent/golden.bin"),
            "{e}"
        );
    }
}
