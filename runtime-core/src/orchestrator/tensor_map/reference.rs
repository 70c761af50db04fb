//! A plain reference for the tensor map (tests only): every live argument in a list, and a
//! lookup that scans them all. What the map finds for a new task must be exactly this.

use std::vec::Vec;

use crate::orchestrator::tensor_map::TensorArg;

use crate::tensor::tile::same_bytes;
pub(super) use crate::tensor::tile::share_a_byte;

/// Every live argument, with the sequence number of its task.
#[derive(Default)]
pub(super) struct Reference {
    live: Vec<(u64, TensorArg)>,
}

impl Reference {
    /// Submits task `seq` with `args` once every task below `retired` retired; returns the
    /// live tasks it waits for, sorted, each once.
    pub(super) fn submit(&mut self, seq: u64, args: &[TensorArg], retired: u64) -> Vec<u64> {
        self.live.retain(|(t, _)| *t >= retired);
        let mut want: Vec<u64> = self
            .live
            .iter()
            .filter(|(_, e)| {
                args.iter().any(|a| {
                    a.buffer.base == e.buffer.base
                        && (a.access.writes() || e.access.writes())
                        && share_a_byte(&a.tile, &e.tile)
                })
            })
            .map(|(t, _)| *t)
            .collect();
        want.sort();
        want.dedup();
        // A write of the same bytes stands in for the entries it covers: they leave, and
        // this task (which waits for them) is found instead.
        self.live.retain(|(_, e)| {
            !args.iter().any(|a| {
                a.access.writes() && a.buffer.base == e.buffer.base && same_bytes(&a.tile, &e.tile)
            })
        });
        self.live.extend(args.iter().map(|a| (seq, *a)));
        want
    }

    /// Files `arg` of task `seq` without a lookup or covering anything, as a replay files a
    /// whole-buffer access, once every task below `retired` retired.
    pub(super) fn file(&mut self, seq: u64, arg: TensorArg, retired: u64) {
        self.live.retain(|(t, _)| *t >= retired);
        self.live.push((seq, arg));
    }
}
