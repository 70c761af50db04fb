//! Each class from the entries that show it, the precedence between them, the longest-held
//! lane as a running stall's witness, and starvation only with the orchestrator open.

use super::*;
use crate::condition::Watch;
use crate::ids::{CoreId, TaskId, WorkerClass};

fn task(n: u64) -> TaskId {
    TaskId::from_raw(n)
}

fn running(n: u64, core: u16, for_us: Option<u64>) -> Stall {
    Stall::Running {
        task: task(n),
        core: CoreId(core),
        for_us,
    }
}

fn deferred(n: u64) -> Stall {
    Stall::Deferred {
        task: task(n),
        watch: Watch::Counter32(0x40),
        expected: 1,
        last: 0,
    }
}

fn ready(n: u64) -> Stall {
    Stall::Ready {
        task: task(n),
        class: WorkerClass::Aiv,
    }
}

fn producers(n: u64) -> Stall {
    Stall::Producers {
        task: task(n),
        left: 2,
    }
}

fn kind(stalls: &[Stall], open: bool) -> Option<StallKind> {
    StallClass::of(stalls, open).map(|c| c.kind)
}

#[test]
fn each_kind_from_the_entries_that_show_it() {
    use StallKind::*;
    assert_eq!(kind(&[running(1, 3, None)], false), Some(RunningStalled));
    let behind = Stall::Behind {
        task: task(1),
        core: CoreId(3),
    };
    assert_eq!(kind(&[behind], false), Some(RunningStalled));
    assert_eq!(kind(&[deferred(1)], false), Some(Deferred));
    let held = Stall::Held {
        task: task(1),
        core: CoreId(2),
        for_us: 7,
    };
    assert_eq!(kind(&[held], false), Some(Deferred));
    assert_eq!(kind(&[ready(1)], false), Some(ReadyButIdle));
    assert_eq!(kind(&[producers(1)], false), Some(DependencyDeadlock));
    assert_eq!(kind(&[], true), Some(OrchestratorStarved));
    assert_eq!(kind(&[], false), None);
}

#[test]
fn the_most_telling_kind_wins_whatever_the_order() {
    let all = [producers(4), ready(3), deferred(2), running(1, 5, Some(10))];
    for rotate in 0..all.len() {
        let mut v = all;
        v.rotate_left(rotate);
        let c = StallClass::of(&v, true).unwrap();
        assert_eq!(c.kind, StallKind::RunningStalled);
        assert_eq!(c.entry, Some(running(1, 5, Some(10))));
    }
    let c = StallClass::of(&[producers(4), ready(3), deferred(2)], true).unwrap();
    assert_eq!(c.entry, Some(deferred(2)));
    let c = StallClass::of(&[producers(4), ready(3)], true).unwrap();
    assert_eq!(c.entry, Some(ready(3)));
}

#[test]
fn a_running_stall_is_shown_by_the_lane_held_longest() {
    let v = [
        running(1, 1, Some(5)),
        running(2, 2, None),
        running(3, 3, Some(900)),
        running(4, 4, Some(40)),
    ];
    assert_eq!(StallClass::of(&v, false).unwrap().entry, Some(v[2]));
}

#[test]
fn the_text_names_the_class_then_the_entry() {
    let c = StallClass::of(&[running(1, 3, Some(25))], false).unwrap();
    let text = std::format!("{c}");
    assert!(text.starts_with("running-stalled: "), "{text}");
    assert!(text.contains("core 3") && text.contains("25 µs"), "{text}");
    let starved = std::format!("{}", StallClass::of(&[], true).unwrap());
    assert!(starved.starts_with("orchestrator-starved: "), "{starved}");
}
