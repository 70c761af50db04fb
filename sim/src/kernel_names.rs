//! The kernel table names kernels in traces: a kernel's slices carry the name it was
//! registered with.
#![forbid(unsafe_code)]

use pto_runtime_core::KernelId;
use pto_trace::KernelNames;

use crate::kernels::KernelTable;

impl KernelNames for KernelTable {
    fn kernel_name(&self, id: KernelId) -> Option<&str> {
        self.name(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::{CoreId, TaskId, TaskRecord, WorkerClass};

    #[test]
    fn kernel_slices_carry_the_tables_names() {
        let r = TaskRecord {
            task: TaskId::from_raw(7),
            kernel: KernelId(3),
            class: WorkerClass::Aiv,
            core: Some(CoreId(2)),
            scheduler: 1,
            submit: 1000,
            ready: 2000,
            dispatch: 3000,
            start: 4000,
            end: 6000,
            fin: 7000,
            deferred_done: 0,
            complete: 9000,
            cancelled: false,
            skipped: false,
            block: 0,
            blocks: 1,
        };
        let table = KernelTable::new().with(KernelId(3), "softmax", |_| Ok(()));
        let v = crate::chrome_trace_named(&[r], 1000, &table);
        assert!(v.to_string().contains("\"softmax\""), "{v}");
    }
}
