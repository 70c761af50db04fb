//! The waiters of one watched word as a pairing heap on `expected`, linked through the waiter
//! pool: insert in O(1), remove the smallest in O(log n) amortized, whatever order the
//! expectations arrive in.
#![forbid(unsafe_code)]

use super::store::{Waiter, WaiterIndex};
use crate::index::Table;

/// The waiter pool.
type Waiters<'a, 'r> = &'a mut Table<'r, WaiterIndex, Waiter>;

const NIL: WaiterIndex = WaiterIndex::NIL;

/// Melds heaps `a` and `b` (either may be empty); returns the root of the result.
fn meld(w: Waiters<'_, '_>, a: WaiterIndex, b: WaiterIndex) -> WaiterIndex {
    if a == NIL {
        return b;
    }
    if b == NIL {
        return a;
    }
    let (parent, child) = if w[b].expected < w[a].expected {
        (b, a)
    } else {
        (a, b)
    };
    w[child].next = w[parent].child;
    w[parent].child = child;
    parent
}

/// Adds waiter `n` to the heap rooted at `root`; returns the new root.
pub(crate) fn push(w: Waiters<'_, '_>, root: WaiterIndex, n: WaiterIndex) -> WaiterIndex {
    w[n].child = NIL;
    w[n].next = NIL;
    meld(w, root, n)
}

/// Removes the root (a smallest waiter) of a non-empty heap; returns the new root. Two-pass
/// pairing: meld the root's children in pairs left to right, then the pairs right to left.
pub(crate) fn pop(w: Waiters<'_, '_>, root: WaiterIndex) -> WaiterIndex {
    let mut rest = w[root].child;
    w[root].child = NIL;
    // First pass: the melded pairs, stacked through `next` (last pair on top).
    let mut pairs = NIL;
    while rest != NIL {
        let a = rest;
        let b = w[a].next;
        w[a].next = NIL;
        if b == NIL {
            w[a].next = pairs;
            pairs = a;
            break;
        }
        rest = w[b].next;
        w[b].next = NIL;
        let m = meld(w, a, b);
        w[m].next = pairs;
        pairs = m;
    }
    // Second pass: meld the pairs from the last one back to the first.
    let mut root = NIL;
    while pairs != NIL {
        let next = w[pairs].next;
        w[pairs].next = NIL;
        root = meld(w, root, pairs);
        pairs = next;
    }
    root
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::index::TableIndex;
    use std::vec::Vec;

    #[test]
    fn pops_in_ascending_order_whatever_the_insert_order() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for n in [1usize, 2, 3, 17, 500] {
            let mut store = std::vec![Waiter::new(); n];
            let mut w = Table::new(&mut store[..]);
            let mut root = NIL;
            let mut keys = Vec::new();
            for i in 0..n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                w[WaiterIndex::at(i)].expected = seed % 64; // many duplicates
                keys.push(w[WaiterIndex::at(i)].expected);
                root = push(&mut w, root, WaiterIndex::at(i));
            }
            let mut out = Vec::new();
            while root != NIL {
                out.push(w[root].expected);
                root = pop(&mut w, root);
            }
            keys.sort();
            assert_eq!(out, keys);
        }
    }
}
