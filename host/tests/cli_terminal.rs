//! `pto-launch` on a pseudo-terminal: progress bars drawn, then cleared before the figures.

use std::process::Command;

/// What `pto-launch args` draws and prints on a pseudo-terminal: `script` gives it one and
/// copies what it wrote to our pipe.
fn on_a_terminal(args: &str) -> String {
    let cmd = format!("{} {args}", env!("CARGO_BIN_EXE_pto-launch"));
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("script (util-linux) runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The last thing drawn in `text` is a line clear (`ESC [2K`), after the bar's last
/// drawing (which ends in `marker`).
fn assert_cleared(text: &str, marker: &str) {
    let drawn = text.rfind(marker).expect("the bar was drawn");
    let cleared = text.rfind("\u{1b}[2K").expect("a line clear");
    assert!(drawn < cleared, "the bar is cleared at the end: {text:?}");
}

#[test]
fn on_a_terminal_a_long_allreduce_draws_rank_0_s_bar_and_clears_it_before_the_report() {
    let text = on_a_terminal("allreduce --ranks 2 --elements 2000000");
    let bar = text
        .find("rank 0: writing the input")
        .expect("the bar names the phase");
    assert!(
        text.contains("/2,000,000 elements"),
        "the bar counts elements: {text:?}"
    );
    let report = text.rfind("rank 0: passed").expect("the report");
    assert!(bar < report, "the bar comes first: {text:?}");
    assert_cleared(&text[..report], "elements (");
}

#[test]
fn on_a_terminal_a_long_bench_draws_a_bar_and_clears_it_before_the_figures() {
    let text = on_a_terminal("bench --workload random --tasks 50000 --repeat 1");
    let bar = text
        .find("bench: run 1 of 1")
        .expect("the bar names the run");
    let figures = text.rfind("workload random: ").expect("the figures");
    assert!(bar < figures, "the bar comes first: {text:?}");
    assert!(text.contains("tasks ("), "the bar counts tasks: {text:?}");
    assert_cleared(&text[..figures], "tasks (");
}
