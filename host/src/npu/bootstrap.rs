//! The AICPU SO bootstrap, once per process: the dispatcher and `libpto_aicpu.so` are copied
//! into device memory and CANN's extend-kernels library is launched on them
//! (`rtAicpuKernelLaunchExWithArgs`, kernel type 5, op `AST_DYN_AICPU`); it loads the
//! dispatcher, which installs the inner SO under its fingerprint and the device. CANN
//! latches after the first upload of a process and ignores later ones, so a process uploads
//! once and every later session reuses what it installed.

use std::sync::{Arc, Mutex};

use pto_device_sys::cann::{DeviceMem, KfcArgs, NpuApi, Stream, launch_aicpu_kfc};
use pto_dispatcher::{DeviceArgs, fingerprint};

use super::error::NpuError;

/// The fingerprint of the SO this process uploaded, once it did.
static UPLOADED: Mutex<Option<u64>> = Mutex::new(None);

/// The host argument block: the device arguments' address, then the names CANN's
/// extend-kernels library checks.
fn host_args(device_args: u64) -> KfcArgs {
    KfcArgs::new(
        device_args,
        b"DynTileFwkKernelServerInit",
        b"libaicpu_extend_kernels.so",
        b"",
    )
    .expect("the bootstrap's names fit the block")
}

/// Uploads `inner` through `dispatcher` unless this process did already (then it checks
/// that it is the same SO). Returns the inner SO's fingerprint.
pub fn ensure(
    api: &Arc<NpuApi>,
    stream: &Stream,
    driver_id: u32,
    dispatcher: &[u8],
    inner: &[u8],
    sync_ms: i32,
    drain_ms: i32,
) -> Result<u64, NpuError> {
    let fp = fingerprint(inner).map_err(|e| NpuError::Invalid(format!("{e}")))?;
    let mut uploaded = UPLOADED.lock().unwrap_or_else(|e| e.into_inner());
    match *uploaded {
        Some(done) if done == fp => return Ok(fp),
        Some(done) => {
            return Err(NpuError::Invalid(format!(
                "this process uploaded the AICPU SO with fingerprint {done:016x} already and \
                 CANN ignores later uploads: run {fp:016x} in a new process"
            )));
        }
        None => {}
    }
    let step = "bootstrap: copying the SOs to the device";
    let disp_mem = DeviceMem::alloc(api, dispatcher.len()).map_err(NpuError::cann(step))?;
    disp_mem
        .write(0, dispatcher)
        .map_err(NpuError::cann(step))?;
    let inner_mem = DeviceMem::alloc(api, inner.len()).map_err(NpuError::cann(step))?;
    inner_mem.write(0, inner).map_err(NpuError::cann(step))?;
    let dev_args = DeviceArgs {
        dispatcher: disp_mem.addr(),
        dispatcher_len: dispatcher.len() as u64,
        device: u64::from(driver_id),
        inner: inner_mem.addr(),
        inner_len: inner.len() as u64,
        ..DeviceArgs::default()
    };
    let args_mem = DeviceMem::alloc(api, size_of::<DeviceArgs>()).map_err(NpuError::cann(step))?;
    args_mem
        .write(0, bytemuck::bytes_of(&dev_args))
        .map_err(NpuError::cann(step))?;
    let mut args = host_args(args_mem.addr());
    launch_aicpu_kfc(api, stream, c"AST_DYN_AICPU", 1, &mut args).map_err(NpuError::cann(
        "bootstrap: launching the extend-kernels dispatcher",
    ))?;
    // CANN latched: whatever happens next, a second upload would be ignored.
    *uploaded = Some(fp);
    if let Err(e) = stream.synchronize(sync_ms) {
        // The dispatcher may still read the SOs: the device drains (bounded) before the
        // memory holding them is freed.
        let _ = api.synchronize_device(drain_ms);
        return Err(NpuError::Cann {
            step: "bootstrap: the dispatcher installing the AICPU SO",
            source: e,
        });
    }
    Ok(fp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_block_names_what_cann_checks_where_it_looks() {
        let args = host_args(0x1122);
        let a = bytemuck::bytes_of(&args);
        assert_eq!(a.len(), 304);
        assert_eq!(&a[40..48], &0x1122u64.to_le_bytes());
        assert!(a[208..].starts_with(b"DynTileFwkKernelServerInit\0"));
        assert!(a[240..].starts_with(b"libaicpu_extend_kernels.so\0"));
        assert!(a[272..].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_name_without_room_for_its_nul_is_refused() {
        assert!(KfcArgs::new(0, &[b'x'; 31], b"", b"").is_some());
        assert!(KfcArgs::new(0, &[b'x'; 32], b"", b"").is_none());
    }
}
