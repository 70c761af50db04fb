//! Places typed tables into the caller's region.

use core::marker::PhantomData;
use core::mem::{align_of, size_of};

use crate::region::carve::{Carve, next_table};
use crate::region::config::ConfigError;

/// Hands out disjoint, initialised tables from one exclusively borrowed byte region.
pub(crate) struct Carver<'r> {
    base: *mut u8,
    len: usize,
    /// Bytes below this offset are handed out already.
    floor: usize,
    _region: PhantomData<&'r mut [u8]>,
}

/// Why a table could not be placed (the layout and the region disagree).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PlaceError {
    pub(crate) needed: usize,
}

impl<'r> Carver<'r> {
    /// Takes the region for `'r`: nothing else can touch its bytes while the tables live.
    pub(crate) fn new(region: &'r mut [u8]) -> Self {
        Carver {
            base: region.as_mut_ptr(),
            len: region.len(),
            floor: 0,
            _region: PhantomData,
        }
    }

    /// Writes `count` values made by `make(i)` at byte `offset` and hands them out
    /// exclusively. Offsets must grow from call to call; a misaligned, overlapping or
    /// out-of-bounds table is refused.
    pub(crate) fn place_mut<T>(
        &mut self,
        offset: usize,
        count: usize,
        mut make: impl FnMut(usize) -> T,
    ) -> Result<&'r mut [T], PlaceError> {
        let bytes = size_of::<T>()
            .checked_mul(count)
            .ok_or(PlaceError { needed: usize::MAX })?;
        let end = offset
            .checked_add(bytes)
            .ok_or(PlaceError { needed: usize::MAX })?;
        if end > self.len {
            return Err(PlaceError { needed: end });
        }
        if offset < self.floor || !(self.base as usize + offset).is_multiple_of(align_of::<T>()) {
            return Err(PlaceError { needed: end });
        }
        self.floor = end;
        // SAFETY: `offset..end` lies inside the region (checked above), so the pointer stays in
        // the allocation the caller borrowed.
        let first = unsafe { self.base.add(offset) }.cast::<T>();
        for i in 0..count {
            // SAFETY: element `i` lies inside `offset..end`, is aligned for `T` (the start is,
            // and `size_of::<T>()` is a multiple of `align_of::<T>()`), and no reference to
            // these bytes exists yet: `floor` keeps tables disjoint and the region is borrowed
            // exclusively.
            unsafe { first.add(i).write(make(i)) };
        }
        // SAFETY: the `count` elements were all initialised above; the bytes stay borrowed for
        // `'r` and this carver never hands them out again (`floor` moved past them), so the
        // returned slice is the only access to them from now on.
        Ok(unsafe { core::slice::from_raw_parts_mut(first, count) })
    }
}

impl<'r> Carve<'r> for Carver<'r> {
    /// The next table, right after the last one (aligned as [`next_table`] says).
    fn table<T: 'r>(
        &mut self,
        count: usize,
        make: impl FnMut(usize) -> T,
    ) -> Result<&'r mut [T], ConfigError> {
        let too_small = |needed| ConfigError::RegionTooSmall {
            needed,
            given: self.len,
        };
        let offset = next_table(self.floor, align_of::<T>()).ok_or(too_small(usize::MAX))?;
        let given = self.len;
        self.place_mut(offset, count, make)
            .map_err(|e| ConfigError::RegionTooSmall {
                needed: e.needed,
                given,
            })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::AtomicU64;

    #[repr(align(64))]
    struct Aligned([u8; 256]);

    #[test]
    fn refuses_overlap_misalignment_and_overflow() {
        let mut buf = Aligned([0; 256]);
        let mut c = Carver::new(&mut buf.0);
        let a = c.place_mut(0, 4, |i| AtomicU64::new(i as u64)).unwrap();
        assert_eq!(a[3].load(core::sync::atomic::Ordering::Relaxed), 3);
        assert!(c.place_mut(8, 1, |_| AtomicU64::new(0)).is_err(), "overlap");
        assert!(
            c.place_mut(36, 1, |_| AtomicU64::new(0)).is_err(),
            "misaligned"
        );
        assert!(
            c.place_mut(64, 32, |_| AtomicU64::new(0)).is_err(),
            "past the end"
        );
        assert!(c.place_mut(64, 24, |_| AtomicU64::new(0)).is_ok());
    }
}
