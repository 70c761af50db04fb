//! The chip handshake's AICPU side without an executor: the test plays the core by writing
//! its handshake block and `COND` by hand, and reads what the AICPU wrote.

use std::ptr::NonNull;

use pto_device_sys::Coherence;
use pto_device_sys::chip::layout::{
    COND_EXIT_ACK, CORE_AIC, CORE_AIV, DMB_EXIT, DMB_IDLE, FAST_PATH_CLOSED, FAST_PATH_OPEN,
    Handshake, REG_COND, REG_DATA_MAIN_BASE, REG_FAST_PATH, SLOT_ARGS, Slot, WINDOW_BYTES,
};
use pto_device_sys::chip::{
    ChipConfig, ChipError, ChipPlatform, OpenArgs, StallLog, close_core, open_core,
};
use pto_device_sys::raw::chip::{HandshakeRef, RegTable, SlotPair};
use pto_device_sys::raw::memory::{EngineWords, WatchedMemory};
use pto_runtime_core::ffi::PtoTensor;
use pto_runtime_core::{
    Buffer, CoreId, Dtype, KernelId, KernelTensor, Payload, Platform, ResultWord, Stall,
    StatusWord, TaskId, TensorArg, Tile, Token,
};

/// Ticks per µs for the waits' bounds (a guess is enough: they only bound waits).
const TICKS: u64 = 100;

/// One core's memory, leaked (the handles are `'static`); the test touches it only through
/// raw pointers, as the core would.
struct Core {
    hs: *mut Handshake,
    slots: *mut [Slot; 2],
    window: *mut u32,
    table: &'static [u64],
}

/// Reads a handshake field.
macro_rules! hs {
    ($c:expr, $f:ident) => {
        // SAFETY: a field of the leaked block.
        unsafe { (&raw const (*$c.hs).$f).read_volatile() }
    };
    ($c:expr, $f:ident = $v:expr) => {
        // SAFETY: a field of the leaked block; the AICPU side reads it volatile too.
        unsafe { (&raw mut (*$c.hs).$f).write_volatile($v) }
    };
}

impl Core {
    /// A core with physical id 4 whose executor announced itself as `ty`.
    fn up(ty: u32) -> Self {
        let window: &'static mut [u32] = Vec::leak(vec![0; WINDOW_BYTES / 4]);
        let mut table = vec![0u64; 8];
        table[4] = window.as_ptr() as u64;
        let c = Core {
            hs: Box::leak(Box::new(Handshake::default())),
            slots: Box::leak(Box::new([Slot::ZERO; 2])),
            window: window.as_mut_ptr(),
            table: Vec::leak(table),
        };
        hs!(c, physical_core_id = 4);
        hs!(c, core_type = ty);
        hs!(c, aicore_done = 1);
        c
    }

    fn args(&self, want_type: u32) -> OpenArgs<'static> {
        OpenArgs {
            core: 0,
            // SAFETY: leaked memory, touched elsewhere only by volatile accesses.
            hs: unsafe { HandshakeRef::new(NonNull::new(self.hs).unwrap()) },
            // SAFETY: as above.
            slots: unsafe { SlotPair::new(NonNull::new(self.slots).unwrap()) },
            // SAFETY: entry 4 names the leaked window, WINDOW_BYTES long.
            regs: unsafe { RegTable::new(self.table) },
            want_type,
            ticks_per_us: TICKS,
            timeout_us: 2_000,
            coherence: Coherence::Coherent,
        }
    }

    fn reg(&self, off: usize) -> u32 {
        // SAFETY: inside the leaked window.
        unsafe { self.window.add(off / 4).read_volatile() }
    }

    fn set_reg(&self, off: usize, v: u32) {
        // SAFETY: as for `reg`.
        unsafe { self.window.add(off / 4).write_volatile(v) }
    }

    /// Slot `i` (a copy).
    fn slot(&self, i: usize) -> Slot {
        // SAFETY: inside the leaked slots.
        unsafe { (&raw const (*self.slots)[i]).read_volatile() }
    }
}

#[test]
fn a_core_whose_executor_never_answers_is_reported_after_the_timeout() {
    let c = Core::up(CORE_AIC);
    hs!(c, aicore_done = 0);
    let e = open_core(c.args(CORE_AIC)).map(|_| ()).unwrap_err();
    assert!(
        matches!(e, (ChipError::CoreNotUp { core: 0, .. }, None)),
        "{e:?}"
    );
}

#[test]
fn a_core_id_without_a_window_and_a_wrong_type_are_refused() {
    let c = Core::up(CORE_AIC);
    hs!(c, physical_core_id = 5);
    let e = open_core(c.args(CORE_AIC)).map(|_| ()).unwrap_err();
    assert_eq!(e.0, ChipError::BadCoreId { core: 0, id: 5 });
    let c = Core::up(CORE_AIV);
    let e = open_core(c.args(CORE_AIC)).map(|_| ()).unwrap_err();
    assert_eq!(
        e.0,
        ChipError::WrongCoreType {
            core: 0,
            got: CORE_AIV,
            want: CORE_AIC
        }
    );
    assert!(e.0.to_string().contains("AIC cores come first"));
}

#[test]
fn a_stale_cond_is_refused_but_the_core_is_opened_so_it_can_be_sent_the_exit() {
    let c = Core::up(CORE_AIC);
    c.set_reg(REG_COND, 0x8000_0009);
    let (e, core) = open_core(c.args(CORE_AIC)).map(|_| ()).unwrap_err();
    assert_eq!(
        e,
        ChipError::StaleCond {
            core: 0,
            value: 0x8000_0009
        }
    );
    let core = core.expect("opened anyway");
    assert_eq!(c.reg(REG_FAST_PATH), FAST_PATH_OPEN);
    assert_eq!(c.reg(REG_DATA_MAIN_BASE), DMB_IDLE);
    c.set_reg(REG_COND, COND_EXIT_ACK);
    hs!(c, aicore_exited = 1);
    assert_eq!(close_core(&core, TICKS, 1_000), Ok(()));
    assert_eq!(c.reg(REG_FAST_PATH), FAST_PATH_CLOSED);
}

#[test]
fn an_earlier_runs_exit_acknowledgement_is_not_taken_for_this_runs() {
    let c = Core::up(CORE_AIC);
    hs!(c, aicore_exited = 1);
    // What the last run's exit left in COND; this run dispatched nothing to the core.
    c.set_reg(REG_COND, COND_EXIT_ACK);
    let core = open_core(c.args(CORE_AIC)).map_err(|e| e.0).unwrap();
    assert_eq!(hs!(c, aicore_exited), 0, "opening clears the flag");
    let e = close_core(&core, TICKS, 300).unwrap_err();
    assert!(
        matches!(e, ChipError::ExitNotAcked { core: 0, .. }),
        "the executor has not left yet: {e:?}"
    );
    assert_eq!(c.reg(REG_DATA_MAIN_BASE), DMB_EXIT, "the exit stays for it");
    hs!(c, aicore_exited = 1);
    assert_eq!(close_core(&core, TICKS, 300), Ok(()));
}

#[test]
fn dispatch_status_result_and_exit_through_the_window() {
    let c = Core::up(CORE_AIC);
    hs!(c, base_token = 41);
    c.set_reg(REG_COND, COND_EXIT_ACK);
    let slots_addr = c.slots as u64;
    let core = open_core(c.args(CORE_AIC)).map_err(|e| e.0).unwrap();
    assert_eq!(hs!(c, aicpu_ready), 1);
    assert_eq!(
        hs!(c, task),
        slots_addr,
        "the core is told where its slots are"
    );
    let cores = [core];
    let kernels = [0x1000u64, 0];
    let p = ChipPlatform::new(ChipConfig {
        cores: &cores,
        kernels: &kernels,
        memory: WatchedMemory::NONE,
        engines: EngineWords::NONE,
        ticks_per_us: TICKS,
        coherence: Coherence::Coherent,
        heap: (0, 0),
        stalls: None,
        idle: None,
        producers: None,
    });
    let id = CoreId(0);
    assert!(p.has_kernel(KernelId(0)) && !p.has_kernel(KernelId(1)));
    assert!(!p.has_kernel(KernelId(2)));
    // Before the core's first report, the last run's exit acknowledgement reads as FIN of
    // the base token: the scheduler's tokens continue after it.
    assert_eq!(p.core_status(id), StatusWord::fin(Token::new(41)));
    let t = Token::new(42);
    let payload = Payload {
        task: TaskId::from_raw(7),
        kernel: KernelId(0),
        lane: 0,
        lanes: 1,
        block: 0,
        blocks: 1,
        args: &[5, 6],
        tensors: &[],
        profile: false,
    };
    p.write_payload(id, t, &payload);
    p.ring_doorbell(id, t);
    assert_eq!(c.reg(REG_DATA_MAIN_BASE), 42);
    let s = c.slot(0);
    assert_eq!(
        (s.kernel_addr, s.task, s.args[0], s.args[1]),
        (0x1000, 7, 5, 6)
    );
    assert_eq!(s.shape >> 16 & 0xff, 2, "two arguments");
    c.set_reg(REG_COND, 42);
    assert_eq!(p.core_status(id), StatusWord::ack(t));
    // SAFETY: inside the leaked slots.
    let slot: *mut Slot = unsafe { &raw mut (*c.slots)[0] };
    // SAFETY: the test plays the core writing its slot's result word.
    unsafe { (&raw mut (*slot).result).write_volatile(ResultWord::failed(t, 3).bits()) };
    c.set_reg(REG_COND, 0x8000_0000 | 42);
    assert_eq!(p.core_status(id), StatusWord::fin(t));
    assert_eq!(p.result(id, t), ResultWord::failed(t, 3));
    // No acknowledgement: the exit stays in the register for a core that frees itself.
    let e = close_core(&cores[0], TICKS, 500).unwrap_err();
    assert!(
        matches!(
            e,
            ChipError::ExitNotAcked {
                core: 0,
                cond: 0x8000_002a,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(c.reg(REG_DATA_MAIN_BASE), DMB_EXIT);
    assert_eq!(
        hs!(c, base_token),
        42,
        "the next run continues after token 42"
    );
    c.set_reg(REG_COND, COND_EXIT_ACK);
    hs!(c, aicore_exited = 1);
    assert_eq!(close_core(&cores[0], TICKS, 500), Ok(()));
    assert_eq!(c.reg(REG_DATA_MAIN_BASE), DMB_IDLE);
}

/// A core opened with `coherence`, its slots given `per_slot` tensor descriptors each, and
/// the platform over it (with a stall log).
/// A 5-dimensional tile of 8-byte elements at `base`.
fn five_dims(base: u64) -> Tile {
    Tile {
        base,
        elem: 8,
        rank: 5,
        shape: [2, 1, 3, 1, 2],
        strides: [48, 24, 8, 4, 1],
    }
}

fn platform_with_tensors(
    c: &Core,
    coherence: Coherence,
    descs: &'static mut [PtoTensor],
    log: &'static StallLog,
) -> ChipPlatform<'static> {
    c.set_reg(REG_COND, COND_EXIT_ACK);
    let per_slot = descs.len() / 2;
    let mut args = c.args(CORE_AIC);
    args.coherence = coherence;
    // SAFETY: leaked descriptors, read by this test only.
    args.slots = unsafe {
        args.slots
            .with_tensors(NonNull::new(descs.as_mut_ptr()).unwrap(), per_slot)
    };
    let core = open_core(args).map_err(|e| e.0).unwrap();
    ChipPlatform::new(ChipConfig {
        cores: Vec::leak(vec![core]),
        kernels: Vec::leak(vec![0x1000u64]),
        memory: WatchedMemory::NONE,
        engines: EngineWords::NONE,
        ticks_per_us: TICKS,
        coherence,
        heap: (0, 0),
        stalls: Some(log),
        idle: None,
        producers: None,
    })
}

#[test]
fn tensors_reach_the_kernel_as_addresses_then_descriptors_in_both_coherence_modes() {
    for coherence in [Coherence::Coherent, Coherence::Manual] {
        let c = Core::up(CORE_AIC);
        let descs = Vec::leak(vec![PtoTensor::default(); 4]);
        let dp = descs.as_ptr() as u64;
        let log = Box::leak(Box::new(StallLog::new()));
        let p = platform_with_tensors(&c, coherence, descs, log);
        let b = Buffer::new(0x4000, 1 << 12);
        let tensors = [
            KernelTensor::from(&TensorArg::input(b, Tile::contiguous(0x4000, 4, 16))),
            KernelTensor::from(&TensorArg::output(b, five_dims(0x4100)).typed(Dtype::I64)),
        ];
        for (t, parity) in [(Token::new(1), 1usize), (Token::new(2), 0)] {
            let payload = Payload {
                task: TaskId::from_raw(9),
                kernel: KernelId(0),
                lane: 0,
                lanes: 1,
                block: 0,
                blocks: 1,
                args: &[77],
                tensors: &tensors,
                profile: false,
            };
            p.write_payload(CoreId(0), t, &payload);
            p.ring_doorbell(CoreId(0), t);
            let s = c.slot(parity);
            assert_eq!(
                (s.ntensors, s.args[0], s.args[1], s.args[2]),
                (2, 0x4000, 0x4100, 77),
                "tensor addresses, then scalars"
            );
            assert_eq!(s.shape >> 16 & 0xff, 3, "three argument words");
            let at = dp + (parity * 2 * size_of::<PtoTensor>()) as u64;
            assert_eq!(s.tensors, at, "the slot's own descriptors");
            // SAFETY: inside the leaked descriptors, written before the doorbell.
            let d = unsafe { (at as usize as *const PtoTensor).add(1).read_volatile() };
            assert_eq!(d, PtoTensor::from_kernel(&tensors[1]), "{coherence:?}");
        }
        // Three tensors do not fit two descriptors: the kernel gets the addresses only.
        let three = [tensors[0], tensors[1], tensors[0]];
        let payload = Payload {
            task: TaskId::from_raw(10),
            kernel: KernelId(0),
            lane: 0,
            lanes: 1,
            block: 0,
            blocks: 1,
            args: &[],
            tensors: &three,
            profile: false,
        };
        p.write_payload(CoreId(0), Token::new(3), &payload);
        let s = c.slot(1);
        assert_eq!((s.ntensors, s.tensors, s.args[2]), (3, 0, 0x4000));
        assert_eq!(s.kernel_addr, 0x1000);
        // More words than a slot holds: sent without a kernel, so the task fails.
        let args = [1u64; SLOT_ARGS];
        let payload = Payload {
            task: TaskId::from_raw(11),
            args: &args,
            tensors: &tensors[..1],
            ..payload
        };
        p.write_payload(CoreId(0), Token::new(4), &payload);
        assert_eq!(c.slot(0).kernel_addr, 0, "no kernel for a cut payload");
        // What a stopping scheduler tells goes to the log.
        let stall = Stall::Running {
            task: TaskId::from_raw(9),
            core: CoreId(0),
            for_us: Some(5),
        };
        p.stalled(stall);
        assert_eq!(log.entries().next().and_then(|e| e.stall()), Some(stall));
    }
}

#[test]
fn a_configuration_wider_than_a_slot_does_not_fit() {
    let cfg = pto_runtime_core::Config::default();
    assert_eq!(ChipPlatform::fits(&cfg), Ok(()));
    let most = pto_runtime_core::Config {
        max_args: 32,
        max_tensors: 16,
        ..cfg
    };
    assert_eq!(
        ChipPlatform::fits(&most),
        Ok(()),
        "16 tensors and 32 scalars fit"
    );
    let wide = pto_runtime_core::Config {
        max_tensors: 17,
        ..most
    };
    assert_eq!(ChipPlatform::fits(&wide), Err(49));
}
