//! A table whose length is a power of two, every index taken modulo its length: no access
//! can fall outside it, so none is checked. The tensor map's buffer and cell indexes are
//! such tables, probed by hashes.

/// A power-of-two table of `T`, indexed modulo its length.
pub(crate) struct MaskedTable<'r, T> {
    items: &'r mut [T],
    /// `items.len() - 1`: an index `& mask` is below the length.
    mask: usize,
}

impl<'r, T> MaskedTable<'r, T> {
    /// The table over `items`.
    ///
    /// # Panics
    /// If `items`' length is not a power of two (0 is not): a layout bug, found at init.
    pub(crate) fn new(items: &'r mut [T]) -> Self {
        assert!(
            items.len().is_power_of_two(),
            "a masked table of {} items",
            items.len()
        );
        let mask = items.len() - 1;
        MaskedTable { items, mask }
    }

    /// Items in the table.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.mask + 1
    }

    /// Item `i` modulo the length.
    #[inline]
    pub(crate) fn at(&self, i: usize) -> &T {
        // SAFETY: `items.len() == mask + 1` (a power of two, checked in `new`; neither field
        // changes after), so `i & mask < items.len()`.
        unsafe { self.items.get_unchecked(i & self.mask) }
    }

    /// Item `i` modulo the length, to change.
    #[inline]
    pub(crate) fn at_mut(&mut self, i: usize) -> &mut T {
        // SAFETY: as in `at`.
        unsafe { self.items.get_unchecked_mut(i & self.mask) }
    }

    /// Every item.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn iter(&self) -> core::slice::Iter<'_, T> {
        self.items.iter()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn indices_wrap_around_the_length() {
        let mut items = [0u32; 8];
        let mut t = MaskedTable::new(&mut items);
        *t.at_mut(9) = 7;
        assert_eq!((*t.at(1), *t.at(17), t.len()), (7, 7, 8));
        assert_eq!(t.iter().filter(|&&x| x == 7).count(), 1);
    }

    #[test]
    #[should_panic(expected = "a masked table of 0 items")]
    fn an_empty_table_is_refused() {
        let _ = MaskedTable::<u32>::new(&mut []);
    }
}
