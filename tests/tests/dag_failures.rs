//! Random DAGs with random kernel failures on the simulator: a failure is never lost, even
//! when the core runs its pending token the moment the failing kernel returns. The run
//! reports a kernel error of a task that failed, and no task that waits for a failed task,
//! directly or through others, ever runs.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use pto_runtime_core::{Config, FatalCause, KernelId, TaskId, TaskSpec, WorkerClass};
use pto_sim::{KernelError, KernelTable, SimError, SimOptions, run};
use pto_tests::dag::{Node, descendants, machines, program};

/// `[index, fails]`: logs its lane; fails at once with code `100 + index` on lane
/// `index % lanes` if `fails` is 1.
const LOG_OR_FAIL: KernelId = KernelId(3);

/// What ran: (task index, lane, whether that lane failed).
type Ran = (usize, u8, bool);

fn run_program(
    nodes: &[Node],
    fails: &BTreeSet<usize>,
    cfg: Config,
) -> (Vec<Ran>, pto_runtime_core::RunReport) {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let log = ran.clone();
    let kernels = KernelTable::new().with(LOG_OR_FAIL, "log_or_fail", move |ctx| {
        let i = ctx.args[0] as usize;
        let fail = ctx.args[1] == 1 && ctx.lane as usize == i % ctx.lanes.max(1) as usize;
        log.lock().unwrap().push((i, ctx.lane, fail));
        if fail {
            Err(KernelError::new(100 + i as u32, format!("task {i} fails")))
        } else {
            Ok(())
        }
    });
    let out = run(cfg, kernels, SimOptions::default(), |o| {
        let mut ids: Vec<TaskId> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let deps: Vec<TaskId> = n.deps.iter().map(|&d| ids[d]).collect();
            let args = [i as u64, u64::from(fails.contains(&i))];
            let spec = TaskSpec::new(LOG_OR_FAIL, n.class).args(&args).deps(&deps);
            match o.submit(&spec) {
                Ok(id) => ids.push(id),
                // Once the run failed, submit refuses; nothing more is submitted.
                Err(_) => break,
            }
        }
    });
    let report = match out {
        Ok(out) => out.report,
        Err(SimError::Run { run, .. }) => run.run.report,
        Err(e) => panic!("the run could not start: {e}"),
    };
    let ran = std::mem::take(&mut *ran.lock().unwrap());
    (ran, report)
}

fn check(
    nodes: &[Node],
    ran: &[Ran],
    report: &pto_runtime_core::RunReport,
) -> Result<(), TestCaseError> {
    let failed: BTreeSet<usize> = ran.iter().filter(|r| r.2).map(|r| r.0).collect();
    if failed.is_empty() {
        // No failing kernel ran before the run ended: it must have ended well.
        prop_assert!(report.error.is_none(), "run failed: {:?}", report.error);
        prop_assert_eq!(report.finished, nodes.len() as u64);
        return Ok(());
    }
    let Some(e) = report.error else {
        return Err(TestCaseError::fail(format!(
            "tasks {failed:?} failed, but the run reports no error"
        )));
    };
    let FatalCause::KernelFailed { code } = e.cause else {
        return Err(TestCaseError::fail(format!("not a kernel error: {e}")));
    };
    let index = code.checked_sub(100).map(|i| i as usize);
    prop_assert!(
        index.is_some_and(|i| failed.contains(&i)),
        "the error names task {:?}, which did not fail (failed: {:?})",
        index,
        failed
    );
    let ran_tasks: BTreeSet<usize> = ran.iter().map(|r| r.0).collect();
    for &f in &failed {
        let after: BTreeSet<usize> = descendants(nodes, f);
        let wrong: Vec<&usize> = after.intersection(&ran_tasks).collect();
        prop_assert!(
            wrong.is_empty(),
            "tasks {:?} ran although they wait for failed task {}",
            wrong,
            f
        );
    }
    prop_assert!(report.finished < nodes.len() as u64);
    Ok(())
}

/// Indices of the tasks whose kernel fails: the picked ones, DUMMY tasks (no kernel) left out.
fn failing(nodes: &[Node], picks: &[prop::sample::Index]) -> BTreeSet<usize> {
    picks
        .iter()
        .map(|p| p.index(nodes.len()))
        .filter(|&i| nodes[i].class != WorkerClass::Dummy)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn a_failed_task_fails_the_run_and_none_of_its_descendants_runs(
        nodes in program(120),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        window_log in 1u32..4,
        schedulers in 1u8..3,
        aic in 1u16..3,
        aiv in 2u16..5,
    ) {
        let fails = failing(&nodes, &picks);
        // Each case in both completion modes: status polling and the completion ring.
        for cfg in machines(window_log, 2, schedulers, aic, aiv) {
            let completion = cfg.completion;
            let (ran, report) = run_program(&nodes, &fails, cfg);
            check(&nodes, &ran, &report)
                .map_err(|e| TestCaseError::fail(format!("{completion:?}: {e}")))?;
        }
    }
}
