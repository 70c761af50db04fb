//! A scripted machine for scheduler tests: the test plays every core, step by step, and
//! sets the words deferred conditions watch.

use std::collections::HashMap;
use std::sync::Mutex;
use std::vec::Vec;

use crate::condition::{Condition, Watch};
use crate::ids::{CoreId, KernelId, TaskId, Token, WorkerClass};
use crate::orchestrator::{Orchestrator, TaskSpec};
use crate::platform::{Payload, Platform};
use crate::protocol::{Outcome, RawCondition, ResultWord, StatusWord};
use crate::queues::completion_queue::{
    Completion, CompletionCell, CompletionEnds, CompletionQueue,
};
use crate::region::config::{CompletionMode, Config};
use crate::scheduler::{Scheduler, Step};
use crate::sync::{AtomicU64, Ordering};
use crate::tables::views::RunTables;
use crate::testing::owned::Owned;

/// One scripted core: its status word, its two result words (by token parity), and the
/// tokens rung on it that it has not finished yet, oldest first.
#[derive(Default)]
struct ScriptCore {
    status: StatusWord,
    results: [ResultWord; 2],
    outstanding: Vec<Token>,
}

/// Cores the test plays; a clock the test moves.
pub(crate) struct Script {
    cores: Vec<Mutex<ScriptCore>>,
    /// Conditions each (core, token) registers.
    conditions: Mutex<HashMap<(CoreId, Token), Vec<RawCondition>>>,
    /// Kernel start and end each (core, token) reports.
    times: Mutex<HashMap<(CoreId, Token), (u64, u64)>>,
    /// Values of watched words; a word missing here cannot be read.
    words: Mutex<HashMap<Watch, u64>>,
    /// Words invalidated, in order.
    pub(crate) invalidated: Mutex<Vec<u64>>,
    /// The output heap: base and length.
    pub(crate) heap: (u64, u64),
    rung: Mutex<Vec<(CoreId, Token, TaskId)>>,
    /// Every payload's task, lane, block and block count, in order.
    payloads: Mutex<Vec<(TaskId, u8, u16, u16)>>,
    /// Every payload's task, lane and kernel, in order.
    kernels: Mutex<Vec<(TaskId, u8, KernelId)>>,
    clock: AtomicU64,
    /// Added to the clock by every `now()`.
    tick: u64,
    /// Scheduler 0's completion queue (a config in ring mode).
    queue: Option<(Vec<CompletionCell>, CompletionEnds)>,
    /// Engine 0's completion queue for scheduler 0.
    engine_queue: (Vec<CompletionCell>, CompletionEnds),
    /// What every `spin_hint` was told, in order.
    hints: Mutex<Vec<u32>>,
    /// Plays the cores from `spin_hint`: at this idle count, each core finishes its oldest
    /// outstanding token (so a scheduler can `run` on its own).
    fin_at_idle: Option<u32>,
}

impl Script {
    fn new(cfg: &Config, tick: u64) -> Self {
        let cores = cfg.cores();
        Script {
            queue: (cfg.completion == CompletionMode::Ring).then(|| {
                let cells = (0..cfg.completion_queue_capacity())
                    .map(CompletionCell::new)
                    .collect();
                (cells, CompletionEnds::new())
            }),
            engine_queue: (
                (0..8).map(CompletionCell::new).collect(),
                CompletionEnds::new(),
            ),
            cores: (0..cores).map(|_| Mutex::default()).collect(),
            rung: Mutex::new(Vec::new()),
            payloads: Mutex::new(Vec::new()),
            kernels: Mutex::new(Vec::new()),
            conditions: Mutex::new(HashMap::new()),
            times: Mutex::new(HashMap::new()),
            words: Mutex::new(HashMap::new()),
            invalidated: Mutex::new(Vec::new()),
            heap: (0x10_0000, 256),
            clock: AtomicU64::new(0),
            tick,
            hints: Mutex::new(Vec::new()),
            fin_at_idle: None,
        }
    }
    /// From now on, each core finishes its oldest outstanding token whenever `spin_hint` is
    /// told `idle`: a core that takes that many idle scheduler iterations per kernel.
    pub(crate) fn fin_when_idle(mut self, idle: u32) -> Self {
        self.fin_at_idle = Some(idle);
        self
    }
    /// The idle counts `spin_hint` was told, in order.
    pub(crate) fn hints(&self) -> Vec<u32> {
        self.hints.lock().unwrap().clone()
    }
    /// Makes the kernel of `token` on `core` register `conditions`.
    pub(crate) fn defer(&self, core: u16, token: u32, conditions: &[Condition]) {
        let raw = conditions.iter().map(|&c| RawCondition::from(c)).collect();
        self.defer_raw(core, token, raw);
    }
    /// Makes the kernel of `token` on `core` register these records, as written.
    pub(crate) fn defer_raw(&self, core: u16, token: u32, conditions: Vec<RawCondition>) {
        self.conditions
            .lock()
            .unwrap()
            .insert((CoreId(core), Token::new(token)), conditions);
    }
    /// Makes the kernel of `token` on `core` report running from `start` to `end`.
    pub(crate) fn kernel_times(&self, core: u16, token: u32, start: u64, end: u64) {
        self.times
            .lock()
            .unwrap()
            .insert((CoreId(core), Token::new(token)), (start, end));
    }
    /// Sets a watched word.
    pub(crate) fn word(&self, w: Watch, value: u64) {
        self.words.lock().unwrap().insert(w, value);
    }
    /// Makes a watched word unreadable again.
    pub(crate) fn forget_word(&self, w: Watch) {
        self.words.lock().unwrap().remove(&w);
    }
    /// Plays a correct core up to `token`: the tokens before it finish normally, `token`
    /// itself with `outcome` (`None`: it only took it), each result written before the
    /// report, as the protocol asks.
    fn play(&self, core: u16, token: u32, outcome: Option<Outcome>) {
        let t = Token::new(token);
        let mut c = self.cores[core as usize].lock().unwrap();
        while let Some(&u) = c.outstanding.first() {
            if u == t {
                break;
            }
            c.outstanding.remove(0);
            c.results[(u.bits() & 1) as usize] = ResultWord::done(u);
        }
        c.status = match outcome {
            None => StatusWord::ack(t),
            Some(o) => {
                if c.outstanding.first() == Some(&t) {
                    c.outstanding.remove(0);
                }
                c.results[(t.bits() & 1) as usize] = match o {
                    Outcome::Done => ResultWord::done(t),
                    Outcome::Failed(code) => ResultWord::failed(t, code),
                };
                StatusWord::fin(t)
            }
        };
    }
    /// The core finishes every token up to `token` and reports FIN(`token`).
    pub(crate) fn fin(&self, core: u16, token: u32) {
        self.play(core, token, Some(Outcome::Done));
    }
    /// The core finishes the tokens before `token`; `token`'s kernel fails with `code`.
    pub(crate) fn fail(&self, core: u16, token: u32, code: u32) {
        self.play(core, token, Some(Outcome::Failed(code)));
    }
    /// The core finishes the tokens before `token` and reports ACK(`token`).
    pub(crate) fn ack(&self, core: u16, token: u32) {
        self.play(core, token, None);
    }
    /// Writes `core`'s status word as given, with no result (a faulty or stale report).
    pub(crate) fn set_status(&self, core: u16, word: StatusWord) {
        self.cores[core as usize].lock().unwrap().status = word;
    }
    /// Writes the result word of `token`'s slot on `core` as given.
    pub(crate) fn set_result(&self, core: u16, token: u32, word: ResultWord) {
        self.cores[core as usize].lock().unwrap().results[(token & 1) as usize] = word;
    }
    /// Posts `core`'s completion of `token` to the completion queue (ring mode).
    pub(crate) fn post(&self, core: u16, token: u32) {
        let q = self.completion_queue(0).expect("a ring-mode config");
        q.push(Completion {
            source: core as u32,
            status: 0,
            id: token as u64,
            time: 0,
        })
        .unwrap();
    }
    /// Engine 0 reports post `post` ended with `status` (to scheduler 0).
    pub(crate) fn entry(&self, post: u64, status: u32) {
        let q = self.engine_queue(0, 0).expect("engine 0 has a queue");
        q.push(Completion {
            source: 0,
            status,
            id: post,
            time: 0,
        })
        .unwrap();
    }
    /// The clock's reading, without moving it.
    pub(crate) fn now_peek(&self) -> u64 {
        self.clock.load(Ordering::Relaxed)
    }

    pub(crate) fn rung(&self) -> Vec<(CoreId, Token, TaskId)> {
        core::mem::take(&mut *self.rung.lock().unwrap())
    }
    /// The task, lane and kernel of each payload written since the last call.
    pub(crate) fn kernels(&self) -> Vec<(TaskId, u8, KernelId)> {
        core::mem::take(&mut *self.kernels.lock().unwrap())
    }
    /// The task, lane, block and block count of each payload written since the last call.
    pub(crate) fn payloads(&self) -> Vec<(TaskId, u8, u16, u16)> {
        core::mem::take(&mut *self.payloads.lock().unwrap())
    }
}

impl Platform for Script {
    fn now(&self) -> u64 {
        self.clock.fetch_add(self.tick, Ordering::Relaxed)
    }
    fn ticks_per_us(&self) -> u64 {
        1
    }
    fn has_kernel(&self, k: KernelId) -> bool {
        k.0 < 8
    }
    fn write_payload(&self, core: CoreId, token: Token, p: &Payload<'_>) {
        self.rung.lock().unwrap().push((core, token, p.task));
        self.payloads
            .lock()
            .unwrap()
            .push((p.task, p.lane, p.block, p.blocks));
        self.kernels
            .lock()
            .unwrap()
            .push((p.task, p.lane, p.kernel));
        self.cores[core.0 as usize]
            .lock()
            .unwrap()
            .outstanding
            .push(token);
    }
    fn ring_doorbell(&self, _: CoreId, _: Token) {}
    fn core_status(&self, core: CoreId) -> StatusWord {
        self.cores[core.0 as usize].lock().unwrap().status
    }
    fn result(&self, core: CoreId, token: Token) -> ResultWord {
        self.cores[core.0 as usize].lock().unwrap().results[(token.bits() & 1) as usize]
    }
    fn lane_times(&self, core: CoreId, token: Token) -> Option<(u64, u64)> {
        self.times.lock().unwrap().get(&(core, token)).copied()
    }
    fn conditions(&self, core: CoreId, token: Token) -> usize {
        self.conditions
            .lock()
            .unwrap()
            .get(&(core, token))
            .map_or(0, Vec::len)
    }
    fn condition(&self, core: CoreId, token: Token, i: usize) -> Option<RawCondition> {
        self.conditions
            .lock()
            .unwrap()
            .get(&(core, token))
            .and_then(|c| c.get(i).copied())
    }
    fn read_watch(&self, w: Watch) -> Option<u64> {
        self.words.lock().unwrap().get(&w).copied()
    }
    fn invalidate(&self, addr: u64, _: usize) {
        self.invalidated.lock().unwrap().push(addr);
    }
    fn spin_hint(&self, idle: u32) {
        self.hints.lock().unwrap().push(idle);
        if self.fin_at_idle != Some(idle) {
            return;
        }
        for core in 0..self.cores.len() {
            let oldest = self.cores[core]
                .lock()
                .unwrap()
                .outstanding
                .first()
                .copied();
            if let Some(t) = oldest {
                self.fin(core as u16, t.bits());
            }
        }
    }
    fn heap(&self) -> (u64, u64) {
        self.heap
    }
    fn completion_queue(&self, _: u8) -> Option<CompletionQueue<'_>> {
        self.queue
            .as_ref()
            .map(|(cells, ends)| CompletionQueue::new(cells, ends))
    }
    fn engine_queue(&self, scheduler: u8, engine: u32) -> Option<CompletionQueue<'_>> {
        let (cells, ends) = &self.engine_queue;
        (scheduler == 0 && engine == 0).then(|| CompletionQueue::new(cells, ends))
    }
}

/// A runtime in heap memory and the scripted machine it runs on.
pub(crate) struct Rig {
    owned: Owned,
    pub(crate) p: Script,
}

impl Rig {
    /// Cores as `cfg` says; the clock moves `tick` µs per read.
    pub(crate) fn new(cfg: Config, tick: u64) -> Self {
        Rig {
            p: Script::new(&cfg, tick),
            owned: Owned::new(cfg),
        }
    }
    /// [`Rig::new`] whose cores finish a kernel at every `idle`-th idle scheduler iteration
    /// in a row ([`Script::fin_when_idle`]).
    pub(crate) fn fin_when_idle(cfg: Config, tick: u64, idle: u32) -> Self {
        Rig {
            p: Script::new(&cfg, tick).fin_when_idle(idle),
            owned: Owned::new(cfg),
        }
    }
    pub(crate) fn tables(&self) -> RunTables<'_> {
        self.owned.tables()
    }
    pub(crate) fn orchestrator(&self) -> Orchestrator<'_, '_, Script> {
        Orchestrator::new(
            self.tables().orch(),
            &self.p,
            self.owned.take_orchestrator(),
        )
    }
    /// What most tests start with: the tables, the scripted machine, an orchestrator and
    /// scheduler 0.
    pub(crate) fn start(
        &self,
    ) -> (
        RunTables<'_>,
        &Script,
        Orchestrator<'_, '_, Script>,
        Scheduler<'_, '_, Script>,
    ) {
        (
            self.tables(),
            &self.p,
            self.orchestrator(),
            self.scheduler(),
        )
    }
    pub(crate) fn scheduler(&self) -> Scheduler<'_, '_, Script> {
        self.scheduler_at(0)
    }
    /// Scheduler `index` (of `cfg.schedulers`), owning the cores `cfg.scheduler_of` gives it.
    pub(crate) fn scheduler_at(&self, index: u8) -> Scheduler<'_, '_, Script> {
        let t = self.tables();
        Scheduler::new(
            *t,
            &self.p,
            index,
            &t.sched()[index as usize],
            self.owned.take_store(),
        )
    }
}

/// A machine of one AIV core.
pub(crate) fn one_aiv() -> Config {
    Config {
        aic_cores: 0,
        aiv_cores: 1,
        ..Config::tiny()
    }
}

pub(crate) fn aiv(deps: &[TaskId]) -> TaskSpec<'_> {
    TaskSpec::new(KernelId(0), WorkerClass::Aiv).deps(deps)
}

/// Submits vector task A, then B waiting for A, and ends submission (drops `o`): the
/// two-task chain many tests start from. Returns (A, B).
pub(crate) fn a_then_b<P: Platform>(mut o: Orchestrator<'_, '_, P>) -> (TaskId, TaskId) {
    let a = o.submit(&aiv(&[])).unwrap();
    let b = o.submit(&aiv(&[a])).unwrap();
    (a, b)
}

pub(crate) fn steps<P: Platform>(s: &mut Scheduler<'_, '_, P>, n: usize) -> Step {
    let mut last = Step::Idle;
    for _ in 0..n {
        last = s.step();
    }
    last
}

/// Steps until the run fails, `n` steps at most; returns the last step.
pub(crate) fn steps_until_failed<P: Platform>(s: &mut Scheduler<'_, '_, P>, n: usize) -> Step {
    let mut last = Step::Idle;
    for _ in 0..n {
        last = s.step();
        if last == Step::Failed {
            break;
        }
    }
    last
}
