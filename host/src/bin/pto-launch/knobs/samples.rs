//! Every error of the runtime and the layers on it that names a knob, constructed: each
//! runtime enum whole (an exhaustive match numbers its variants, and the tests check that
//! the samples cover every number), the rest by the variants that name a knob.

use pto_device_sys::abi::{PtoAicpuCode, PtoAicpuReport};
use pto_host::comm::CommError;
use pto_host::orch_config::{Capacity, OrchConfigError, Origin};
use pto_runtime_core::ffi::{PtoStatus, status_str};
use pto_runtime_core::{
    ClaimError, ConfigError, CoreId, FatalCause, FatalError, FatalKind, KernelId, Knob, Seq,
    SubmitError, TaskId, TileError, Watch, WorkerClass,
};
use pto_sim::SimError;

pub(super) fn config_variant(e: &ConfigError) -> usize {
    use ConfigError::*;
    match e {
        Rings { .. } => 0,
        TaskWindow { .. } => 1,
        MaxDeps { .. } => 2,
        MaxArgs { .. } => 3,
        MaxTensors { .. } => 4,
        NoCores => 5,
        TooManyCores { .. } => 6,
        Schedulers { .. } => 7,
        ZeroTimeout => 8,
        MaxConditions { .. } => 9,
        DeferredCapacity { .. } => 10,
        ZeroPollBudget => 11,
        TooManyEdges { .. } => 12,
        RegionTooSmall { .. } => 13,
        RegionMisaligned { .. } => 14,
    }
}

pub(super) fn config_errors() -> Vec<ConfigError> {
    use ConfigError::*;
    vec![
        Rings { rings: 9 },
        TaskWindow { window: 6 },
        MaxDeps { max_deps: 99 },
        MaxArgs { max_args: 40 },
        MaxTensors { max_tensors: 40 },
        NoCores,
        TooManyCores { aic: 100, aiv: 100 },
        Schedulers { schedulers: 0 },
        ZeroTimeout,
        MaxConditions { max_conditions: 99 },
        DeferredCapacity {
            capacity: 1,
            max_conditions: 16,
        },
        ZeroPollBudget,
        TooManyEdges { edges: 1 << 33 },
        RegionTooSmall {
            needed: 4096,
            given: 64,
        },
        RegionMisaligned { offset: 8 },
    ]
}

pub(super) fn submit_variant(e: &SubmitError) -> usize {
    use SubmitError::*;
    match e {
        WindowFull { .. } => 0,
        StaleDependency { .. } => 1,
        ForeignDependency { .. } => 2,
        NotYetSubmitted { .. } => 3,
        TooManyDeps { .. } => 4,
        TooManyTensors { .. } => 5,
        BadTensor { .. } => 6,
        TooManyArgs { .. } => 7,
        UnknownKernel { .. } => 8,
        NoCoreForClass { .. } => 9,
        BadRing { .. } => 10,
        SequenceExhausted { .. } => 11,
        HeapTooSmall { .. } => 12,
        HeapFull { .. } => 13,
        BadAlignment { .. } => 14,
        ScopeTooDeep { .. } => 15,
        NoOpenScope => 16,
        ScopeDeadlock { .. } => 17,
        RunFailed(_) => 18,
        RunFailing => 19,
        BadBlocks { .. } => 20,
        TileBusy { .. } => 21,
        TileCancelled { .. } => 22,
        SyncStartTooWide { .. } => 23,
        LaneKernelsNotMix { .. } => 24,
        BadPredicate { .. } => 25,
    }
}

pub(super) fn submit_errors() -> Vec<SubmitError> {
    use SubmitError::*;
    let dep = TaskId::new(1, 0, Seq(3));
    let mut v = vec![
        WindowFull {
            ring: 0,
            window: 64,
            waited_us: 10,
        },
        StaleDependency { dep, epoch: 2 },
        ForeignDependency { dep, rings: 1 },
        NotYetSubmitted { dep, next: 1 },
        TooManyDeps { given: 20, max: 16 },
        TooManyTensors { given: 9, max: 8 },
        BadTensor {
            index: 0,
            error: TileError::ZeroElement,
        },
        TooManyArgs { given: 17, max: 16 },
        UnknownKernel {
            kernel: KernelId(9),
        },
        NoCoreForClass {
            class: WorkerClass::Mix,
        },
        BadRing { ring: 7, rings: 4 },
        SequenceExhausted { ring: 0 },
        HeapTooSmall {
            bytes: 1 << 30,
            heap: 1 << 20,
        },
        HeapFull {
            ring: 0,
            bytes: 64,
            waited_us: 10,
        },
        BadAlignment { align: 3 },
        ScopeTooDeep { max: 8 },
        NoOpenScope,
        ScopeDeadlock {
            held: dep,
            ring: 0,
            window: 64,
            open: 1,
        },
        RunFailing,
        BadBlocks {
            blocks: 30,
            class: WorkerClass::Aiv,
            max: 24,
        },
        TileBusy {
            task: dep,
            waited_us: 10,
        },
        TileCancelled { task: dep },
        SyncStartTooWide {
            blocks: 8,
            class: WorkerClass::Aiv,
            max: 4,
        },
        LaneKernelsNotMix {
            class: WorkerClass::Aiv,
        },
        BadPredicate {
            error: pto_runtime_core::PredicateError::Width { width: 3 },
        },
    ];
    v.extend(fatal_errors().into_iter().map(RunFailed));
    v
}

pub(super) fn fatal_variant(e: &FatalCause) -> usize {
    use FatalCause::*;
    match e {
        TaskTimeout { .. } => 0,
        CoreProtocol { .. } => 1,
        KernelFailed { .. } => 2,
        ReadyQueueOverflow { .. } => 3,
        Aborted { .. } => 4,
        DeferredTimeout { .. } => 5,
        TooManyConditions { .. } => 6,
        BadCondition { .. } => 7,
        UnknownCondition { .. } => 8,
        MissingResult { .. } => 9,
        DeferredFull { .. } => 10,
        CorruptSlot { .. } => 11,
        TransferFailed { .. } => 12,
        StrayCompletion { .. } => 13,
        BadPredicate { .. } => 14,
        NoProgress { .. } => 15,
    }
}

pub(super) fn fatal_errors() -> Vec<FatalError> {
    use FatalCause::*;
    let watch = Watch::Counter64(0x1000);
    [
        TaskTimeout { waited_us: 10 },
        CoreProtocol { seen: 3, newest: 2 },
        KernelFailed { code: 42 },
        ReadyQueueOverflow { class: 1 },
        Aborted { code: 7 },
        DeferredTimeout {
            watch,
            expected: 1,
            last: 0,
        },
        TooManyConditions {
            registered: 20,
            limit: 16,
        },
        BadCondition { watch: Some(watch) },
        UnknownCondition { kind: 9 },
        MissingResult { token: 3, named: 1 },
        DeferredFull {
            capacity: 4096,
            waited_us: 10,
        },
        CorruptSlot { class: 9 },
        TransferFailed {
            watch: Watch::Queue(0),
            post: 1,
            status: 2,
        },
        StrayCompletion { source: 9, id: 1 },
        BadPredicate {
            addr: 0x1000,
            width: 4,
        },
        NoProgress {
            idle_us: 2_000_000,
            live: 3,
        },
    ]
    .into_iter()
    .map(|cause| FatalError {
        cause,
        task: Some(TaskId::new(1, 0, Seq(0))),
        core: Some(CoreId(2)),
    })
    .collect()
}

pub(super) fn claim_variant(e: &ClaimError) -> usize {
    use ClaimError::*;
    match e {
        OrchestratorTaken => 0,
        SchedulerTaken { .. } => 1,
        NoSuchScheduler { .. } => 2,
        NoCompletionQueue { .. } => 3,
    }
}

pub(super) fn claim_errors() -> Vec<ClaimError> {
    use ClaimError::*;
    vec![
        OrchestratorTaken,
        SchedulerTaken { index: 0 },
        NoSuchScheduler {
            index: 3,
            schedulers: 1,
        },
        NoCompletionQueue {
            index: 0,
            needed: 8,
        },
    ]
}

pub(super) fn capacities_variant(e: &OrchConfigError) -> usize {
    use OrchConfigError::*;
    match e {
        NotElf(_) => 0,
        Size { .. } => 1,
        NoBytes => 2,
        FunctionOnly => 3,
        Abi { .. } => 4,
        Declared { .. } => 5,
        Given { .. } => 6,
        SlotWords { .. } => 7,
    }
}

/// The capacity errors a run's settings cause (the SO's own are walked apart: they name
/// the SO's field, which is what to change).
pub(super) fn capacity_errors() -> Vec<OrchConfigError> {
    use OrchConfigError::*;
    let cap = |value, from| Capacity { value, from };
    let mut v: Vec<OrchConfigError> = [
        Knob::MaxDeps,
        Knob::MaxTensors,
        Knob::MaxArgs,
        Knob::TaskWindow,
        Knob::HeapBytes,
    ]
    .into_iter()
    .map(|knob| Given {
        knob,
        value: 1 << 40,
    })
    .collect();
    for from in [Origin::Given, Origin::Declared, Origin::Default] {
        v.push(SlotWords {
            tensors: cap(20, from),
            args: cap(16, Origin::Default),
        });
    }
    v
}

pub(super) fn declaration_errors() -> Vec<OrchConfigError> {
    use OrchConfigError::*;
    vec![
        NotElf("bad magic".into()),
        Size { size: 40 },
        NoBytes,
        FunctionOnly,
        Abi { abi: 9 },
        Declared {
            knob: Knob::MaxDeps,
            value: 100,
        },
    ]
}

/// The device's reports that name a knob: every run-failure kind, every status an
/// orchestration passes on, and a configuration wider than a slot.
pub(super) fn device_reports() -> Vec<PtoAicpuReport> {
    let report = |code: PtoAicpuCode, value: u64| PtoAicpuReport {
        code: code as u32,
        value,
        run: 1,
        ..PtoAicpuReport::default()
    };
    let mut v: Vec<PtoAicpuReport> = (1..=FatalKind::TransferFailed as u32)
        .map(|kind| {
            let mut r = report(PtoAicpuCode::RunFailed, 0);
            r.sched.error_kind = kind;
            r
        })
        .collect();
    v.extend(
        PtoStatus::ALL
            .iter()
            .map(|&s| report(PtoAicpuCode::OrchestrationFailed, s as i32 as i64 as u64)),
    );
    v.push(report(PtoAicpuCode::SlotTooSmall, 40));
    v
}

/// Every message of the walk, as text before the rewording.
pub(super) fn every_message() -> Vec<String> {
    let mut m: Vec<String> = Vec::new();
    m.extend(
        config_errors()
            .iter()
            .map(|e| SimError::Config(*e).to_string()),
    );
    m.extend(submit_errors().iter().map(ToString::to_string));
    m.extend(
        claim_errors()
            .iter()
            .map(|e| SimError::Claim(*e).to_string()),
    );
    m.extend(capacity_errors().iter().map(ToString::to_string));
    m.extend(PtoStatus::ALL.iter().map(|&s| {
        pto_host::sim_backend::SimBackendError::Orchestration {
            code: s as i32,
            finished: 0,
            submitted: 1,
        }
        .to_string()
    }));
    m.extend(
        PtoStatus::ALL
            .iter()
            .map(|&s| status_str(s as i32).to_string_lossy().into_owned()),
    );
    m.extend(device_reports().iter().map(ToString::to_string));
    // The simulator names what sizes each allocation it could not make.
    for knobs in [
        &[Knob::MemoryBytes][..],
        &[
            Knob::TaskWindow,
            Knob::Rings,
            Knob::ProfileCapacity,
            Knob::DeferredCapacity,
            Knob::MaxTensors,
        ],
    ] {
        m.push(
            SimError::OutOfMemory {
                what: "memory",
                bytes: 1 << 40,
                knobs,
            }
            .to_string(),
        );
    }
    m.push(SimError::Heap("out of memory".into()).to_string());
    m.push(CommError::WindowSize { bytes: 0, ranks: 2 }.to_string());
    m.push(
        CommError::NoSpace {
            name: "/pto".into(),
            needed: 1 << 40,
            free: 1 << 20,
        }
        .to_string(),
    );
    #[cfg(feature = "cann")]
    m.push(
        pto_device_sys::cann::describe(207001)
            .expect("a known code")
            .1
            .to_string(),
    );
    m
}
