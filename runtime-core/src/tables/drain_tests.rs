//! The record drain against the scripted machine: a ring of a few cells streams a record per
//! task of many, blocks' records wrap, a drain that stops makes submits wait once and then
//! lose (counted), and a record that will never close is passed over.

use std::vec::Vec;

use crate::ids::{CoreId, KernelId, TaskId, WorkerClass};
use crate::observe::profile::ProfileLevel;
use crate::observe::record::TaskRecord;
use crate::orchestrator::TaskSpec;
use crate::region::config::Config;
use crate::tables::drain::RecordDrain;
use crate::tables::views::RunTables;
use crate::testing::rig::{Rig, aiv, steps};

fn cfg(capacity: u32) -> Config {
    Config {
        profile: ProfileLevel::Tasks,
        profile_capacity: capacity,
        aic_cores: 0,
        aiv_cores: 4,
        ..Config::tiny()
    }
}

/// Makes `t`'s profile ring stream, and its drain.
fn stream<'r>(t: &RunTables<'r>) -> RecordDrain<'r> {
    assert!(
        t.shared().prof().stream(),
        "the first drain, before any submit"
    );
    RecordDrain::new(**t, t.records())
}

/// Sends every rung core its FIN and steps the scheduler until they are finished.
fn finish_rung(
    rig: &Rig,
    s: &mut crate::scheduler::Scheduler<'_, '_, crate::testing::rig::Script>,
) {
    steps(s, 2);
    for (core, token, _) in rig.p.rung() {
        rig.p.fin(core.0, token.bits());
    }
    steps(s, 3);
}

#[test]
fn a_ring_of_four_cells_streams_a_record_per_task_of_many_in_submit_order() {
    let rig = Rig::new(cfg(4), 1);
    let (t, _p, mut o, mut s) = rig.start();
    let mut drain = stream(&t);
    let mut records: Vec<TaskRecord> = Vec::new();
    let mut ids = Vec::new();
    for i in 0..50u32 {
        // Three tasks a round: the ring of four never fills while the drain keeps up.
        ids.push(o.submit(&aiv(&[])).unwrap());
        if i % 3 == 2 {
            finish_rung(&rig, &mut s);
            drain.drain(|r| records.push(r));
        }
    }
    finish_rung(&rig, &mut s);
    drain.drain(|r| records.push(r));
    drain.finish(|r| records.push(r));
    assert_eq!(records.iter().map(|r| r.task).collect::<Vec<_>>(), ids);
    assert!(
        records
            .iter()
            .all(|r| r.core.is_some() && r.complete >= r.submit)
    );
    assert_eq!(t.shared().prof().dropped(t.records().len()), 0);
    assert_eq!(drain.position(), 50);
}

#[test]
fn a_task_of_several_blocks_starts_the_next_lap_rather_than_cross_the_rings_end() {
    let rig = Rig::new(cfg(4), 1);
    let (t, _p, mut o, mut s) = rig.start();
    let mut drain = stream(&t);
    let mut records: Vec<TaskRecord> = Vec::new();
    // Positions 0..3; a task of three blocks would cross the end from cell 3: cell 3 is a
    // filler (position 3) and its blocks take cells 0, 1, 2 (positions 4..7).
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(o.submit(&aiv(&[])).unwrap());
    }
    finish_rung(&rig, &mut s);
    drain.drain(|r| records.push(r));
    let wide = o
        .submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv).blocks(3))
        .unwrap();
    finish_rung(&rig, &mut s);
    drain.drain(|r| records.push(r));
    let blocks: Vec<(TaskId, u16, u16)> = records[3..]
        .iter()
        .map(|r| (r.task, r.block, r.blocks))
        .collect();
    assert_eq!(blocks, [(wide, 0, 3), (wide, 1, 3), (wide, 2, 3)]);
    let cores: Vec<Option<CoreId>> = records[3..].iter().map(|r| r.core).collect();
    assert!(cores.iter().all(Option::is_some), "{records:?}");
    assert_eq!(drain.position(), 7);
    assert_eq!(t.shared().prof().dropped(t.records().len()), 0);
}

#[test]
fn a_drain_that_stops_makes_a_submit_wait_its_bound_then_the_loss_is_counted() {
    let cfg = Config {
        submit_timeout_us: 500,
        ..cfg(2)
    };
    let rig = Rig::new(cfg, 1);
    let (t, p, mut o, mut s) = rig.start();
    let mut drain = stream(&t);
    let before = p.now_peek();
    for _ in 0..4 {
        // The first two take the ring's cells; the third waits the bound for the drain,
        // which never runs; the fourth loses its record at once.
        o.submit(&aiv(&[])).unwrap();
    }
    let waited = p.now_peek() - before;
    assert!(
        waited >= 500,
        "the third submit waited its bound: {waited} µs"
    );
    assert!(
        waited < 2 * 500,
        "the later ones did not wait again: {waited} µs"
    );
    assert_eq!(t.shared().prof().dropped(t.records().len()), 2);
    finish_rung(&rig, &mut s);
    let mut records = Vec::new();
    drain.finish(|r| records.push(r));
    assert_eq!(records.len(), 2, "the first two tasks kept theirs");
    assert_eq!(t.finished(), 4, "every task ran, recorded or not");
}

#[test]
fn a_drain_moving_again_lets_submits_claim_again() {
    let cfg = Config {
        submit_timeout_us: 200,
        ..cfg(2)
    };
    let rig = Rig::new(cfg, 1);
    let (t, _p, mut o, mut s) = rig.start();
    let mut drain = stream(&t);
    for _ in 0..3 {
        o.submit(&aiv(&[])).unwrap();
    }
    assert_eq!(t.shared().prof().dropped(t.records().len()), 1);
    finish_rung(&rig, &mut s);
    let mut records = Vec::new();
    drain.drain(|r| records.push(r));
    let late = o.submit(&aiv(&[])).unwrap();
    finish_rung(&rig, &mut s);
    drain.drain(|r| records.push(r));
    assert_eq!(records.len(), 3);
    assert_eq!(records[2].task, late);
    assert_eq!(t.shared().prof().dropped(t.records().len()), 1);
}

#[test]
fn a_record_left_open_by_a_level_change_is_passed_over_once_its_task_finished() {
    let rig = Rig::new(cfg(4), 1);
    let (t, _p, mut o, mut s) = rig.start();
    let mut drain = stream(&t);
    let open = o.submit(&aiv(&[])).unwrap();
    t.shared().prof().set_level(ProfileLevel::Off);
    let mut records = Vec::new();
    assert_eq!(drain.drain(|r| records.push(r)), 0);
    assert_eq!(
        drain.position(),
        0,
        "its task has not finished: it may still close"
    );
    finish_rung(&rig, &mut s);
    t.shared().prof().set_level(ProfileLevel::Tasks);
    let kept = o.submit(&aiv(&[])).unwrap();
    finish_rung(&rig, &mut s);
    drain.drain(|r| records.push(r));
    assert_eq!(records.iter().map(|r| r.task).collect::<Vec<_>>(), [kept]);
    assert_ne!(open, kept);
    assert_eq!(drain.position(), 2);
}
