//! Memory registration: regions keyed by their bounds, reference-counted, all-or-nothing.
//! Registering a region already registered with the same bounds takes another reference;
//! one that overlaps a registered region of other bounds is refused. A [`Registration`]
//! gives its references back when dropped, each to the registry it came from (a merge may
//! join registrations of several transports).
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::error::{ErrorKind, TransportError};
use super::live::{Live, Resource, Token};

/// A region of memory by address and length (the transport never dereferences it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// First byte.
    pub base: usize,
    /// Bytes.
    pub len: usize,
}

impl Region {
    /// The region a slice occupies.
    pub fn of(bytes: &[u8]) -> Self {
        Region {
            base: bytes.as_ptr() as usize,
            len: bytes.len(),
        }
    }

    fn end(self) -> usize {
        self.base + self.len
    }

    fn contains(self, inner: Region) -> bool {
        inner.base >= self.base && inner.end() <= self.end()
    }
}

#[derive(Debug)]
struct Entry {
    len: usize,
    refs: usize,
    _token: Token,
}

/// The entries of one registry, shared with the registrations it handed out.
type Entries = Arc<Mutex<BTreeMap<usize, Entry>>>;

/// The registered regions of one transport.
#[derive(Debug)]
pub struct Registry {
    entries: Entries,
    live: Arc<Live>,
}

impl Registry {
    /// An empty registry that counts its regions in `live`.
    pub fn new(live: Arc<Live>) -> Self {
        Registry {
            entries: Arc::default(),
            live,
        }
    }

    /// Registers every region of `regions`, or none: a refused region gives back the
    /// references taken for the ones before it.
    pub fn register(&self, regions: &[Region]) -> Result<Registration, TransportError> {
        let mut taken = Registration {
            regions: Vec::with_capacity(regions.len()),
            owners: Vec::with_capacity(regions.len()),
        };
        for &r in regions {
            // On error `taken` drops and releases what it holds.
            self.take(r)?;
            taken.regions.push(r);
            taken.owners.push(Arc::clone(&self.entries));
        }
        Ok(taken)
    }

    fn take(&self, r: Region) -> Result<(), TransportError> {
        if r.len == 0 || r.base.checked_add(r.len).is_none() {
            return Err(TransportError::invalid(format!(
                "cannot register {} bytes at {:#x}",
                r.len, r.base
            )));
        }
        let mut map = lock(&self.entries);
        if let Some(e) = map.get_mut(&r.base)
            && e.len == r.len
        {
            e.refs += 1;
            return Ok(());
        }
        // The nearest region starting before the end of `r` is the only one that can
        // overlap it, since registered regions never overlap each other.
        if let Some((&b, e)) = map.range(..r.end()).next_back()
            && b + e.len > r.base
        {
            return Err(TransportError::new(
                ErrorKind::RegistrationConflict,
                false,
                format!(
                    "{} bytes at {:#x} overlap the registered {} bytes at {b:#x}",
                    r.len, r.base, e.len
                ),
            ));
        }
        map.insert(
            r.base,
            Entry {
                len: r.len,
                refs: 1,
                _token: self.live.token(Resource::Registration),
            },
        );
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// References to registered regions; dropping it gives them back.
#[derive(Debug)]
pub struct Registration {
    regions: Vec<Region>,
    /// The registry each region of `regions` (same index) was taken from.
    owners: Vec<Entries>,
}

impl Registration {
    /// The regions held.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// Whether `bytes` lie inside one region held.
    pub fn covers(&self, bytes: &[u8]) -> bool {
        let r = Region::of(bytes);
        self.regions.iter().any(|m| m.contains(r))
    }

    /// One registration holding the references of both; each region stays with the
    /// registry (the transport) it came from, and goes back there on drop.
    pub fn merge(mut self, mut other: Registration) -> Registration {
        self.regions.append(&mut other.regions);
        self.owners.append(&mut other.owners);
        self
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        for (r, owner) in self.regions.drain(..).zip(self.owners.drain(..)) {
            let mut map = lock(&owner);
            if let Some(e) = map.get_mut(&r.base) {
                e.refs -= 1;
                if e.refs == 0 {
                    map.remove(&r.base);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg() -> (Registry, Arc<Live>) {
        let live = Live::new();
        (Registry::new(Arc::clone(&live)), live)
    }

    #[test]
    fn same_bounds_share_one_counted_entry() {
        let (r, live) = reg();
        let a = r
            .register(&[Region {
                base: 0x1000,
                len: 64,
            }])
            .unwrap();
        let b = r
            .register(&[Region {
                base: 0x1000,
                len: 64,
            }])
            .unwrap();
        assert_eq!(live.snapshot().registrations, 1);
        drop(a);
        assert_eq!(live.snapshot().registrations, 1);
        drop(b);
        assert_eq!(live.snapshot().registrations, 0);
    }

    #[test]
    fn an_overlap_is_refused_and_rolls_back_the_whole_list() {
        let (r, live) = reg();
        let _held = r
            .register(&[Region {
                base: 0x2000,
                len: 64,
            }])
            .unwrap();
        let e = r
            .register(&[
                Region {
                    base: 0x100,
                    len: 16,
                },
                Region {
                    base: 0x200,
                    len: 16,
                },
                Region {
                    base: 0x2020,
                    len: 64,
                },
            ])
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::RegistrationConflict, "{e}");
        assert_eq!(live.snapshot().registrations, 1);
        // A region ending where another starts does not overlap it.
        let _b = r
            .register(&[Region {
                base: 0x1fc0,
                len: 64,
            }])
            .unwrap();
        assert!(
            r.register(&[Region {
                base: 0x1fc0,
                len: 65
            }])
            .is_err()
        );
        assert!(r.register(&[Region { base: 0, len: 0 }]).is_err());
    }

    #[test]
    fn covers_only_whole_slices_inside_a_region() {
        let (r, _live) = reg();
        let buf = [0u8; 100];
        let m = r.register(&[Region::of(&buf[10..90])]).unwrap();
        assert!(m.covers(&buf[10..90]));
        assert!(m.covers(&buf[20..30]));
        assert!(!m.covers(&buf[5..30]));
        assert!(!m.covers(&buf[80..95]));
    }
}
