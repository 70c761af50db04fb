//! How a table is taken from the region: one [`Carve`] pass hands out tables in order, either
//! measuring them ([`Measure`]) or placing them in the caller's bytes (`raw::region::Carver`).
//! Each subsystem carves its own tables from the pass it is given; the sequence of them is
//! composed at the top (`crate::layout`).
#![forbid(unsafe_code)]

use core::mem::{align_of, size_of};

use crate::region::config::ConfigError;

/// Alignment of the region and of every table in it.
pub const REGION_ALIGN: usize = 64;

/// One pass over the region's tables, in order.
pub(crate) trait Carve<'r> {
    /// The next table: `count` values made by `make(i)`, at an offset aligned to at least
    /// [`REGION_ALIGN`]. Empty while measuring.
    fn table<T: 'r>(
        &mut self,
        count: usize,
        make: impl FnMut(usize) -> T,
    ) -> Result<&'r mut [T], ConfigError>;
}

/// The measuring pass: it only adds up offsets and sizes.
#[derive(Default)]
pub(crate) struct Measure {
    end: usize,
}

impl Measure {
    /// Where the last table measured ends.
    pub(crate) fn end(&self) -> usize {
        self.end
    }
}

impl<'r> Carve<'r> for Measure {
    fn table<T: 'r>(
        &mut self,
        count: usize,
        _make: impl FnMut(usize) -> T,
    ) -> Result<&'r mut [T], ConfigError> {
        let offset = next_table(self.end, align_of::<T>()).ok_or(OVERFLOW)?;
        let bytes = size_of::<T>().checked_mul(count).ok_or(OVERFLOW)?;
        self.end = offset.checked_add(bytes).ok_or(OVERFLOW)?;
        Ok(Default::default())
    }
}

/// Where the table after `end` starts, for a type aligned to `align`.
pub(crate) fn next_table(end: usize, align: usize) -> Option<usize> {
    end.checked_next_multiple_of(align.max(REGION_ALIGN))
}

/// A config whose region would not fit the address space.
pub(crate) const OVERFLOW: ConfigError = ConfigError::RegionTooSmall {
    needed: usize::MAX,
    given: 0,
};
