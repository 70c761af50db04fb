//! The index from a watched word to its watch: open addressing with linear probing and
//! backward-shift deletion (no tombstones, so probe chains never grow with churn).
#![forbid(unsafe_code)]

use super::store::{WatchIndex, WatchSlot};
use crate::condition::Watch;
use crate::index::Table;

/// The watch pool.
type Watches<'a, 'r> = &'a Table<'r, WatchIndex, WatchSlot>;

const NIL: WatchIndex = WatchIndex::NIL;

fn home(w: Watch, mask: usize) -> usize {
    let (kind, value) = w.encode();
    let h = (value ^ (kind as u64) << 61).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 32) as usize & mask
}

/// The watch of `w`, if one exists.
pub(crate) fn find(map: &[WatchIndex], watches: Watches<'_, '_>, w: Watch) -> Option<WatchIndex> {
    let mask = map.len().checked_sub(1)?;
    let mut i = home(w, mask);
    loop {
        let v = map[i];
        if v == NIL {
            return None;
        }
        if watches[v].watch == w {
            return Some(v);
        }
        i = (i + 1) & mask;
    }
}

/// Indexes watch `idx` (whose word is `watches[idx].watch`, not indexed yet). The map is at
/// most half full by sizing, so a free slot exists.
pub(crate) fn insert(map: &mut [WatchIndex], watches: Watches<'_, '_>, idx: WatchIndex) {
    let mask = map.len() - 1;
    let mut i = home(watches[idx].watch, mask);
    while map[i] != NIL {
        i = (i + 1) & mask;
    }
    map[i] = idx;
}

/// Removes watch `idx` from the index, shifting later members of its probe chain back.
pub(crate) fn remove(map: &mut [WatchIndex], watches: Watches<'_, '_>, idx: WatchIndex) {
    let mask = map.len() - 1;
    let mut i = home(watches[idx].watch, mask);
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
        let h = home(watches[v].watch, mask);
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
    use crate::index::TableIndex;
    use std::vec::Vec;

    #[test]
    fn survives_churn_with_colliding_keys() {
        let n = 64usize;
        let mut store: Vec<WatchSlot> = (0..n)
            .map(|i| WatchSlot {
                watch: Watch::Counter64(i as u64 * 4096),
                ..WatchSlot::new()
            })
            .collect();
        let mut watches = Table::new(&mut store[..]);
        let mut map = std::vec![NIL; 16];
        let mut live: Vec<WatchIndex> = Vec::new();
        // Keep at most 8 live in a 16-slot map while cycling through 64 keys, many times.
        let rounds = if cfg!(miri) { 30 } else { 2000u32 };
        for round in 0..rounds {
            let idx = WatchIndex::at(round.wrapping_mul(37) as usize % n);
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
            for i in (0..n).map(WatchIndex::at) {
                let want = live.contains(&i).then_some(i);
                assert_eq!(find(&map, &watches, watches[i].watch), want);
            }
        }
        watches[WatchIndex::at(0)].watch = Watch::Engine(9);
        assert_eq!(find(&[], &watches, Watch::Engine(9)), None);
    }
}
