//! The engines against their memory: order, latency, loss, watermarks.

use super::*;
use std::time::Instant;

const BASE: u64 = 0x2000_0000;
/// How long a test waits for something that should happen within microseconds.
const PATIENCE: Duration = Duration::from_secs(5);

/// 4 KiB of fresh memory at [`BASE`].
fn memory() -> Arc<MemoryMap> {
    Arc::new(
        MemoryMap::new(
            Arc::new(crate::memory::DeviceMemory::new(BASE, 4096).unwrap()),
            Vec::new(),
        )
        .unwrap(),
    )
}

fn setup(opts: EngineOptions) -> (Arc<MemoryMap>, Engine) {
    let m = memory();
    let e = Engine::start(0, m.clone(), opts).unwrap();
    (m, e)
}

/// An engine over fresh memory whose transfers land by `clock`, with `queues` completion
/// queues.
fn setup_on(opts: EngineOptions, queues: u8, clock: &VirtualClock) -> (Arc<MemoryMap>, Engine) {
    let m = memory();
    let e = Engine::start_on(
        3,
        m.clone(),
        opts,
        queues,
        EngineClock::Virtual(clock.clone()),
    )
    .unwrap();
    (m, e)
}

/// Polls `cond` until it holds or [`PATIENCE`] runs out; returns whether it held.
fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    cond()
}

#[test]
fn a_transfer_lands_its_data_and_bumps_its_counter() {
    let (m, e) = setup(EngineOptions::default());
    m.write(BASE, &[10, 20, 30]).unwrap();
    let counter = BASE + 1024 + 4;
    let t = Transfer::copy(BASE, BASE + 512, 3).signal(Signal::Add32 {
        addr: counter,
        delta: 1,
    });
    assert_eq!(e.post(t).unwrap(), 1, "first post id");
    assert!(
        eventually(|| m.load32(counter).unwrap() == 1),
        "counter bumped"
    );
    let mut out = [0; 3];
    m.read(BASE + 512, &mut out).unwrap();
    assert_eq!(out, [10, 20, 30], "data visible once the counter is");
    assert!(eventually(|| e.completed() == 1));
    assert_eq!(e.landed(), 1);
    assert_eq!(m.load32(counter - 4).unwrap(), 0, "other half untouched");
}

#[test]
fn a_shorter_later_post_lands_first_and_the_watermark_waits() {
    // On a virtual clock: the slow post cannot land before the clock moves 200 ms, however
    // long posting the fast one takes.
    let clock = VirtualClock::new();
    let (m, e) = setup_on(EngineOptions::default(), 0, &clock);
    // Each transfer copies the shared sequence word, then bumps it: what a transfer copied
    // is its place in the landing order.
    let seq = BASE;
    let (slow_at, fast_at) = (BASE + 8, BASE + 16);
    let post = |at: u64, after: Duration| {
        let bump = Signal::Add64 {
            addr: seq,
            delta: 1,
        };
        e.post(Transfer::copy(seq, at, 1).signal(bump).after(after))
            .unwrap()
    };
    let slow = post(slow_at, Duration::from_millis(200));
    let fast = post(fast_at, Duration::ZERO);
    assert_eq!((slow, fast), (1, 2));
    assert!(
        eventually(|| e.landed() == 1),
        "the fast post lands at once"
    );
    assert_eq!(m.load64(fast_at).unwrap(), 0, "the fast post landed first");
    assert_eq!(e.completed(), 0, "the watermark waits for the slow post");
    clock.advance(Duration::from_millis(200));
    assert!(
        eventually(|| {
            // Watermark first: if it covers the slow post, the slow copy is visible.
            let c = e.completed();
            let landed = m.load64(seq).unwrap();
            assert!(
                c == 0 || landed == 2,
                "watermark {c} with {landed} landed: it passed an unlanded post"
            );
            c == 2
        }),
        "both land"
    );
    assert_eq!(
        m.load64(fast_at).unwrap(),
        0,
        "the later, shorter post landed first"
    );
    assert_eq!(
        m.load64(slow_at).unwrap(),
        1,
        "the earlier, longer post landed second"
    );
    assert_eq!(e.landed(), 2);
}

#[test]
fn a_lost_transfer_stops_the_watermark_but_not_later_landings() {
    let (m, e) = setup(EngineOptions::default());
    let counter = BASE + 1024;
    let bump = Signal::Add64 {
        addr: counter,
        delta: 1,
    };
    m.write(BASE, &[7]).unwrap();
    let ids: Vec<u64> = [
        Transfer::signal_only(bump),
        Transfer::copy(BASE, BASE + 8, 1).signal(bump).lost(),
        Transfer::signal_only(bump),
        Transfer::signal_only(bump),
    ]
    .into_iter()
    .map(|t| e.post(t).unwrap())
    .collect();
    assert_eq!(ids, [1, 2, 3, 4]);
    assert!(eventually(|| e.landed() == 3), "the three others land");
    assert_eq!(e.completed(), 1, "the watermark stops below the lost post");
    assert_eq!(m.load64(counter).unwrap(), 3, "the lost post never signals");
    assert_eq!(m.load64(BASE + 8).unwrap(), 0, "the lost post never copies");
    assert_eq!(e.post(Transfer::signal_only(bump)).unwrap(), 5);
    assert!(eventually(|| e.landed() == 4));
    assert_eq!(e.completed(), 1, "still stuck below the lost post");
}

#[test]
fn dropping_an_engine_with_pending_transfers_returns_promptly() {
    let (m, e) = setup(EngineOptions::default());
    m.write(BASE, &[5]).unwrap();
    for _ in 0..100 {
        e.post(Transfer::copy(BASE, BASE + 8, 1).after(Duration::from_secs(3600)))
            .unwrap();
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(e);
        let _ = tx.send(());
    });
    assert!(rx.recv_timeout(PATIENCE).is_ok(), "drop did not return");
    assert_eq!(
        m.load64(BASE + 8).unwrap(),
        0,
        "pending transfers are dropped"
    );
}

#[test]
fn a_bad_address_is_refused_and_posts_nothing() {
    let (_m, e) = setup(EngineOptions::default());
    let end = BASE + 4096;
    assert!(matches!(
        e.post(Transfer::copy(end, BASE, 1)),
        Err(EngineError::Memory(MemoryError::OutOfRange { addr, len: 8 })) if addr == end
    ));
    assert!(matches!(
        e.post(Transfer::copy(BASE, BASE + 4, 1)),
        Err(EngineError::Memory(MemoryError::Misaligned {
            align: 8,
            ..
        }))
    ));
    assert!(matches!(
        e.post(Transfer::copy(BASE, end - 8, 2)),
        Err(EngineError::Memory(MemoryError::OutOfRange { .. }))
    ));
    assert!(matches!(
        e.post(Transfer::signal_only(Signal::Add32 {
            addr: BASE + 2,
            delta: 1
        })),
        Err(EngineError::Memory(MemoryError::Misaligned {
            align: 4,
            ..
        }))
    ));
    assert!(e.post(Transfer::copy(BASE, BASE, usize::MAX)).is_err());
    assert_eq!(
        e.post(Transfer::copy(BASE, BASE + 8, 1)).unwrap(),
        1,
        "no id was used"
    );
    assert!(eventually(|| e.completed() == 1));
}

#[test]
fn jittered_transfers_all_land_and_the_watermark_reaches_the_last() {
    let opts = EngineOptions {
        latency: Duration::from_micros(10),
        jitter: Duration::from_micros(200),
        seed: 42,
        ..EngineOptions::default()
    };
    let (m, e) = setup(opts);
    let counter = BASE + 2048;
    for i in 0..50u64 {
        m.store64(BASE + 8 * i, i + 1).unwrap();
        let t = Transfer::copy(BASE + 8 * i, BASE + 1024 + 8 * i, 1).signal(Signal::Add32 {
            addr: counter,
            delta: 1,
        });
        assert_eq!(e.post(t).unwrap(), i + 1);
    }
    assert!(eventually(|| e.completed() == 50), "watermark reaches 50");
    assert_eq!((e.landed(), m.load32(counter).unwrap()), (50, 50));
    let mut out = [0; 50];
    m.read(BASE + 1024, &mut out).unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as u64 + 1));
}

#[test]
fn the_watermark_moves_over_contiguous_ids_only() {
    let mut w = Watermark::default();
    assert_eq!(w.land(2), None);
    assert_eq!(w.land(4), None);
    assert_eq!(w.land(1), Some(2));
    assert_eq!(w.land(3), Some(4));
    assert!(w.ahead.is_empty(), "nothing left out of order");
}

#[test]
fn queued_transfers_report_in_posting_order_with_their_status() {
    let opts = EngineOptions {
        queue_capacity: 4,
        ..EngineOptions::default()
    };
    // On a virtual clock: every post is in before any is due, so they land in the order of
    // their latencies (the last first), not in a race with the posting.
    let clock = VirtualClock::new();
    let (m, e) = setup_on(opts, 2, &clock);
    let counter = BASE + 1024;
    // Later posts land first; a failing one copies and signals nothing; queue 1 gets post 2
    // only. Six entries on queue 0 through 4 cells: the engine waits for room.
    let sig = Signal::Add32 {
        addr: counter,
        delta: 1,
    };
    let mut want = Vec::new();
    for i in 0..7u64 {
        let t = Transfer::signal_only(sig).after(Duration::from_micros(300 - 40 * i));
        let (t, queue, status) = match i {
            2 => (t.report_to(1), 1, 0),
            4 => (t.fail(transfer_status::TIMED_OUT).report_to(0), 0, 3),
            _ => (t.report_to(0), 0, 0),
        };
        assert_eq!(e.post(t).unwrap(), i + 1);
        if queue == 0 {
            want.push((i + 1, status));
        }
    }
    clock.advance(Duration::from_micros(300));
    let q = e.queue(0).unwrap();
    let mut got = Vec::new();
    assert!(eventually(|| {
        while let Some(c) = q.pop() {
            assert_eq!(c.source, 3, "entries name their engine");
            got.push((c.id, c.status));
        }
        got.len() == want.len()
    }));
    assert_eq!(got, want, "posting order, whatever the landing order");
    // Post 3 is due before post 1, which every entry of queue 0 waited for.
    let other = e.queue(1).unwrap().pop().map(|c| (c.id, c.status));
    assert_eq!(other, Some((3, 0)), "queue 1 does not wait for queue 0");
    assert!(
        eventually(|| e.landed() == 6),
        "the failed one does not land"
    );
    assert_eq!(m.load32(counter).unwrap(), 6, "nor signal");
    assert_eq!(
        e.completed(),
        4,
        "the watermark stops below the failed post"
    );
    assert!(e.queue(2).is_none());
}

#[test]
fn a_report_to_a_missing_queue_or_a_zero_failure_is_refused() {
    let (_m, e) = setup(EngineOptions::default());
    let t = Transfer::signal_only(Signal::None);
    assert!(matches!(
        e.post(t.report_to(0)),
        Err(EngineError::NoQueue {
            engine: 0,
            scheduler: 0,
            queues: 0
        })
    ));
    assert!(matches!(
        e.post(t.fail(0)),
        Err(EngineError::ZeroFailStatus)
    ));
    assert_eq!(e.post(t).unwrap(), 1, "nothing was posted before");
}
