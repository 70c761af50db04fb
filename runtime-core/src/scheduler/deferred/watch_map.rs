//! The index from a watched word to its watch: open addressing with linear probing and
//! backward-shift deletion (no tombstones, so probe chains never grow with churn).
#![forbid(unsafe_code)]

use super::store::{NIL, WatchSlot};
use crate::condition::Watch;

fn home(w: Watch, mask: usize) -> usize {
    let (kind, value) = w.encode();
    let h = (value ^ (kind as u64) << 61).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 32) as usize & mask
}

/// The watch of `w`, if one exists.
pub(crate) fn find(map: &[u32], watches: &[WatchSlot], w: Watch) -> Option<u32> {
    let mask = map.len().checked_sub(1)?;
    let mut i = home(w, mask);
    loop {
        let v = map[i];
        if v == NIL {
            return None;
        }
        if watches[v as usize].watch == w {
            return Some(v);
        }
        i = (i + 1) & mask;
    }
}

/// Indexes watch `idx` (whose word is `watches[idx].watch`, not indexed yet). The map is at
/// most half full by sizing, so a free slot exists.
pub(crate) fn insert(map: &mut [u32], watches: &[WatchSlot], idx: u32) {
    let mask = map.len() - 1;
    let mut i = home(watches[idx as usize].watch, mask);
    while map[i] != NIL {
        i = (i + 1) & mask;
    }
    map[i] = idx;
}

/// Removes watch `idx` from the index, shifting later members of its probe chain back.
pub(crate) fn remove(map: &mut [u32], watches: &[WatchSlot], idx: u32) {
    let mask = map.len() - 1;
    let mut i = home(watches[idx as usize].watch, mask);
    while map[i] != idx {
        if map[i] == NIL {
            return;
        }
        i = (i + 1) & mask;
    }
    // `i` is the hole. Pull back each later member whose home is not in (hole, j].
    let mut j = i;
    loop {
        j = (j + 1) & mask;
        let v = map[j];
        if v == NIL {
            break;
        }
        let h = home(watches[v as usize].watch, mask);
        let stays = if i <= j {
            i < h && h <= j
        } else {
            i < h || h <= j
        };
        if !stays {
            map[i] = v;
            i = j;
        }
    }
    map[i] = NIL;
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn survives_churn_with_colliding_keys() {
        let n = 64usize;
        let mut watches: Vec<WatchSlot> = (0..n)
            .map(|i| WatchSlot {
                watch: Watch::Counter64(i as u64 * 4096),
                ..WatchSlot::new()
            })
            .collect();
        let mut map = std::vec![NIL; 16];
        let mut live: Vec<u32> = Vec::new();
        // Keep at most 8 live in a 16-slot map while cycling through 64 keys, many times.
        let rounds = if cfg!(miri) { 30 } else { 2000u32 };
        for round in 0..rounds {
            let idx = round.wrapping_mul(37) % n as u32;
            if let Some(p) = live.iter().position(|&v| v == idx) {
                remove(&mut map, &watches, idx);
                live.swap_remove(p);
            } else if live.len() < 8 {
                insert(&mut map, &watches, idx);
                live.push(idx);
            } else {
                let out = live.swap_remove(round as usize % live.len());
                remove(&mut map, &watches, out);
            }
            for i in 0..n as u32 {
                let want = live.contains(&i).then_some(i);
                assert_eq!(find(&map, &watches, watches[i as usize].watch), want);
            }
        }
        watches[0].watch = Watch::Engine(9);
        assert_eq!(find(&[], &watches, Watch::Engine(9)), None);
    }
}
