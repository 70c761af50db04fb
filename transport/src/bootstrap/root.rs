//! Rank 0's side of forming the job: every caller queued on the listener gets its own accept
//! state at once, each advanced on every pass against its own hello deadline, so a silent or
//! slow caller never holds up another's hello. The pending states are bounded; past the bound
//! the oldest caller still silent is dropped first. A connection comes out of the transport
//! only once its caller confirmed (so a caller that gave up in the listen backlog never takes
//! a rank), and rank 0 answers it with a [`Verdict`]: welcome, or taken by whom. Rank 0 stops
//! listening once every rank has been welcomed.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use super::verdict::Verdict;
use super::{BootstrapError, POLL_MAX, send};
use crate::api::{Conn, Progress, Transport};
use crate::registry::Region;

/// Fewest accept states rank 0 keeps pending before it drops silent callers.
const MIN_PENDING: usize = 64;

/// Most callers taken off the listener in one pass, so that the states already pending move
/// too while a flood of dials comes in.
const TAKE_PER_PASS: usize = 64;

/// How long rank 0 lets a verdict take to leave (it is a few bytes on a fresh connection).
const VERDICT_TIME: Duration = Duration::from_secs(1);

/// The most accept states pending at once for a job of `ranks` ranks: every other rank twice
/// over (each may have a dial it gave up in the backlog) and room for strangers.
pub(super) fn max_pending(ranks: u32) -> usize {
    (ranks as usize).saturating_mul(2).max(MIN_PENDING)
}

/// Accepts until every rank but 0 has been welcomed; the connections in rank order.
pub(super) fn accept_all<T: Transport>(
    t: &T,
    mut listener: T::Listener,
    ranks: u32,
    deadline: Instant,
) -> Result<Vec<T::Conn>, BootstrapError> {
    let mut slots: Vec<Option<T::Conn>> = (0..ranks).map(|_| None).collect();
    let mut missing = ranks as usize - 1;
    let cap = max_pending(ranks);
    // In arrival order: the oldest first.
    let mut pending: Vec<T::AcceptState> = Vec::new();
    while missing > 0 {
        let mut moved = false;
        // Every caller queued now gets a state of its own.
        for _ in 0..TAKE_PER_PASS {
            let mut st = T::AcceptState::default();
            let got = t.accept(&mut listener, &mut st);
            if st.is_idle() && matches!(got, Ok(None)) {
                break; // nobody queued
            }
            moved = true;
            missing -= place(t, got, &mut slots, deadline)?;
            if !st.is_idle() {
                pending.push(st);
            }
        }
        while pending.len() > cap {
            let oldest = pending.iter().position(|s| s.awaits_hello()).unwrap_or(0);
            pending.remove(oldest);
            log::warn!("bootstrap: {cap} callers pending at once; dropped the oldest still silent");
        }
        let mut i = 0;
        while i < pending.len() && missing > 0 {
            let st = &mut pending[i];
            let steps = st.steps();
            let got = t.accept(&mut listener, st);
            moved |= st.steps() != steps || got.is_err();
            let done = st.is_idle();
            missing -= place(t, got, &mut slots, deadline)?;
            if done {
                pending.remove(i);
            } else {
                i += 1;
            }
        }
        if !moved && missing > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(BootstrapError::Timeout(format!(
                    "waiting for {} of {ranks} ranks to connect: {} never did",
                    missing,
                    name_missing(&slots)
                )));
            }
            t.wait_accept(&listener, &pending, left.min(POLL_MAX));
        }
    }
    Ok(slots.into_iter().flatten().collect())
}

/// Takes what an accept call gave: a connection gets its verdict and, if welcomed, its slot;
/// a refused caller is logged. Returns how many slots it filled (0 or 1).
fn place<T: Transport>(
    t: &T,
    got: Result<Option<T::Conn>, crate::TransportError>,
    slots: &mut [Option<T::Conn>],
    deadline: Instant,
) -> Result<usize, BootstrapError> {
    let mut c = match got {
        Ok(Some(c)) => c,
        Ok(None) => return Ok(0),
        // A stranger, a silent caller, one that gave up: refused, the job goes on forming.
        Err(e) if e.retryable => {
            log::warn!("bootstrap: {e}");
            return Ok(0);
        }
        Err(e) => return Err(e.into()),
    };
    let peer = c.peer();
    let from = addr_of(&c);
    let ranks = slots.len() as u32;
    let verdict = match slots.get(peer as usize) {
        Some(None) if peer != 0 => Verdict::Welcome,
        Some(Some(holder)) if peer != 0 => Verdict::Taken {
            holder: addr_of(holder),
        },
        _ => Verdict::NoSuchRank { ranks },
    };
    let bytes = verdict.encode();
    let mr = t.register(&[Region::of(&bytes)])?;
    let by = deadline.min(Instant::now() + VERDICT_TIME);
    if let Err(e) = send(&mut c, &mr, &bytes, by) {
        // It vanished between its confirm and our verdict: not counted.
        log::warn!("bootstrap: the caller from {from} claiming rank {peer} left: {e}");
        return Ok(0);
    }
    match verdict {
        Verdict::Welcome => {
            slots[peer as usize] = Some(c);
            Ok(1)
        }
        Verdict::Taken { holder } => {
            log::warn!(
                "bootstrap: refused a caller from {from} claiming rank {peer}, which the caller \
                 from {holder} holds"
            );
            Ok(0)
        }
        Verdict::NoSuchRank { .. } => {
            log::warn!(
                "bootstrap: refused a caller from {from} claiming rank {peer} of a {ranks}-rank job"
            );
            Ok(0)
        }
    }
}

fn addr_of<C: Conn>(c: &C) -> String {
    c.peer_addr()
        .map_or_else(|| "an unknown address".into(), |a| a.to_string())
}

/// The empty slots but rank 0's, as "rank 3" or "ranks 1, 4-6".
fn name_missing<C>(slots: &[Option<C>]) -> String {
    let empty: Vec<u32> = (1..slots.len() as u32)
        .filter(|&r| slots[r as usize].is_none())
        .collect();
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < empty.len() {
        let mut j = i;
        while j + 1 < empty.len() && empty[j + 1] == empty[j] + 1 {
            j += 1;
        }
        runs.push(if i == j {
            empty[i].to_string()
        } else {
            format!("{}-{}", empty[i], empty[j])
        });
        i = j + 1;
    }
    let word = if empty.len() == 1 { "rank" } else { "ranks" };
    format!("{word} {}", runs.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_ranks_are_named_in_runs() {
        let s = |filled: &[usize], n: usize| {
            let v: Vec<Option<()>> = (0..n).map(|r| filled.contains(&r).then_some(())).collect();
            name_missing(&v)
        };
        assert_eq!(s(&[0, 1], 3), "rank 2");
        assert_eq!(s(&[0, 2, 3], 8), "ranks 1, 4-7");
        assert_eq!(s(&[0, 2], 4), "ranks 1, 3");
    }
}
