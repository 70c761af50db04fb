//! The task records a run's `exec` copies back (`PtoRecord`, 88 bytes each, when the run
//! asked for them): read from device memory and turned into `pto_runtime_core::TaskRecord`,
//! so the simulator's trace writer draws an NPU run as it draws a simulated one
//! (`PtoRecord::to_record`).
#![forbid(unsafe_code)]

use pto_runtime_core::RecordFlags;
use pto_runtime_core::ffi::PtoRecord;

/// Bytes of one record in device memory.
pub const RECORD_BYTES: usize = size_of::<PtoRecord>();

/// The records in `bytes` (whole records only, in order).
pub fn parse(bytes: &[u8]) -> Vec<PtoRecord> {
    let u64_at = |r: &[u8], at: usize| u64::from_le_bytes(r[at..at + 8].try_into().unwrap());
    bytes
        .chunks_exact(RECORD_BYTES)
        .map(|r| PtoRecord {
            task: u64_at(r, 0),
            kernel: u32::from_le_bytes(r[8..12].try_into().unwrap()),
            core: u16::from_le_bytes(r[12..14].try_into().unwrap()),
            class: r[14],
            scheduler: r[15],
            flags: RecordFlags::from_bits_retain(u32::from_le_bytes(r[16..20].try_into().unwrap())),
            block: u16::from_le_bytes(r[20..22].try_into().unwrap()),
            blocks: u16::from_le_bytes(r[22..24].try_into().unwrap()),
            submit: u64_at(r, 24),
            ready: u64_at(r, 32),
            dispatch: u64_at(r, 40),
            start: u64_at(r, 48),
            end: u64_at(r, 56),
            fin: u64_at(r, 64),
            deferred_done: u64_at(r, 72),
            complete: u64_at(r, 80),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::{CoreId, KernelId, TaskId, TaskRecord, WorkerClass};

    #[test]
    fn a_record_read_back_is_the_record_written() {
        let rec = TaskRecord {
            task: TaskId::from_raw(0x0001_0000_0000_0005),
            kernel: KernelId(3),
            class: WorkerClass::Aiv,
            core: Some(CoreId(4)),
            scheduler: 1,
            submit: 10,
            ready: 11,
            dispatch: 12,
            start: 13,
            end: 14,
            fin: 15,
            deferred_done: 16,
            complete: 17,
            cancelled: true,
            block: 2,
            blocks: 5,
        };
        let c = PtoRecord::from_record(&rec);
        assert_eq!(c.flags, RecordFlags::WRITTEN | RecordFlags::CANCELLED);
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&c.task.to_le_bytes());
        bytes.extend_from_slice(&c.kernel.to_le_bytes());
        bytes.extend_from_slice(&c.core.to_le_bytes());
        bytes.extend_from_slice(&[c.class, c.scheduler]);
        bytes.extend_from_slice(&c.flags.bits().to_le_bytes());
        bytes.extend_from_slice(&c.block.to_le_bytes());
        bytes.extend_from_slice(&c.blocks.to_le_bytes());
        for w in [
            c.submit,
            c.ready,
            c.dispatch,
            c.start,
            c.end,
            c.fin,
            c.deferred_done,
            c.complete,
        ] {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        assert_eq!(bytes.len(), RECORD_BYTES);
        bytes.extend_from_slice(&[0; 7]); // a partial record is not one
        let back = parse(&bytes);
        assert_eq!(back, vec![c]);
        assert_eq!(back[0].to_record(), rec);
        let dummy = PtoRecord {
            core: 0xffff,
            class: 9,
            ..c
        };
        assert_eq!(dummy.to_record().core, None);
        assert_eq!(dummy.to_record().class, WorkerClass::Dummy);
    }
}
