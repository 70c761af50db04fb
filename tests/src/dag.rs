//! Random task programs for the property tests: each task has a class and waits for some
//! earlier tasks.

use std::collections::BTreeSet;

use proptest::prelude::*;
use pto_runtime_core::{CompletionMode, Config, WorkerClass};

/// One task of a generated program: its class and the earlier tasks it waits for.
#[derive(Clone, Debug)]
pub struct Node {
    /// Where it runs.
    pub class: WorkerClass,
    /// Indices of the earlier tasks it waits for.
    pub deps: Vec<usize>,
}

/// The machine a generated program runs on, in both completion modes (status polling, then
/// the completion ring): one ring of `2^window_log` slots, tasks of up to 4 dependencies and
/// `max_args` arguments, `aic` + `aiv` cores served by `schedulers` schedulers.
pub fn machines(window_log: u32, max_args: u16, schedulers: u8, aic: u16, aiv: u16) -> [Config; 2] {
    [CompletionMode::Poll, CompletionMode::Ring].map(|completion| Config {
        rings: 1,
        task_window: 1 << window_log,
        max_deps: 4,
        max_args,
        aic_cores: aic,
        aiv_cores: aiv,
        schedulers,
        completion,
        ..Config::default()
    })
}

/// Programs of 1 to `max_tasks` tasks of any class, each waiting for up to 4 earlier ones.
pub fn program(max_tasks: usize) -> impl Strategy<Value = Vec<Node>> {
    prop::collection::vec(
        (
            0..4usize,
            prop::collection::vec(any::<prop::sample::Index>(), 0..5),
        ),
        1..max_tasks,
    )
    .prop_map(|raw| {
        raw.into_iter()
            .enumerate()
            .map(|(i, (class, deps))| Node {
                class: WorkerClass::ALL[class],
                deps: if i == 0 {
                    vec![]
                } else {
                    deps.iter().map(|d| d.index(i)).collect()
                },
            })
            .collect()
    })
}

/// The tasks that really run before `i` may start: its dependencies, looking through DUMMY
/// tasks (which run no kernel) to what they waited for.
pub fn running_preds(nodes: &[Node], i: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let mut stack: Vec<usize> = nodes[i].deps.clone();
    while let Some(d) = stack.pop() {
        if nodes[d].class == WorkerClass::Dummy {
            stack.extend(nodes[d].deps.iter().copied());
        } else {
            out.insert(d);
        }
    }
    out
}

/// Every task that waits for `i`, directly or through others.
pub fn descendants(nodes: &[Node], i: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for (j, n) in nodes.iter().enumerate().skip(i + 1) {
        if n.deps.iter().any(|&d| d == i || out.contains(&d)) {
            out.insert(j);
        }
    }
    out
}
