//! The scheduler core's `Platform` over the callbacks of a [`PtoPlatform`].
#![deny(unsafe_code)]

use pto_runtime_core::{
    CoreId, KernelId, MAX_TENSORS, Payload, Platform, RawCondition, ResultWord, StatusWord, Token,
    Watch,
};

use crate::types::{PtoCondition, PtoPayload, PtoPlatform, PtoTensor};

/// A `PtoPlatform` whose required callbacks are all present.
#[derive(Debug)]
pub(crate) struct CPlatform {
    p: PtoPlatform,
    now: extern "C" fn(*mut core::ffi::c_void) -> u64,
    write_payload: extern "C" fn(*mut core::ffi::c_void, u16, u32, *const PtoPayload),
    ring_doorbell: extern "C" fn(*mut core::ffi::c_void, u16, u32),
    core_status: extern "C" fn(*mut core::ffi::c_void, u16) -> u32,
    result: extern "C" fn(*mut core::ffi::c_void, u16, u32) -> u64,
}

#[allow(unsafe_code)]
// SAFETY: the ABI's contract (see `PtoPlatform`): every callback may run on several threads
// at once, and `ctx` is shared by design.
unsafe impl Sync for CPlatform {}
#[allow(unsafe_code)]
// SAFETY: as above.
unsafe impl Send for CPlatform {}

impl CPlatform {
    /// The platform, if the required callbacks are set and the clock is usable.
    pub(crate) fn new(p: &PtoPlatform) -> Option<Self> {
        if p.ticks_per_us == 0 {
            return None;
        }
        Some(CPlatform {
            p: *p,
            now: p.now?,
            write_payload: p.write_payload?,
            ring_doorbell: p.ring_doorbell?,
            core_status: p.core_status?,
            result: p.result?,
        })
    }
}

fn kind_of(w: Watch) -> (u32, u64) {
    let raw = RawCondition::encode(pto_runtime_core::Condition {
        watch: w,
        expected: 0,
    });
    (raw.kind, raw.word)
}

impl Platform for CPlatform {
    fn now(&self) -> u64 {
        (self.now)(self.p.ctx)
    }

    fn ticks_per_us(&self) -> u64 {
        self.p.ticks_per_us
    }

    fn has_kernel(&self, kernel: KernelId) -> bool {
        kernel.0 < self.p.kernels
    }

    fn write_payload(&self, core: CoreId, token: Token, payload: &Payload<'_>) {
        let mut c = PtoPayload {
            task: payload.task.raw(),
            kernel: payload.kernel.0,
            lane: payload.lane,
            lanes: payload.lanes,
            profile: payload.profile as u8,
            block: payload.block,
            blocks: payload.blocks,
            args: payload.args.as_ptr(),
            nargs: payload.args.len(),
            tensors: core::ptr::null(),
            ntensors: 0,
        };
        if payload.tensors.is_empty() {
            (self.write_payload)(self.p.ctx, core.0, token.bits(), &c);
            return;
        }
        // The C view of the task's tensors, for the call's duration.
        let mut tensors = [PtoTensor::default(); MAX_TENSORS as usize];
        for (d, t) in tensors.iter_mut().zip(payload.tensors) {
            *d = PtoTensor::from_kernel(t);
        }
        c.tensors = tensors.as_ptr();
        c.ntensors = payload.tensors.len().min(tensors.len());
        (self.write_payload)(self.p.ctx, core.0, token.bits(), &c);
    }

    fn ring_doorbell(&self, core: CoreId, token: Token) {
        (self.ring_doorbell)(self.p.ctx, core.0, token.bits());
    }

    fn core_status(&self, core: CoreId) -> StatusWord {
        StatusWord::from_bits((self.core_status)(self.p.ctx, core.0))
    }

    fn result(&self, core: CoreId, token: Token) -> ResultWord {
        ResultWord::from_bits((self.result)(self.p.ctx, core.0, token.bits()))
    }

    fn lane_times(&self, core: CoreId, token: Token) -> Option<(u64, u64)> {
        let f = self.p.lane_times?;
        let (mut s, mut e) = (0u64, 0u64);
        f(self.p.ctx, core.0, token.bits(), &mut s, &mut e).then_some((s, e))
    }

    fn conditions(&self, core: CoreId, token: Token) -> usize {
        self.p
            .conditions
            .map_or(0, |f| f(self.p.ctx, core.0, token.bits()) as usize)
    }

    fn condition(&self, core: CoreId, token: Token, i: usize) -> Option<RawCondition> {
        let f = self.p.condition?;
        let mut c = PtoCondition::default();
        if !f(self.p.ctx, core.0, token.bits(), i as u32, &mut c) {
            return None;
        }
        Some(RawCondition {
            kind: c.kind,
            reserved: 0,
            word: c.word,
            expected: c.expected,
        })
    }

    fn heap(&self) -> (u64, u64) {
        if self.p.heap_len == 0 {
            (0, 0)
        } else {
            (self.p.heap_base, self.p.heap_len)
        }
    }

    fn read_watch(&self, watch: Watch) -> Option<u64> {
        let f = self.p.read_watch?;
        let (kind, word) = kind_of(watch);
        let mut v = 0u64;
        f(self.p.ctx, kind, word, &mut v).then_some(v)
    }

    // The image's callbacks do their own cache maintenance around the words they read (the
    // trait's default `invalidate` does nothing).

    fn spin_hint(&self, _idle: u32) {
        match self.p.spin_hint {
            Some(f) => f(self.p.ctx),
            None => core::hint::spin_loop(),
        }
    }
}
