//! SPMD blocks against the scripted machine: each block runs once, on its own core, knowing
//! its index; the task's consumers wait for every block; schedulers share a task's blocks.

use std::vec::Vec;

use crate::condition::{Condition, Watch};
use crate::error::SubmitError;
use crate::ids::{CoreId, KernelId, TaskId, Token, WorkerClass};
use crate::orchestrator::TaskSpec;
use crate::region::config::Config;
use crate::scheduler::Step;
use crate::testing::rig::{Rig, aiv, steps};

/// AIC 0..2, AIV 2..6: two clusters, whose cores `scheduler_of` splits between `schedulers`.
fn two_clusters(schedulers: u8) -> Config {
    Config {
        aic_cores: 2,
        aiv_cores: 4,
        schedulers,
        ..Config::tiny()
    }
}

fn blocks_of(payloads: &[(TaskId, u8, u16, u16)], task: TaskId) -> Vec<u16> {
    let mut b: Vec<u16> = payloads
        .iter()
        .filter(|p| p.0 == task && p.1 == 0)
        .map(|p| p.2)
        .collect();
    b.sort_unstable();
    b
}

#[test]
fn each_block_runs_once_on_its_own_core_and_the_consumer_waits_for_the_last() {
    let rig = Rig::new(two_clusters(1), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[]).blocks(4)).unwrap();
    let b = o.submit(&aiv(&[a])).unwrap();
    drop(o);
    s.step();
    let rung = p.rung();
    let cores: Vec<CoreId> = rung.iter().map(|r| r.0).collect();
    assert_eq!(cores, [CoreId(2), CoreId(3), CoreId(4), CoreId(5)]);
    let payloads = p.payloads();
    assert_eq!(blocks_of(&payloads, a), [0, 1, 2, 3]);
    assert!(payloads.iter().all(|p| p.3 == 4), "each knows the count");
    for (i, core) in [2u16, 3, 4].into_iter().enumerate() {
        p.fin(core, 1);
        steps(&mut s, 3);
        assert_eq!(t.finished(), 0, "{} of 4 blocks finished", i + 1);
        assert!(p.rung().is_empty(), "B waits for every block");
    }
    p.fin(5, 1);
    s.step();
    assert_eq!(t.finished(), 1);
    assert_eq!(p.rung(), [(CoreId(2), Token::new(2), b)]);
    p.fin(2, 2);
    assert_eq!(steps(&mut s, 3), Step::Done);
}

#[test]
fn blocks_beyond_the_free_cores_wait_in_the_queue_and_run_once_a_core_frees() {
    // Two AIV cores: one runs W, one is idle; a task of two blocks takes the idle core and
    // queues its second block (it does not sit behind W in a pending slot unasked).
    let rig = Rig::new(Config::tiny(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let w = o.submit(&aiv(&[])).unwrap();
    s.step();
    assert_eq!(p.rung(), [(CoreId(1), Token::new(1), w)]);
    let a = o.submit(&aiv(&[]).blocks(2)).unwrap();
    drop(o);
    s.step();
    let first = p.payloads();
    assert_eq!(first.len(), 2, "W, then one block of A");
    assert_eq!(first[1], (a, 0, 0, 2));
    // No core idle: the second block goes to a pending slot, alone.
    s.step();
    assert_eq!(p.payloads(), [(a, 0, 1, 2)]);
    p.fin(1, 1);
    p.fin(2, 1);
    p.fin(1, 2);
    steps(&mut s, 3);
    assert_eq!(t.finished(), 2);
    assert_eq!(s.step(), Step::Done);
}

#[test]
fn two_schedulers_share_one_tasks_blocks_and_either_may_finish_it() {
    // Scheduler 0 owns cluster 0 (AIC 0, AIV 2 and 3), scheduler 1 cluster 1.
    let rig = Rig::new(two_clusters(2), 0);
    let t = rig.tables();
    let p = &rig.p;
    let mut o = rig.orchestrator();
    let mut s0 = rig.scheduler_at(0);
    let mut s1 = rig.scheduler_at(1);
    let a = o.submit(&aiv(&[]).blocks(4)).unwrap();
    let b = o.submit(&aiv(&[a])).unwrap();
    drop(o);
    s0.step();
    let mine: Vec<_> = p.rung().iter().map(|r| r.0).collect();
    assert_eq!(mine, [CoreId(2), CoreId(3)], "scheduler 0 takes two blocks");
    s1.step();
    let theirs: Vec<_> = p.rung().iter().map(|r| r.0).collect();
    assert_eq!(theirs, [CoreId(4), CoreId(5)], "scheduler 1 the other two");
    assert_eq!(blocks_of(&p.payloads(), a), [0, 1, 2, 3]);
    for core in [2, 3, 4] {
        p.fin(core, 1);
    }
    steps(&mut s0, 2);
    steps(&mut s1, 2);
    assert_eq!(t.finished(), 0);
    p.fin(5, 1);
    s1.step();
    assert_eq!(t.finished(), 1, "scheduler 1 retired the last block");
    s0.step();
    s1.step();
    let rung = p.rung();
    assert_eq!(rung.len(), 1);
    assert_eq!(rung[0].2, b);
    p.fin(rung[0].0.0, rung[0].1.bits());
    steps(&mut s0, 3);
    steps(&mut s1, 3);
    assert_eq!(t.finished(), 2);
}

#[test]
fn a_mix_task_of_two_blocks_takes_two_clusters_each_lane_knowing_its_block() {
    let rig = Rig::new(two_clusters(1), 0);
    let (t, p, mut o, mut s) = rig.start();
    let m = o
        .submit(&TaskSpec::new(KernelId(0), WorkerClass::Mix).blocks(2))
        .unwrap();
    drop(o);
    s.step();
    let payloads = p.payloads();
    assert!(payloads.iter().all(|p| p.0 == m && p.3 == 2));
    let mut lanes: Vec<(u8, u16)> = payloads.iter().map(|p| (p.1, p.2)).collect();
    lanes.sort_unstable();
    assert_eq!(lanes, [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]);
    for core in 0..6 {
        p.fin(core, 1);
    }
    s.step();
    assert_eq!(t.finished(), 1);
    assert_eq!(s.step(), Step::Done);
}

#[test]
fn each_blocks_deferred_conditions_hold_the_task_until_they_all_land() {
    let rig = Rig::new(Config::tiny(), 0);
    let (t, p, mut o, mut s) = rig.start();
    o.submit(&aiv(&[]).blocks(2)).unwrap();
    drop(o);
    s.step();
    p.defer(1, 1, &[Condition::counter32(0x1000, 1)]);
    p.defer(2, 1, &[Condition::counter32(0x2000, 1)]);
    p.word(Watch::Counter32(0x1000), 0);
    p.word(Watch::Counter32(0x2000), 0);
    p.fin(1, 1);
    p.fin(2, 1);
    steps(&mut s, 4);
    assert_eq!(t.finished(), 0);
    p.word(Watch::Counter32(0x2000), 1);
    steps(&mut s, 4);
    assert_eq!(t.finished(), 0, "block 0's counter has not landed");
    p.word(Watch::Counter32(0x1000), 1);
    steps(&mut s, 2);
    assert_eq!(t.finished(), 1);
    assert_eq!(s.step(), Step::Done);
}

#[test]
fn blocks_beyond_the_class_or_none_or_a_dummy_of_several_are_refused() {
    let rig = Rig::new(Config::tiny(), 0); // 1 AIC, 2 AIV: one cluster
    let mut o = rig.orchestrator();
    let refused = |o: &mut crate::orchestrator::Orchestrator<'_, '_, _>, spec| match o.submit(&spec)
    {
        Err(SubmitError::BadBlocks { blocks, class, max }) => (blocks, class, max),
        other => panic!("{spec:?}: {other:?}"),
    };
    let k = KernelId(0);
    assert_eq!(
        refused(&mut o, TaskSpec::new(k, WorkerClass::Aiv).blocks(3)),
        (3, WorkerClass::Aiv, 2)
    );
    assert_eq!(
        refused(&mut o, TaskSpec::new(k, WorkerClass::Aic).blocks(0)),
        (0, WorkerClass::Aic, 1)
    );
    assert_eq!(
        refused(&mut o, TaskSpec::new(k, WorkerClass::Mix).blocks(2)),
        (2, WorkerClass::Mix, 1)
    );
    assert_eq!(
        refused(&mut o, TaskSpec::dummy().blocks(2)),
        (2, WorkerClass::Dummy, 1)
    );
    let text = std::format!(
        "{}",
        SubmitError::BadBlocks {
            blocks: 3,
            class: WorkerClass::Aiv,
            max: 2
        }
    );
    assert!(text.contains("1 to 2"), "{text}");
    assert_eq!(o.submitted(), 0, "nothing kept");
    assert!(o.submit(&aiv(&[]).blocks(2)).is_ok());
}

#[test]
fn a_sync_start_task_waits_for_all_its_cores_which_take_nothing_else_meanwhile() {
    let rig = Rig::new(Config::tiny(), 0); // AIV cores 1 and 2
    let (t, p, mut o, mut s) = rig.start();
    let w = o.submit(&aiv(&[])).unwrap();
    s.step();
    assert_eq!(p.rung(), [(CoreId(1), Token::new(1), w)]);
    let sync = o.submit(&aiv(&[]).blocks(2).sync_start()).unwrap();
    let x = o.submit(&aiv(&[])).unwrap();
    steps(&mut s, 3);
    assert!(
        p.rung().is_empty(),
        "core 2 is idle, but the sync task needs two: neither it nor X takes core 2"
    );
    p.fin(1, 1);
    s.step();
    let rung = p.rung();
    assert_eq!(
        rung,
        [
            (CoreId(1), Token::new(2), sync),
            (CoreId(2), Token::new(1), sync),
            (CoreId(1), Token::new(3), x),
        ],
        "both blocks in one pass, then X behind one of them"
    );
    let blocks: Vec<(u16, u16)> = p.payloads().iter().map(|p| (p.2, p.3)).collect();
    assert_eq!(
        blocks,
        [(0, 1), (0, 2), (1, 2), (0, 1)],
        "W, the two blocks, X"
    );
    p.fin(1, 2);
    p.fin(2, 1);
    p.fin(1, 3);
    steps(&mut s, 3);
    assert_eq!(t.finished(), 3);
    drop(o);
    assert_eq!(s.step(), Step::Done);
}

#[test]
fn a_scheduler_with_too_few_cores_leaves_a_sync_start_task_to_one_with_enough() {
    // Clusters 0 and 2 (AIV 3, 4, 7, 8) are scheduler 0's, cluster 1 (AIV 5, 6) scheduler 1's.
    let cfg = Config {
        aic_cores: 3,
        aiv_cores: 6,
        schedulers: 2,
        ..Config::tiny()
    };
    let rig = Rig::new(cfg, 0);
    let t = rig.tables();
    let p = &rig.p;
    let mut o = rig.orchestrator();
    let mut s0 = rig.scheduler_at(0);
    let mut s1 = rig.scheduler_at(1);
    match o.submit(&aiv(&[]).blocks(5).sync_start()) {
        Err(
            e @ SubmitError::SyncStartTooWide {
                blocks: 5, max: 4, ..
            },
        ) => {
            assert!(std::format!("{e}").contains("schedulers"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    let sync = o.submit(&aiv(&[]).blocks(3).sync_start()).unwrap();
    drop(o);
    steps(&mut s1, 2);
    assert!(p.rung().is_empty(), "scheduler 1 has two AIV cores");
    s0.step();
    let cores: Vec<CoreId> = p.rung().iter().map(|r| r.0).collect();
    assert_eq!(cores, [CoreId(3), CoreId(4), CoreId(7)]);
    for c in [3, 4, 7] {
        p.fin(c, 1);
    }
    steps(&mut s0, 2);
    assert_eq!(t.finished(), 1);
    let _ = sync;
}

#[test]
fn a_sync_start_mix_task_takes_its_clusters_at_once() {
    let rig = Rig::new(two_clusters(1), 0);
    let (t, p, mut o, mut s) = rig.start();
    let w = o
        .submit(&TaskSpec::new(KernelId(0), WorkerClass::Aic))
        .unwrap();
    s.step();
    assert_eq!(p.rung(), [(CoreId(0), Token::new(1), w)]);
    o.submit(
        &TaskSpec::new(KernelId(0), WorkerClass::Mix)
            .blocks(2)
            .sync_start(),
    )
    .unwrap();
    drop(o);
    steps(&mut s, 3);
    assert!(
        p.rung().is_empty(),
        "cluster 0's AIC is busy: no cluster taken yet"
    );
    p.fin(0, 1);
    s.step();
    assert_eq!(p.rung().len(), 6, "both clusters' three lanes in one pass");
    for core in 0..6 {
        p.fin(core, if core == 0 { 2 } else { 1 });
    }
    steps(&mut s, 3);
    assert_eq!(t.finished(), 2);
}

#[test]
fn a_mix_task_runs_a_kernel_of_its_own_on_each_lane_of_each_block() {
    let rig = Rig::new(two_clusters(1), 0);
    let (t, p, mut o, mut s) = rig.start();
    let (aic, aiv) = (KernelId(1), [KernelId(2), KernelId(3)]);
    let m = o.submit(&TaskSpec::mix(aic, aiv).blocks(2)).unwrap();
    let plain = o
        .submit(&TaskSpec::new(KernelId(4), WorkerClass::Mix).deps(&[m]))
        .unwrap();
    drop(o);
    s.step();
    let mut lanes = p.kernels();
    lanes.sort_unstable_by_key(|k| (k.1, k.2.0));
    let want: Vec<(TaskId, u8, KernelId)> = [(0, aic), (1, aiv[0]), (2, aiv[1])]
        .into_iter()
        .flat_map(|(lane, k)| [(m, lane, k), (m, lane, k)])
        .collect();
    assert_eq!(lanes, want, "two blocks, each lane its kernel");
    for core in 0..6 {
        p.fin(core, 1);
    }
    s.step();
    let plain_lanes: Vec<KernelId> = p.kernels().iter().map(|k| k.2).collect();
    assert_eq!(plain_lanes, [KernelId(4); 3], "one kernel on every lane");
    assert_eq!(p.rung().iter().filter(|r| r.2 == plain).count(), 3);
    assert_eq!(t.finished(), 1);
}

#[test]
fn lane_kernels_for_a_task_that_is_not_mix_or_unknown_are_refused() {
    let rig = Rig::new(two_clusters(1), 0);
    let mut o = rig.orchestrator();
    let mut spec = TaskSpec::mix(KernelId(1), [KernelId(2), KernelId(3)]);
    spec.class = WorkerClass::Aiv;
    assert_eq!(
        o.submit(&spec),
        Err(SubmitError::LaneKernelsNotMix {
            class: WorkerClass::Aiv
        })
    );
    assert_eq!(
        o.submit(&TaskSpec::mix(KernelId(1), [KernelId(2), KernelId(99)])),
        Err(SubmitError::UnknownKernel {
            kernel: KernelId(99)
        })
    );
    assert_eq!(o.submitted(), 0);
}

#[test]
fn each_block_keeps_a_record_of_its_own_core_and_times() {
    use crate::observe::profile::ProfileLevel;
    use crate::observe::record::TaskRecord;
    let cfg = Config {
        profile: ProfileLevel::Tasks,
        ..two_clusters(2)
    };
    let rig = Rig::new(cfg, 1);
    let t = rig.tables();
    let p = &rig.p;
    let mut o = rig.orchestrator();
    let mut s0 = rig.scheduler_at(0);
    let mut s1 = rig.scheduler_at(1);
    let a = o.submit(&aiv(&[]).blocks(4)).unwrap();
    let after = o.submit(&aiv(&[a])).unwrap();
    drop(o);
    s0.step();
    s1.step();
    for (core, token, _) in p.rung() {
        p.fin(core.0, token.bits());
    }
    steps(&mut s0, 2);
    steps(&mut s1, 2);
    for (core, token, _) in p.rung() {
        p.fin(core.0, token.bits());
    }
    steps(&mut s0, 2);
    steps(&mut s1, 2);
    assert_eq!(t.finished(), 2);
    let records: Vec<TaskRecord> = t.shared().prof().records(t.records()).collect();
    assert_eq!(
        records.len(),
        5,
        "four blocks and the consumer: {records:?}"
    );
    let blocks: Vec<(u16, u16, u16)> = records
        .iter()
        .filter(|r| r.task == a)
        .map(|r| (r.block, r.blocks, r.core.unwrap().0))
        .collect();
    assert_eq!(
        blocks,
        [(0, 4, 2), (1, 4, 3), (2, 4, 4), (3, 4, 5)],
        "each block on its own core, two schedulers' cores"
    );
    for r in &records {
        let order = [r.submit, r.ready, r.dispatch, r.fin, r.complete];
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "{r:?}");
        assert!(r.dispatch > 0 && r.fin > 0, "{r:?}");
    }
    let consumer = records.iter().find(|r| r.task == after).unwrap();
    assert_eq!((consumer.block, consumer.blocks), (0, 1));
    assert!(
        records
            .iter()
            .filter(|r| r.task == a)
            .all(|r| consumer.ready >= r.fin),
        "ready once every block's FIN was seen"
    );
}

#[test]
fn a_task_of_one_block_in_a_slot_a_task_of_several_held_before_runs_as_one_block() {
    // A two-slot ring: the third task reuses the first one's slot, whose blocks word the
    // task of two blocks left behind.
    let cfg = Config {
        rings: 1,
        task_window: 2,
        ..two_clusters(1)
    };
    let rig = Rig::new(cfg, 0);
    let (t, p, mut o, mut s) = rig.start();
    let spmd = o.submit(&aiv(&[]).blocks(2)).unwrap();
    s.step();
    for (core, token, _) in p.rung() {
        p.fin(core.0, token.bits());
    }
    steps(&mut s, 2);
    o.submit(&aiv(&[])).unwrap();
    s.step();
    for (core, token, _) in p.rung() {
        p.fin(core.0, token.bits());
    }
    steps(&mut s, 2);
    p.payloads();
    let mix = o
        .submit(&TaskSpec::new(KernelId(0), WorkerClass::Mix))
        .unwrap();
    assert_eq!(t.gslot(mix), t.gslot(spmd), "the same slot");
    drop(o);
    s.step();
    let lanes = p.payloads();
    assert_eq!(lanes.len(), 3, "all three lanes: {lanes:?}");
    assert!(
        lanes.iter().all(|l| l.0 == mix && l.2 == 0 && l.3 == 1),
        "one block of one: {lanes:?}"
    );
    for (core, token, _) in p.rung() {
        p.fin(core.0, token.bits());
    }
    assert_eq!(steps(&mut s, 3), Step::Done);
    assert_eq!(t.finished(), 3);
}
