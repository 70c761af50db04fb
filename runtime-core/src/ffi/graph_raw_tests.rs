//! The graph C layer over a scripted machine, in Rust so that miri runs its unsafe code: the
//! storage carved from a caller's bytes, a handle through its states, bindings and scalars
//! from C arrays, and each refusal's status.

use std::vec;
use std::vec::Vec;

use super::*;
use crate::ffi::task::PtoTensorArg;
use crate::region::config::Config;
use crate::tensor::arg::TensorArg;
use crate::tensor::tile::Tile;
use crate::testing::rig::Rig;

/// 64-byte aligned bytes.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

/// A buffer of 16 words at `k`.
fn buffer(k: u64) -> PtoBuffer {
    PtoBuffer {
        base: 0x4000_0000 + k * 0x1000,
        len: 128,
    }
}

/// All of `b`, read or written.
fn whole(b: PtoBuffer, write: bool) -> PtoTensorArg {
    let b = b.to_buffer();
    let tile = Tile::contiguous(b.base, 8, 16);
    let arg = if write {
        TensorArg::output(b, tile)
    } else {
        TensorArg::input(b, tile)
    };
    PtoTensorArg::from_arg(&arg)
}

fn task(tensors: &[PtoTensorArg], args: &[u64]) -> PtoTask {
    PtoTask {
        kernel: 1,
        class: 1,
        ring: 0,
        blocks: 1,
        args: args.as_ptr(),
        nargs: args.len(),
        deps: core::ptr::null(),
        ndeps: 0,
        tensors: tensors.as_ptr(),
        ntensors: tensors.len(),
        sync_start: 0,
        per_lane: 0,
        aiv_kernels: [0; 2],
        predicate: core::ptr::null(),
    }
}

#[test]
fn a_graph_records_and_replays_through_the_c_layer_and_refuses_what_does_not_fit() {
    let cfg = Config {
        task_window: 64,
        max_args: 2,
        ..Config::tiny()
    };
    let mut rig = Rig::new(cfg, 0);
    rig.p.heap = (0x10_0000, 1 << 20);
    let mut o = rig.orchestrator();
    let mut bytes = 0usize;
    assert_eq!(
        // SAFETY: a valid pointer for the size.
        unsafe { graph_storage_size_c(2, 4, 8, &mut bytes) },
        PtoStatus::PtoOk
    );
    let mut lines = vec![Line([0; 64]); bytes.div_ceil(64) + 1];
    let storage = lines.as_mut_ptr().cast::<c_void>();
    let mut g = PtoGraph { opaque: [0; 1408] };
    let bounds = [buffer(0), buffer(1)];
    let record = |g: *mut PtoGraph, o: &Orchestrator<'_, '_, _>, at: usize, len: usize| {
        // SAFETY: the storage is `lines`, at least `at + len` bytes; the handle is `g`.
        unsafe {
            let s = storage.cast::<u8>().add(at).cast::<c_void>();
            graph_record_c(g, o, (s, len), [2, 4, 8], (bounds.as_ptr(), bounds.len()))
        }
    };
    assert_eq!(
        record(&mut g, &o, 8, bytes),
        PtoStatus::PtoErrGraphStorage,
        "misaligned"
    );
    assert_eq!(
        record(&mut g, &o, 0, bytes - 1),
        PtoStatus::PtoErrGraphStorage,
        "too small"
    );
    assert_eq!(record(&mut g, &o, 0, bytes), PtoStatus::PtoOk);

    // x -> t -> y, through an internal buffer t; the first task's scalar patched.
    let mut t = PtoBuffer::default();
    // SAFETY: `g` is open; `t` is writable.
    unsafe {
        assert_eq!(graph_internal_c(&mut g, 128, 64, &mut t), PtoStatus::PtoOk);
        let first = [whole(bounds[0], false), whole(t, true)];
        let second = [whole(t, false), whole(bounds[1], true)];
        let mut node = 9;
        let one = [7u64];
        let none = (core::ptr::null(), 0);
        assert_eq!(
            graph_add_c(&mut g, &o, &task(&first, &one), none, &mut node),
            PtoStatus::PtoOk
        );
        assert_eq!(node, 0);
        let after = [0u32];
        let named = (after.as_ptr(), 1);
        assert_eq!(
            graph_add_c(&mut g, &o, &task(&second, &[]), named, &mut node),
            PtoStatus::PtoOk
        );
        assert_eq!(node, 1);
        assert_eq!(
            graph_patch_c(&mut g, 0, 1, 0),
            PtoStatus::PtoErrGraphBadPatch
        );
        assert_eq!(graph_patch_c(&mut g, 0, 0, 0), PtoStatus::PtoOk);
        let empty = (core::ptr::null(), 0);
        let replay = |o: &mut Orchestrator<'_, '_, _>,
                      g: *mut PtoGraph,
                      b: &[PtoBuffer],
                      s: &[u64],
                      flags,
                      out| {
            graph_replay_c(
                o,
                g,
                (b.as_ptr(), core::ptr::null(), b.len()),
                (s.as_ptr(), s.len()),
                (0, flags, empty.0, empty.1),
                out,
            )
        };
        let mut inst = PtoInstance::default();
        assert_eq!(
            replay(&mut o, &mut g, &bounds, &[1], 0, &mut inst),
            PtoStatus::PtoErrGraphState
        );
        assert_eq!(graph_finish_c(&mut g), PtoStatus::PtoOk);
        assert_eq!(graph_finish_c(&mut g), PtoStatus::PtoErrGraphState);
        assert_eq!(
            replay(&mut o, &mut g, &bounds, &[], 0, &mut inst),
            PtoStatus::PtoErrGraphWrongScalars
        );
        let same = [buffer(2), buffer(2)];
        assert_eq!(
            replay(&mut o, &mut g, &same, &[1], 0, &mut inst),
            PtoStatus::PtoErrGraphAliased
        );
        let mut seen = Vec::new();
        for (k, b) in [[buffer(2), buffer(3)], [buffer(3), buffer(4)]]
            .iter()
            .enumerate()
        {
            assert_eq!(
                replay(&mut o, &mut g, b, &[40 + k as u64], 0, &mut inst),
                PtoStatus::PtoOk
            );
            assert_eq!((inst.tasks, inst.fell_back), (2, 0));
            seen.push(inst.first);
        }
        assert_eq!(seen[1], seen[0] + 2, "consecutive instances");
        let flags = PtoReplayFlags::PtoReplayOrSubmit as u32;
        assert_eq!(
            replay(&mut o, &mut g, &same, &[1], flags, &mut inst),
            PtoStatus::PtoOk
        );
        assert_eq!(inst.fell_back, PtoStatus::PtoErrGraphAliased as i32);
        // Through a `PtoReplay`: shifts along the bindings. The tasks touch all of each
        // buffer, so only no shift fits; a refused one submits nothing.
        let b = [buffer(5), buffer(6)];
        let scalars = [1u64];
        let with = |shifts: &[i64; 2]| PtoReplay {
            buffers: b.as_ptr(),
            nbuffers: b.len(),
            shifts: shifts.as_ptr(),
            scalars: scalars.as_ptr(),
            nscalars: 1,
            after: core::ptr::null(),
            nafter: 0,
            flags: 0,
            ring: 0,
        };
        let before = o.submitted();
        assert_eq!(
            graph_replay_with_c(&mut o, &mut g, &with(&[8, 0]), &mut inst),
            PtoStatus::PtoErrGraphWrongSize
        );
        assert_eq!(o.submitted(), before);
        assert_eq!(
            graph_replay_with_c(&mut o, &mut g, core::ptr::null(), &mut inst),
            PtoStatus::PtoErrNull
        );
        assert_eq!(
            graph_replay_with_c(&mut o, &mut g, &with(&[0, 0]), &mut inst),
            PtoStatus::PtoOk
        );
        assert_eq!((inst.tasks, inst.first), (2, seen[1] + 4));
        assert_eq!(graph_close_c(&mut g), PtoStatus::PtoOk);
        assert_eq!(
            replay(&mut o, &mut g, &bounds, &[1], 0, &mut inst),
            PtoStatus::PtoErrGraphState
        );
        assert_eq!(
            graph_add_c(
                core::ptr::null_mut(),
                &o,
                &task(&first, &one),
                none,
                &mut node
            ),
            PtoStatus::PtoErrNull
        );
    }
    // The patched scalar reached each instance's first task.
    let tables = rig.tables();
    let arg0 = |seq: usize| {
        tables.args_of(crate::tables::SlotIndex::at(seq))[0].load(crate::sync::Ordering::Relaxed)
    };
    assert_eq!((arg0(0), arg0(2)), (40, 41));
}
