//! The task records a run's `exec` copies back (`PtoRecord`, 88 bytes each, when the run
//! asked for them): read from device memory as the type the device wrote (`bytemuck`), and
//! turned into `pto_runtime_core::TaskRecord` by `PtoRecord::to_record`, so the trace
//! writer (`pto-trace`) draws an NPU run as it draws a simulated one.
#![forbid(unsafe_code)]

use pto_runtime_core::ffi::PtoRecord;

/// Bytes of one record in device memory.
pub const RECORD_BYTES: usize = size_of::<PtoRecord>();

/// Bytes that are not a whole number of records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{len} bytes of task records are not a whole number of {RECORD_BYTES}-byte records: \
     read them whole (records * {RECORD_BYTES} bytes)"
)]
pub struct PartialRecord {
    /// The bytes given.
    pub len: usize,
}

/// The records in `bytes`, in order (any alignment).
pub fn parse(bytes: &[u8]) -> Result<Vec<PtoRecord>, PartialRecord> {
    if !bytes.len().is_multiple_of(RECORD_BYTES) {
        return Err(PartialRecord { len: bytes.len() });
    }
    Ok(bytes
        .chunks_exact(RECORD_BYTES)
        .map(bytemuck::pod_read_unaligned)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::ffi::PtoRecord;
    use pto_runtime_core::{CoreId, KernelId, RecordFlags, TaskId, TaskRecord, WorkerClass};

    fn record() -> TaskRecord {
        TaskRecord {
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
            skipped: false,
            block: 2,
            blocks: 5,
        }
    }

    #[test]
    fn a_record_read_back_is_the_record_written() {
        let rec = record();
        let c = PtoRecord::from_record(&rec);
        assert_eq!(c.flags, RecordFlags::WRITTEN | RecordFlags::CANCELLED);
        // Two records at an odd address: the reader takes any alignment.
        let mut bytes = vec![0xee];
        bytes.extend_from_slice(bytemuck::bytes_of(&c));
        bytes.extend_from_slice(bytemuck::bytes_of(&PtoRecord { task: 7, ..c }));
        let back = parse(&bytes[1..]).unwrap();
        assert_eq!(back, vec![c, PtoRecord { task: 7, ..c }]);
        assert_eq!(back[0].to_record(), rec);
        let dummy = PtoRecord {
            core: 0xffff,
            class: 9,
            ..c
        };
        assert_eq!(dummy.to_record().core, None);
        assert_eq!(dummy.to_record().class, WorkerClass::Dummy);
    }

    #[test]
    fn bytes_that_are_not_whole_records_are_an_error() {
        let c = PtoRecord::from_record(&record());
        let mut bytes = bytemuck::bytes_of(&c).to_vec();
        bytes.extend_from_slice(&[0; 7]);
        let e = parse(&bytes).unwrap_err();
        assert_eq!(
            e,
            PartialRecord {
                len: RECORD_BYTES + 7
            }
        );
        assert!(e.to_string().contains("95 bytes"), "{e}");
        assert_eq!(parse(&[]), Ok(vec![]));
    }
}
