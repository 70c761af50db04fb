//! Progress of long runs: a bar on standard error when it is a terminal, nothing at all when
//! it is a pipe or a file (so logs and `--json` output stay clean).

use std::borrow::Cow;
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar that draws only on a terminal. Every method is cheap, and a no-op when
/// nothing is drawn; callers still update it every few thousand steps, not every step.
#[derive(Debug, Default)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar of `len` steps of `unit` (`"tasks"`, `"elements"`), drawn on standard error if it is
    /// a terminal; otherwise [`Progress::hidden`].
    pub fn on_terminal(len: u64, unit: &str) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self::hidden();
        }
        let template =
            format!("{{msg}} [{{wide_bar}}] {{human_pos}}/{{human_len}} {unit} ({{elapsed}})");
        let style = ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        Progress {
            bar: Some(bar.with_style(style)),
        }
    }

    /// A bar that draws nothing.
    pub fn hidden() -> Self {
        Progress { bar: None }
    }

    /// Steps done so far.
    pub fn set_position(&self, pos: u64) {
        if let Some(b) = &self.bar {
            b.set_position(pos);
        }
    }

    /// Steps in all.
    pub fn set_length(&self, len: u64) {
        if let Some(b) = &self.bar {
            b.set_length(len);
        }
    }

    /// The text before the bar (`"run 2 of 6"`).
    pub fn set_message(&self, msg: impl Into<Cow<'static, str>>) {
        if let Some(b) = &self.bar {
            b.set_message(msg);
        }
    }

    /// Removes the bar from the terminal, so that the results print on a clean line.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    /// Clears the bar on every path out, an error's too.
    fn drop(&mut self) {
        self.finish();
    }
}
