//! `spin_hint` on the simulator: a thread gives its CPU away only after a streak of idle
//! iterations, never while it waits a moment for work under way.

use pto_runtime_core::{Config, Platform};
use pto_sim::{KernelTable, SimMachine, SimOptions};

#[test]
fn a_thread_yields_only_at_every_sixteenth_idle_iteration_in_a_row() {
    let machine = SimMachine::start(&Config::tiny(), KernelTable::new(), SimOptions::default())
        .expect("a tiny machine starts");
    let p = machine.platform();
    // A chain's scheduler: a few idle iterations before each FIN, then work again.
    for _ in 0..100 {
        for idle in 1..=15 {
            p.spin_hint(idle);
        }
    }
    assert_eq!(p.yields(), 0, "short streaks never yield");
    // A thread with nothing to do: a yield at 16, 32 and 48 idle iterations in a row.
    for idle in 1..=50 {
        p.spin_hint(idle);
    }
    assert_eq!(p.yields(), 3);
}
