//! Predicated dispatch on the simulator, through the public API: a router kernel counts the
//! tokens each of 4 experts got; each expert's task runs only if its count is above 0 (read
//! when the task is about to be dispatched, after the router wrote it), and a combine task
//! after all experts runs whether they ran or were skipped. A predicate outside device
//! memory is refused at submit.

use pto_runtime_core::{
    Buffer, CmpOp, Config, KernelId, Predicate, PredicateError, ProfileLevel, SubmitError,
    TaskSpec, TensorArg, Tile, WorkerClass,
};
use pto_sim::{KernelTable, SimOptions};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

const ROUTER: KernelId = KernelId(0);
const EXPERT: KernelId = KernelId(1);
const COMBINE: KernelId = KernelId(2);
const EXPERTS: usize = 4;
/// The tokens each expert gets: experts 1 and 3 get none.
const COUNTS: [u32; EXPERTS] = [3, 0, 5, 0];

fn kernels() -> KernelTable {
    KernelTable::new()
        .with(ROUTER, "router", |ctx| {
            let c = ctx.tensor(0)?;
            let words: Vec<u64> = COUNTS
                .chunks(2)
                .map(|p| u64::from(p[0]) | u64::from(p[1]) << 32)
                .collect();
            c.write_u64s(&words)
        })
        // Writes 100 + its count into its output word.
        .with(EXPERT, "expert", |ctx| {
            let [e] = ctx.args_array()?;
            let counts = ctx.tensor(0)?.read_u64s()?;
            let word = counts[e as usize / 2] >> (32 * (e % 2)) & 0xffff_ffff;
            ctx.tensor(1)?.write_u64s(&[100 + word])
        })
        // Sums the experts' words.
        .with(COMBINE, "combine", |ctx| {
            let outs = ctx.tensor(0)?.read_u64s()?;
            ctx.tensor(1)?.write_u64s(&[outs.iter().sum()])
        })
}

/// Submits the router, the 4 predicated experts and the combine; returns the expert tasks.
fn submit(
    o: &mut pto_sim::SimOrchestrator<'_, '_>,
    counts: Buffer,
    outs: Buffer,
    sum: Buffer,
) -> Result<Vec<pto_runtime_core::TaskId>> {
    let all_counts = Tile::contiguous(counts.base, 8, 2);
    o.submit(
        &TaskSpec::new(ROUTER, WorkerClass::Aiv).tensors(&[TensorArg::output(counts, all_counts)]),
    )?;
    let mut experts = Vec::new();
    for e in 0..EXPERTS {
        let mine = Tile::contiguous(outs.base + 8 * e as u64, 8, 1);
        let chosen = Predicate::new(counts.base + 4 * e as u64, 4, CmpOp::Gt, 0);
        let tensors = [
            TensorArg::input(counts, all_counts),
            TensorArg::output(outs, mine),
        ];
        let args = [e as u64];
        let spec = TaskSpec::new(EXPERT, WorkerClass::Aiv)
            .tensors(&tensors)
            .args(&args)
            .when(chosen);
        experts.push(o.submit(&spec)?);
    }
    o.submit(&TaskSpec::new(COMBINE, WorkerClass::Aiv).tensors(&[
        TensorArg::input(outs, Tile::contiguous(outs.base, 8, EXPERTS as u32)),
        TensorArg::output(sum, Tile::contiguous(sum.base, 8, 1)),
    ]))?;
    Ok(experts)
}

#[test]
fn experts_no_token_chose_are_skipped_and_the_combine_runs_after_them_all() -> Result<()> {
    let cfg = Config {
        aiv_cores: 4,
        task_window: 16,
        max_tensors: 4,
        max_args: 4,
        profile: ProfileLevel::Tasks,
        ..Config::tiny()
    };
    let out = pto_sim::run(cfg, kernels(), SimOptions::default(), |o| -> Result<_> {
        let mem = o.platform().memory();
        let counts = mem.alloc_buffer(16, 64)?;
        let outs = mem.alloc_buffer(8 * EXPERTS, 64)?;
        let sum = mem.alloc_buffer(8, 64)?;
        // Every expert would count as chosen if its predicate were read at submit.
        mem.write_u64s(counts.base, &[u64::MAX, u64::MAX])?;
        let experts = submit(o, counts, outs, sum)?;
        Ok((outs, sum, experts))
    })?;
    let (outs, sum, experts) = out.value?;
    let mut words = [0u64; EXPERTS];
    out.memory.read_u64s(outs.base, &mut words)?;
    assert_eq!(words, [103, 0, 105, 0], "only the chosen experts ran");
    let mut total = [0u64];
    out.memory.read_u64s(sum.base, &mut total)?;
    assert_eq!(total, [208], "the combine ran after them all");
    assert_eq!(out.report.finished, 6);
    assert_eq!(out.report.skipped, 2);
    for (e, task) in experts.iter().enumerate() {
        let r = out.records.iter().find(|r| r.task == *task).unwrap();
        let chosen = COUNTS[e] > 0;
        assert_eq!(r.skipped, !chosen, "{r:?}");
        assert_eq!(
            r.core.is_some(),
            chosen,
            "a skipped task had no core: {r:?}"
        );
    }
    Ok(())
}

#[test]
fn a_predicate_outside_device_memory_is_refused_at_submit() -> Result<()> {
    let out = pto_sim::run(
        Config::tiny(),
        kernels(),
        SimOptions::default(),
        |o| -> Result<_> {
            let spec =
                TaskSpec::new(EXPERT, WorkerClass::Aiv).when(Predicate::new(0x8, 4, CmpOp::Eq, 1));
            Ok(o.submit(&spec).unwrap_err())
        },
    )?;
    let e = out.value?;
    assert_eq!(
        e,
        SubmitError::BadPredicate {
            error: PredicateError::Unreadable { addr: 0x8 }
        }
    );
    assert!(e.to_string().contains("0x8"), "{e}");
    Ok(())
}
