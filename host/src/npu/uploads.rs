//! Code uploaded to the device once per session: kernels and orchestration SOs, keyed by
//! their content, so twenty runs of one program copy it once. Bounded: past
//! [`MAX_UPLOADS`] distinct blobs the cache starts over (between runs, when no kernel uses
//! it).

use std::collections::HashMap;
use std::sync::Arc;

use pto_device_sys::cann::{CannError, DeviceMem, NpuApi};

/// Distinct blobs a session keeps on the device.
pub const MAX_UPLOADS: usize = 256;

/// The uploads of a session.
#[derive(Debug, Default)]
pub struct Uploads {
    by_content: HashMap<blake3::Hash, DeviceMem>,
}

impl Uploads {
    /// Device addresses of `blobs`, uploading those not on the device yet.
    pub fn addrs(&mut self, api: &Arc<NpuApi>, blobs: &[&[u8]]) -> Result<Vec<u64>, CannError> {
        let keys: Vec<blake3::Hash> = blobs.iter().map(|b| blake3::hash(b)).collect();
        let new = keys
            .iter()
            .filter(|k| !self.by_content.contains_key(k))
            .count();
        if self.by_content.len() + new > MAX_UPLOADS {
            self.by_content.clear();
        }
        let mut addrs = Vec::with_capacity(blobs.len());
        for (blob, key) in blobs.iter().zip(keys) {
            if let Some(m) = self.by_content.get(&key) {
                addrs.push(m.addr());
                continue;
            }
            let m = DeviceMem::alloc(api, blob.len())?;
            m.write(0, blob)?;
            addrs.push(m.addr());
            self.by_content.insert(key, m);
        }
        Ok(addrs)
    }
}
