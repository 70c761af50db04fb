//! The device context of a session: ACL initialised once per process (CANN wants one
//! `aclInit` per process, so it is never finalised), the device set on every host thread
//! that calls into the session, and each of those settings undone at the end.

use std::sync::{Arc, Mutex, OnceLock};
use std::thread::ThreadId;

use pto_device_sys::cann::NpuApi;

use super::error::NpuError;

/// ACL's initialisation, once per process.
static ACL_INIT: OnceLock<()> = OnceLock::new();

/// The device, set on the threads that used it.
#[derive(Debug)]
pub struct DeviceRefs {
    api: Arc<NpuApi>,
    device: i32,
    threads: Mutex<Vec<ThreadId>>,
    /// After `aclrtResetDeviceForce` nothing is left to reset.
    forced: bool,
}

impl DeviceRefs {
    /// Initialises ACL (once per process) and sets `device` on the calling thread.
    pub fn open(api: &Arc<NpuApi>, device: i32) -> Result<Self, NpuError> {
        if ACL_INIT.get().is_none() {
            api.init().map_err(NpuError::cann("initialising ACL"))?;
            let _ = ACL_INIT.set(());
        }
        let refs = DeviceRefs {
            api: Arc::clone(api),
            device,
            threads: Mutex::new(Vec::new()),
            forced: false,
        };
        refs.on_this_thread()?;
        Ok(refs)
    }

    /// Sets the device on the calling thread if it is not set there yet.
    pub fn on_this_thread(&self) -> Result<(), NpuError> {
        let me = std::thread::current().id();
        let mut threads = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        if !threads.contains(&me) {
            self.api
                .set_device(self.device)
                .map_err(NpuError::cann("setting the device on this thread"))?;
            threads.push(me);
        }
        Ok(())
    }

    /// `aclrtResetDeviceForce`: after a failure, nothing of the device's state survives.
    pub fn reset_force(&mut self) {
        let _ = self.api.reset_device_force(self.device);
        self.forced = true;
    }
}

impl Drop for DeviceRefs {
    fn drop(&mut self) {
        if self.forced {
            return;
        }
        let n = self.threads.lock().map_or(0, |t| t.len());
        for _ in 0..n {
            let _ = self.api.reset_device(self.device);
        }
    }
}
