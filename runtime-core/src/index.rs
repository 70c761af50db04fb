//! Typed indices into the region's pools: each pool is a [`Table`] indexed by its own
//! newtype, so an index into one pool used on another does not compile.
//!
//! An index is a `u32` (what the pools' links store) with one reserved value, `NIL` (end of a
//! list, "no index"). A table's accessors cost what slice indexing costs: a bounds check and
//! a load.
#![forbid(unsafe_code)]

use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

use crate::region::raw::masked::MaskedTable;

/// The raw `u32` of every index type's `NIL`.
pub(crate) const NIL_RAW: u32 = u32::MAX;

/// An index newtype over a `u32`, usable with [`Table`].
pub(crate) trait TableIndex: Copy + Eq {
    /// The index of position `i`. Positions of a pool fit a `u32` (carving refuses larger
    /// pools).
    fn at(i: usize) -> Self;
    /// The position the index names.
    fn get(self) -> usize;
    /// Position `i` as the link of a free list over `len` records: `NIL` past the end.
    #[inline]
    fn link(i: usize, len: usize) -> Self
    where
        Self: TableIndex + HasNil,
    {
        if i < len { Self::at(i) } else { Self::NIL }
    }
}

/// An index type with a reserved "no index" value.
pub(crate) trait HasNil {
    /// End of a list; "no index".
    const NIL: Self;
}

/// Declares `u32` index newtypes for [`Table`]s, each with its `NIL`.
macro_rules! table_index {
    ($($(#[$doc:meta])* $name:ident;)+) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub(crate) struct $name(u32);

        impl $name {
            /// End of a list; "no index".
            pub(crate) const NIL: $name = $name($crate::index::NIL_RAW);

            /// The index as the raw word a link stores.
            #[allow(dead_code)]
            #[inline]
            pub(crate) const fn raw(self) -> u32 {
                self.0
            }
            /// Whether this is [`Self::NIL`].
            #[allow(dead_code)]
            #[inline]
            pub(crate) const fn is_nil(self) -> bool {
                self.0 == $crate::index::NIL_RAW
            }
        }

        impl $crate::index::HasNil for $name {
            const NIL: $name = $name::NIL;
        }

        impl $crate::index::TableIndex for $name {
            #[inline]
            fn at(i: usize) -> Self {
                $name(i as u32)
            }
            #[inline]
            fn get(self) -> usize {
                self.0 as usize
            }
        }
    )+};
}
pub(crate) use table_index;

/// A pool of `T` carved from the region, indexed by `I` only.
pub(crate) struct Table<'r, I, T> {
    items: &'r mut [T],
    index: PhantomData<I>,
}

impl<'r, I: TableIndex, T> Table<'r, I, T> {
    /// The pool over `items`.
    #[inline]
    pub(crate) fn new(items: &'r mut [T]) -> Self {
        Table {
            items,
            index: PhantomData,
        }
    }
    /// Records in the pool.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
    /// Every record with its index.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (I, &T)> + '_ {
        self.items.iter().enumerate().map(|(i, t)| (I::at(i), t))
    }
    /// Every record with its index, to change.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (I, &mut T)> + '_ {
        self.items
            .iter_mut()
            .enumerate()
            .map(|(i, t)| (I::at(i), t))
    }
}

impl<I: TableIndex, T> Index<I> for Table<'_, I, T> {
    type Output = T;
    #[inline]
    fn index(&self, i: I) -> &T {
        &self.items[i.get()]
    }
}

impl<I: TableIndex, T> IndexMut<I> for Table<'_, I, T> {
    #[inline]
    fn index_mut(&mut self, i: I) -> &mut T {
        &mut self.items[i.get()]
    }
}

/// A pool of `T` a power of two long, indexed by `I` modulo its length: no access is
/// bounds-checked. Sized past its largest index, it never wraps; `NIL` names its last record,
/// so a list's end must be tested before it is followed, as everywhere.
pub(crate) struct MaskedPool<'r, I, T> {
    items: MaskedTable<'r, T>,
    index: PhantomData<I>,
}

impl<'r, I: TableIndex, T> MaskedPool<'r, I, T> {
    /// The pool over `items`, a power of two long ([`MaskedTable::new`]).
    pub(crate) fn new(items: &'r mut [T]) -> Self {
        MaskedPool {
            items: MaskedTable::new(items),
            index: PhantomData,
        }
    }
    /// Every record with its index.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (I, &T)> + '_ {
        self.items.iter().enumerate().map(|(i, t)| (I::at(i), t))
    }
}

impl<I: TableIndex, T> Index<I> for MaskedPool<'_, I, T> {
    type Output = T;
    #[inline]
    fn index(&self, i: I) -> &T {
        self.items.at(i.get())
    }
}

impl<I: TableIndex, T> IndexMut<I> for MaskedPool<'_, I, T> {
    #[inline]
    fn index_mut(&mut self, i: I) -> &mut T {
        self.items.at_mut(i.get())
    }
}

/// Slots of an open-addressing map for `capacity` keys: a power of two, at most half full.
pub(crate) fn map_len(capacity: usize) -> usize {
    if capacity == 0 {
        0
    } else {
        (capacity * 2).next_power_of_two()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    table_index! {
        /// A test index.
        Apple;
    }

    #[test]
    fn a_table_reads_and_writes_through_its_index_and_links_past_its_end_to_nil() {
        let mut store = [0u8; 3];
        let mut t: Table<'_, Apple, u8> = Table::new(&mut store);
        t[Apple::at(2)] = 7;
        assert_eq!(t[Apple::at(2)], 7);
        assert_eq!(t.len(), 3);
        assert_eq!(Apple::link(2, 3), Apple::at(2));
        assert!(Apple::link(3, 3).is_nil());
        assert_eq!(t.iter().filter(|(_, v)| **v == 7).count(), 1);
        assert_eq!((map_len(0), map_len(3), map_len(4)), (0, 8, 8));
    }
}
