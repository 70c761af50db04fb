//! C kernels of the device ABI (`device-sys/aicore/pto_aicore.h`) on the simulator: a kernel
//! is a shared object built for this host by any compiler with any flags, loaded with the
//! dynamic loader, its entry found by its symbol (`pto_kernel_entry`, or a name the caller
//! gives), and called by a simulated core with a payload slot laid out as on the chip.
//!
//! A file the simulator cannot take is refused when it is loaded, with one line that names
//! the file and says how to build one it can ([`KernelLoadError`]): raw code (no ELF), an
//! ELF of another machine, an object file or executable, an SO without the entry symbol, an
//! SO built against another version of the kernel ABI.

mod elf;
mod error;

use std::path::Path;
use std::sync::Arc;

use pto_device_sys::chip::layout::KERNEL_ABI_VERSION;
use pto_runtime_core::KernelId;

use crate::kernels::KernelTable;
use crate::raw::c_call::Entry;
use crate::raw::so::SharedObject;

pub use error::{BUILD_HINT, KernelLoadError};

/// The symbol a kernel file's entry has unless the caller names another.
pub const DEFAULT_ENTRY: &str = "pto_kernel_entry";

/// The symbol a kernel carries its ABI version in (`pto_aicore.h` defines it).
pub const ABI_SYMBOL: &str = "pto_kernel_abi_version";

/// A C kernel loaded from a shared object: called by a simulated core as the AICore
/// executor calls a kernel, `void entry(int64_t *args)` with a payload slot around `args`.
///
/// ```no_run
/// use pto_runtime_core::KernelId;
/// use pto_sim::{CKernel, KernelTable};
///
/// // square.c: #include "pto_aicore.h" ... void pto_kernel_entry(int64_t *args) { ... }
/// // cc -shared -fPIC -O2 -I device-sys/aicore -o square.so square.c
/// let square = CKernel::open("square.so", None)?;
/// let kernels = KernelTable::new().with_c(KernelId(0), "square", square);
/// # Ok::<(), pto_sim::KernelLoadError>(())
/// ```
pub struct CKernel {
    entry: Entry,
    file: String,
    symbol: String,
}

impl std::fmt::Debug for CKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CKernel")
            .field("file", &self.file)
            .field("symbol", &self.symbol)
            .finish_non_exhaustive()
    }
}

impl CKernel {
    /// Loads the kernel file at `path`, its entry the function `entry` (default
    /// [`DEFAULT_ENTRY`]).
    pub fn open(path: impl AsRef<Path>, entry: Option<&str>) -> Result<Self, KernelLoadError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| KernelLoadError::Read {
            file: file.clone(),
            reason: e.to_string(),
        })?;
        Self::load(&bytes, &file, entry.unwrap_or(DEFAULT_ENTRY))
    }

    /// Loads the kernel whose file's bytes are `bytes` (`file` names it in errors), its entry
    /// the exported function `entry`. The file is checked first (an ELF shared object for this
    /// host exporting `entry` and carrying this runtime's kernel ABI version), then loaded
    /// from memory: nothing is written to disk.
    pub fn load(bytes: &[u8], file: &str, entry: &str) -> Result<Self, KernelLoadError> {
        let has_abi = elf::check(bytes, file, entry)?;
        if !has_abi {
            return Err(KernelLoadError::NoAbiVersion { file: file.into() });
        }
        let so = SharedObject::load(bytes, &format!("kernel {file}")).map_err(|reason| {
            KernelLoadError::Load {
                file: file.into(),
                reason: reason
                    .strip_prefix(&format!("cannot load kernel {file}: "))
                    .unwrap_or(&reason)
                    .to_owned(),
            }
        })?;
        let load_err = |what: &str| KernelLoadError::Load {
            file: file.into(),
            reason: format!("the loader does not find {what}, which the file exports"),
        };
        let version = so
            .read_u32(ABI_SYMBOL)
            .ok_or_else(|| load_err(ABI_SYMBOL))?;
        if version != KERNEL_ABI_VERSION {
            return Err(KernelLoadError::AbiMismatch {
                file: file.into(),
                found: version,
                want: KERNEL_ABI_VERSION,
            });
        }
        let entry_at = Entry::resolve(so, entry).ok_or_else(|| load_err(entry))?;
        Ok(CKernel {
            entry: entry_at,
            file: file.into(),
            symbol: entry.into(),
        })
    }

    /// The file it was loaded from, as given.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The symbol of its entry.
    pub fn entry(&self) -> &str {
        &self.symbol
    }

    /// Runs it as kernel `id` for the task `ctx` describes.
    pub(crate) fn run(
        &self,
        id: KernelId,
        ctx: &crate::KernelCtx<'_>,
    ) -> Result<(), crate::KernelError> {
        self.entry.run(id.0, ctx)
    }
}

impl KernelTable {
    /// The same table with the C kernel `kernel` registered as `id`, named `name`.
    pub fn with_c(mut self, id: KernelId, name: impl Into<Arc<str>>, kernel: CKernel) -> Self {
        self.register_c(id, name, kernel);
        self
    }

    /// Registers the C kernel `kernel` as `id`, named `name` (replacing any earlier kernel
    /// `id`).
    pub fn register_c(
        &mut self,
        id: KernelId,
        name: impl Into<Arc<str>>,
        kernel: CKernel,
    ) -> &mut Self {
        let kernel = Arc::new(kernel);
        let f: Arc<crate::KernelFn> =
            Arc::new(move |ctx: &crate::KernelCtx<'_>| kernel.run(id, ctx));
        self.insert(id, name.into(), f, true)
    }
}
