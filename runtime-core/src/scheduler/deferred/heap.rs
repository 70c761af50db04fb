//! The waiters of one watched word as a pairing heap on `expected`, linked through the waiter
//! pool: insert in O(1), remove the smallest in O(log n) amortized, whatever order the
//! expectations arrive in.
#![forbid(unsafe_code)]

use super::store::{NIL, Waiter};

/// Melds heaps `a` and `b` (either may be empty); returns the root of the result.
fn meld(w: &mut [Waiter], a: u32, b: u32) -> u32 {
    if a == NIL {
        return b;
    }
    if b == NIL {
        return a;
    }
    let (parent, child) = if w[b as usize].expected < w[a as usize].expected {
        (b, a)
    } else {
        (a, b)
    };
    w[child as usize].next = w[parent as usize].child;
    w[parent as usize].child = child;
    parent
}

/// Adds waiter `n` to the heap rooted at `root`; returns the new root.
pub(crate) fn push(w: &mut [Waiter], root: u32, n: u32) -> u32 {
    w[n as usize].child = NIL;
    w[n as usize].next = NIL;
    meld(w, root, n)
}

/// Removes the root (a smallest waiter) of a non-empty heap; returns the new root. Two-pass
/// pairing: meld the root's children in pairs left to right, then the pairs right to left.
pub(crate) fn pop(w: &mut [Waiter], root: u32) -> u32 {
    let mut rest = w[root as usize].child;
    w[root as usize].child = NIL;
    // First pass: the melded pairs, stacked through `next` (last pair on top).
    let mut pairs = NIL;
    while rest != NIL {
        let a = rest;
        let b = w[a as usize].next;
        w[a as usize].next = NIL;
        if b == NIL {
            w[a as usize].next = pairs;
            pairs = a;
            break;
        }
        rest = w[b as usize].next;
        w[b as usize].next = NIL;
        let m = meld(w, a, b);
        w[m as usize].next = pairs;
        pairs = m;
    }
    // Second pass: meld the pairs from the last one back to the first.
    let mut root = NIL;
    while pairs != NIL {
        let next = w[pairs as usize].next;
        w[pairs as usize].next = NIL;
        root = meld(w, root, pairs);
        pairs = next;
    }
    root
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn pops_in_ascending_order_whatever_the_insert_order() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for n in [1usize, 2, 3, 17, 500] {
            let mut w = std::vec![Waiter::new(); n];
            let mut root = NIL;
            let mut keys = Vec::new();
            for i in 0..n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                w[i].expected = seed % 64; // many duplicates
                keys.push(w[i].expected);
                root = push(&mut w, root, i as u32);
            }
            let mut out = Vec::new();
            while root != NIL {
                out.push(w[root as usize].expected);
                root = pop(&mut w, root);
            }
            keys.sort();
            assert_eq!(out, keys);
        }
    }
}
