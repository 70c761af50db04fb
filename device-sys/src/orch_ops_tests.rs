//! The operations table over a real orchestrator: every operation asks the gate, a closed
//! gate fails it with `PtoErrRun`, a null `ctx` is refused, and the table names its ABI.
#![allow(unsafe_code)]

use core::ffi::{CStr, c_void};

use pto_runtime_core::ffi::PtoStatus;
use pto_runtime_core::{
    Config, CoreId, KernelId, Payload, Platform, RegionLayout, ResultWord, Runtime, StatusWord,
    Token,
};

use crate::abi::{PTO_AICPU_ABI, PtoOrchOps};
use crate::orch_ops::orchestrate;

/// A platform with no cores: the orchestrator only reads its clock.
struct NoCores;

impl Platform for NoCores {
    fn now(&self) -> u64 {
        0
    }
    fn ticks_per_us(&self) -> u64 {
        1
    }
    fn has_kernel(&self, _: KernelId) -> bool {
        true
    }
    fn write_payload(&self, _: CoreId, _: Token, _: &Payload<'_>) {}
    fn ring_doorbell(&self, _: CoreId, _: Token) {}
    fn core_status(&self, _: CoreId) -> StatusWord {
        StatusWord::NONE
    }
    fn result(&self, _: CoreId, _: Token) -> ResultWord {
        ResultWord::default()
    }
    fn spin_hint(&self, _idle: u32) {}
}

/// 64-byte aligned bytes for the region.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

/// Runs `entry` through the table over a fresh runtime, with `gate`; its return code.
fn run_with(
    entry: unsafe extern "C" fn(*const PtoOrchOps, *const u64, u32) -> i32,
    gate: impl FnMut() -> bool,
    args: &[u64],
) -> i32 {
    let cfg = Config::tiny();
    let size = RegionLayout::new(&cfg).unwrap().size();
    let mut lines = std::vec![Line([0; 64]); size.div_ceil(64)];
    // SAFETY: `Line` is plain bytes; the slice covers exactly the vector's storage.
    let bytes = unsafe { core::slice::from_raw_parts_mut(lines.as_mut_ptr().cast::<u8>(), size) };
    let rt = Runtime::init(bytes, cfg).unwrap();
    let mut o = rt.orchestrator(&NoCores).unwrap();
    let n = args.len() as u32;
    // SAFETY: `entry` is one of this file's orchestration functions; `args` holds `n` words.
    unsafe { orchestrate(&mut o, gate, entry, args.as_ptr(), n) }
}

/// Opens and closes a scope; the first failing code, or the ABI check's.
unsafe extern "C" fn scopes(ops: *const PtoOrchOps, args: *const u64, nargs: u32) -> i32 {
    // SAFETY: `orchestrate` passes a valid table and `nargs` words.
    unsafe {
        let ops = &*ops;
        if ops.abi != PTO_AICPU_ABI || nargs != 1 || *args != 42 {
            return -1000;
        }
        let rc = (ops.scope_begin)(ops.ctx);
        if rc != 0 {
            return rc;
        }
        (ops.scope_end)(ops.ctx)
    }
}

/// Calls `scope_begin` with a null `ctx`.
unsafe extern "C" fn null_ctx(ops: *const PtoOrchOps, _: *const u64, _: u32) -> i32 {
    // SAFETY: as for `scopes`; a null `ctx` is part of the contract's checked input.
    unsafe { ((*ops).scope_begin)(core::ptr::null_mut::<c_void>()) }
}

/// Checks the status sentence of `PtoErrRun`.
unsafe extern "C" fn sentence(ops: *const PtoOrchOps, _: *const u64, _: u32) -> i32 {
    // SAFETY: as for `scopes`; `status_str` returns a static C string.
    let s = unsafe { CStr::from_ptr(((*ops).status_str)(PtoStatus::PtoErrRun as i32)) };
    i32::from(s.to_bytes().is_empty())
}

#[test]
fn every_operation_asks_the_gate_and_an_open_gate_lets_it_through() {
    let mut asked = 0;
    let rc = run_with(
        scopes,
        || {
            asked += 1;
            true
        },
        &[42],
    );
    assert_eq!(rc, 0);
    assert_eq!(asked, 2, "scope_begin and scope_end each asked");
}

#[test]
fn a_closed_gate_fails_the_operation_with_err_run() {
    let rc = run_with(scopes, || false, &[42]);
    assert_eq!(rc, PtoStatus::PtoErrRun as i32);
}

#[test]
fn a_null_ctx_is_refused() {
    let rc = run_with(null_ctx, || true, &[]);
    assert_eq!(rc, PtoStatus::PtoErrNull as i32);
}

#[test]
fn the_status_sentence_is_not_empty() {
    assert_eq!(run_with(sentence, || true, &[]), 0);
}
