//! A fake chip for the harness: register windows in mapped memory at the chip's strides,
//! handshake blocks and payload slots, and one thread per AICore running the executor
//! (`device-sys/aicore/executor.cpp`, built for the host) against its window.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;
use std::thread::JoinHandle;

use pto_device_sys::chip::layout::{
    CLUSTER_STRIDE, CORE_AIC, CORE_AIV, Handshake, MAX_PHYSICAL_CORES, REG_COND,
    REG_DATA_MAIN_BASE, REG_FAST_PATH, SUBCORE_STRIDE, Slot,
};

unsafe extern "C" {
    fn pto_aicore_run(hs: *mut Handshake, block_idx: u32, core_type: u32);
    fn pto_host_bind_core(window: *mut u32, physical_core_id: u32);
    fn pto_host_set_idle_limit(seconds: u32);
}

/// Memory that stays put for the chip's life.
struct Mapped {
    p: NonNull<u8>,
    layout: Layout,
}

impl Mapped {
    fn new(bytes: usize, align: usize) -> Self {
        let layout = Layout::from_size_align(bytes, align).unwrap();
        // SAFETY: a non-zero size.
        let p = NonNull::new(unsafe { alloc_zeroed(layout) }).expect("allocation");
        Mapped { p, layout }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { dealloc(self.p.as_ptr(), self.layout) }
    }
}

/// Raw addresses handed to threads.
#[derive(Clone, Copy)]
struct Addr(usize);

/// The fake chip: `aic` cube and `aiv` vector cores in clusters of one AIC and two AIV.
pub struct Chip {
    pub aic: usize,
    pub aiv: usize,
    _regs: Mapped,
    handshakes: Mapped,
    slots: Mapped,
    table: Vec<u64>,
    running: Vec<JoinHandle<()>>,
}

// SAFETY: the chip's memory is shared with the SO and the executor threads by design; the
// harness touches it only with volatile accesses while they run.
unsafe impl Send for Chip {}
// SAFETY: as above.
unsafe impl Sync for Chip {}

impl Chip {
    /// A chip with `aic` AIC and `aiv` AIV cores (`aiv <= 2 aic`).
    pub fn new(aic: usize, aiv: usize) -> Self {
        assert!(aiv <= 2 * aic);
        let regs = Mapped::new(aic * CLUSTER_STRIDE, 4096);
        let cores = aic + aiv;
        let handshakes = Mapped::new(cores * size_of::<Handshake>(), 64);
        let slots = Mapped::new(cores * 2 * size_of::<Slot>(), 64);
        let mut table = vec![0u64; MAX_PHYSICAL_CORES as usize];
        for (cluster, sub) in (0..cores).map(|i| Self::place(aic, i)) {
            let w = regs.p.as_ptr() as usize + cluster * CLUSTER_STRIDE + sub * SUBCORE_STRIDE;
            table[cluster * 3 + sub] = w as u64;
        }
        // SAFETY: the shim's idle limit is a plain setting.
        unsafe { pto_host_set_idle_limit(20) };
        Chip {
            aic,
            aiv,
            _regs: regs,
            handshakes,
            slots,
            table,
            running: Vec::new(),
        }
    }

    /// Cluster and subcore of logical core `i` (AIC first, then AIV).
    fn place(aic: usize, i: usize) -> (usize, usize) {
        if i < aic {
            (i, 0)
        } else {
            ((i - aic) / 2, 1 + (i - aic) % 2)
        }
    }

    /// Cores in all.
    pub fn cores(&self) -> usize {
        self.aic + self.aiv
    }

    /// Addresses for the exec payload: handshakes, slots, the register table.
    pub fn addrs(&self) -> (u64, u64, u64, u32) {
        (
            self.handshakes.p.as_ptr() as u64,
            self.slots.p.as_ptr() as u64,
            self.table.as_ptr() as u64,
            self.table.len() as u32,
        )
    }

    fn hs(&self, i: usize) -> *mut Handshake {
        // SAFETY: `i < cores`, inside the handshake blocks.
        unsafe { (self.handshakes.p.as_ptr() as *mut Handshake).add(i) }
    }

    fn window(&self, i: usize) -> *mut u32 {
        let (c, s) = Self::place(self.aic, i);
        self.table[c * 3 + s] as usize as *mut u32
    }

    /// Register `offset` of core `i`.
    pub fn reg(&self, i: usize, offset: usize) -> u32 {
        // SAFETY: an aligned word inside the core's window.
        unsafe { self.window(i).add(offset / 4).read_volatile() }
    }

    /// Writes register `offset` of core `i` (what a core of an earlier run may have left).
    pub fn poke(&self, i: usize, offset: usize, v: u32) {
        // SAFETY: as for `reg`; no executor runs.
        unsafe { self.window(i).add(offset / 4).write_volatile(v) }
    }

    /// Launches the executors (as the host launches the AICore kernel before the AICPU's),
    /// except on the cores in `skip`. The host zeroes `aicore_done` and `aicpu_ready` first.
    pub fn launch(&mut self, skip: &[usize]) {
        assert!(
            self.running.is_empty(),
            "executors of the last run still joined"
        );
        for i in 0..self.cores() {
            let hs = self.hs(i);
            // SAFETY: fields of a block no executor uses now.
            unsafe {
                (&raw mut (*hs).aicore_done).write_volatile(0);
                (&raw mut (*hs).aicpu_ready).write_volatile(0);
            }
        }
        for i in (0..self.cores()).filter(|i| !skip.contains(i)) {
            let (c, s) = Self::place(self.aic, i);
            let (hs, w) = (Addr(self.hs(i) as usize), Addr(self.window(i) as usize));
            let ty = if i < self.aic { CORE_AIC } else { CORE_AIV };
            let id = (c * 3 + s) as u32;
            self.running.push(std::thread::spawn(move || {
                let (hs, w) = (hs, w);
                // SAFETY: the window and block belong to this core for the run; the
                // executor returns after the exit handshake (or its idle limit).
                unsafe {
                    pto_host_bind_core(w.0 as *mut u32, id);
                    pto_aicore_run(hs.0 as *mut Handshake, i as u32, ty);
                }
            }));
        }
    }

    /// Waits for every executor to return.
    pub fn join(&mut self) {
        for h in self.running.drain(..) {
            h.join().expect("executor thread");
        }
    }

    /// Whether every window was closed (`FAST_PATH` closed, `DATA_MAIN_BASE` idle) and every
    /// core acknowledged its exit.
    pub fn all_closed(&self) -> bool {
        (0..self.cores()).all(|i| {
            self.reg(i, REG_FAST_PATH) == 0xF
                && self.reg(i, REG_DATA_MAIN_BASE) == 0x7FFF_FFFD
                && self.reg(i, REG_COND) == 0xFFFF_FFFE
        })
    }
}

impl Drop for Chip {
    fn drop(&mut self) {
        self.join();
    }
}
