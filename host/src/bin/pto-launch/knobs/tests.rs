//! The walk over every error that names a knob ([`super::samples`]), rendered as
//! `pto-launch` prints it: each must name the flag to change (or say what the command line
//! can do) and no Rust field.

use std::collections::BTreeSet;

use pto_host::orch_config::OrchConfigError;
use pto_runtime_core::Knob;

use super::samples::*;
use super::{Command, error_line, lever};

/// The knobs `text` names (in backticks).
fn named(text: &str) -> BTreeSet<Knob> {
    Knob::ALL
        .into_iter()
        .filter(|k| text.contains(&k.to_string()))
        .collect()
}

/// What must not survive the rewording: a knob in backticks, a Rust field (every knob's
/// name with an underscore), a Rust type's path.
fn rust_names_in(printed: &str) -> Vec<String> {
    let mut found: Vec<String> = Knob::ALL
        .into_iter()
        .filter(|k| {
            printed.contains(&k.to_string())
                || (k.name().contains('_') && printed.contains(k.name()))
        })
        .map(|k| k.name().to_owned())
        .collect();
    for path in ["SimOptions::", "Config::", "RunSpec::", "NpuOptions::"] {
        if printed.contains(path) {
            found.push(path.to_owned());
        }
    }
    found
}

#[test]
fn the_walk_covers_every_variant_of_every_runtime_error_enum() {
    let covered = |ns: Vec<usize>, total: usize, what: &str| {
        let set: BTreeSet<usize> = ns.into_iter().collect();
        assert_eq!(set, (0..total).collect(), "{what}: a variant is not walked");
    };
    covered(
        config_errors().iter().map(config_variant).collect(),
        15,
        "ConfigError",
    );
    covered(
        submit_errors().iter().map(submit_variant).collect(),
        26,
        "SubmitError",
    );
    covered(
        fatal_errors()
            .iter()
            .map(|e| fatal_variant(&e.cause))
            .collect(),
        16,
        "FatalCause",
    );
    covered(
        claim_errors().iter().map(claim_variant).collect(),
        4,
        "ClaimError",
    );
    let capacity: Vec<usize> = capacity_errors()
        .iter()
        .chain(&declaration_errors())
        .map(capacities_variant)
        .collect();
    covered(capacity, 8, "OrchConfigError");
    let everything: BTreeSet<Knob> = every_message().iter().flat_map(|m| named(m)).collect();
    assert_eq!(
        everything,
        Knob::ALL.into_iter().collect(),
        "every knob is named by some message the walk renders"
    );
}

#[test]
fn every_error_that_names_a_knob_names_a_flag_and_no_rust_field_as_each_command_prints_it() {
    let mut walked = 0;
    for text in every_message() {
        let knobs = named(&text);
        if knobs.is_empty() {
            continue;
        }
        walked += 1;
        for cmd in [Command::Run, Command::Bench, Command::Allreduce] {
            let printed = error_line(cmd, &text);
            assert!(
                rust_names_in(&printed).is_empty(),
                "{cmd:?} prints Rust names {:?}: {printed}",
                rust_names_in(&printed)
            );
            for k in &knobs {
                assert!(
                    printed.contains(lever(cmd, *k)),
                    "{cmd:?}, {k:?}: {printed}"
                );
            }
            // A knob the command fixes (no flag reaches it) says so by the command's name.
            let fixed = knobs.iter().all(|k| lever(cmd, *k).contains("pto-launch"));
            assert!(
                printed.contains("--") || fixed,
                "{cmd:?} names no flag: {printed}"
            );
        }
    }
    assert!(walked > 60, "only {walked} messages name a knob");
}

#[test]
fn every_knob_reads_as_a_flag_of_run_or_says_what_its_command_line_can_do() {
    for k in Knob::ALL {
        for cmd in [Command::Run, Command::Bench, Command::Allreduce] {
            let l = lever(cmd, k);
            assert!(
                l.contains("--") || l.contains("pto-launch"),
                "{cmd:?} {k:?}: {l}"
            );
            assert!(rust_names_in(l).is_empty(), "{cmd:?} {k:?}: {l}");
        }
    }
    // The knobs `run` has no flag for, each out of a run's reach or sized from its flags.
    let no_flag: Vec<Knob> = Knob::ALL
        .into_iter()
        .filter(|&k| !lever(Command::Run, k).starts_with("--"))
        .collect();
    assert_eq!(
        no_flag,
        [
            Knob::Rings,
            Knob::DeferredCapacity,
            Knob::DeferredPollBudget,
            Knob::Completion,
            Knob::MemoryBytes,
        ]
    );
    for (k, flag) in [
        (Knob::TaskWindow, "--task-window"),
        (Knob::MaxDeps, "--max-deps"),
        (Knob::MaxTensors, "--max-tensors"),
        (Knob::MaxArgs, "--max-args"),
        (Knob::HeapBytes, "--heap-bytes"),
        (Knob::TaskTimeout, "--task-timeout-ms"),
        (Knob::SubmitTimeout, "--submit-timeout-ms"),
        (Knob::DeferredTimeout, "--deferred-timeout-ms"),
        (Knob::MaxConditions, "--max-conditions"),
        (Knob::ProfileCapacity, "--trace-records"),
        (Knob::WindowBytes, "--window-bytes"),
    ] {
        assert_eq!(lever(Command::Run, k), flag);
    }
}

#[test]
fn a_malformed_declaration_names_the_so_and_its_field() {
    for e in declaration_errors() {
        let printed = error_line(Command::Run, &format!("liborch.so: {e}"));
        assert!(printed.starts_with("error: liborch.so: "), "{printed}");
        let names_field = printed.contains("pto_orchestration_config")
            || printed.contains("aicpu_orchestration_config")
            || printed.contains("ELF");
        assert!(names_field, "{printed}");
    }
    let e = OrchConfigError::Declared {
        knob: Knob::TaskWindow,
        value: 1000,
    };
    assert_eq!(
        error_line(Command::Run, &format!("liborch.so: {e}")),
        "error: liborch.so: pto_orchestration_config.task_window = 1000: the task window is a \
         power of two from 4 to 1048576 slots\n"
    );
}
