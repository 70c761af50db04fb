//! Loading ACL and HCCL, and checking every symbol the runtime calls.

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::vec::Vec;

use super::generated::acl::AclApi;
use super::generated::hccl::HcclApi;
use super::generated::types::*;

/// Why CANN could not be used.
#[derive(Debug)]
pub enum CannError {
    /// A library was found nowhere.
    NotFound {
        /// The library (`libascendcl.so`, `libhccl.so`).
        library: &'static str,
        /// Where it was looked for, and why each failed.
        tried: Vec<String>,
    },
    /// A library lacks a symbol the runtime calls.
    MissingSymbol {
        /// The library file.
        library: PathBuf,
        /// The symbol.
        symbol: &'static str,
    },
    /// A call returned an error code.
    Call {
        /// The function.
        function: &'static str,
        /// Its return code (`aclError`, `rtError_t`, `drvError_t` or `HcclResult`).
        code: i64,
        /// What `aclGetRecentErrMsg()` said right after the call, if anything.
        message: Option<String>,
    },
    /// Bad input from the caller.
    Invalid(String),
}

impl core::fmt::Display for CannError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CannError::NotFound { library, tried } => write!(
                f,
                "CANN is not installed or not found: {library} is in none of [{}]; install \
                 CANN and source its set_env.sh (which sets ASCEND_HOME_PATH), or add its \
                 lib64 directory to LD_LIBRARY_PATH",
                tried.join("; ")
            ),
            CannError::MissingSymbol { library, symbol } => write!(
                f,
                "{} does not export {symbol}: this CANN is older or newer than the runtime \
                 supports",
                library.display()
            ),
            CannError::Call {
                function,
                code,
                message,
            } => {
                write!(f, "{function} failed with code {code}")?;
                if let Some((name, hint)) = super::codes::describe(*code) {
                    write!(f, " ({name}): {hint}")?;
                }
                match message {
                    Some(m) => write!(f, "; CANN says: {m}"),
                    None => Ok(()),
                }
            }
            CannError::Invalid(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for CannError {}

/// ACL's library.
const ACL: &str = "libascendcl.so";
/// HCCL's library, by CANN generation.
const HCCL: [&str; 2] = ["libhccl.so", "libhcomm.so"];

/// Every ACL symbol the runtime cannot do without (`aclrtMemSetPidToShareableHandle` is
/// optional: older CANN lacks it, and windows exported without process-id validation do not
/// need it).
const ACL_REQUIRED: [&str; 15] = [
    "aclInit",
    "aclFinalize",
    "aclrtSetDevice",
    "aclrtResetDevice",
    "aclrtGetDevice",
    "aclrtMemGetAllocationGranularity",
    "aclrtMallocPhysical",
    "aclrtFreePhysical",
    "aclrtReserveMemAddress",
    "aclrtReleaseMemAddress",
    "aclrtMapMem",
    "aclrtUnmapMem",
    "aclrtMemSetAccess",
    "aclrtMemExportToShareableHandle",
    "aclrtMemImportFromShareableHandle",
];

/// Every HCCL symbol the runtime calls.
const HCCL_REQUIRED: [&str; 3] = ["HcclGetRootInfo", "HcclCommInitRootInfo", "HcclCommDestroy"];

/// ACL and HCCL, loaded.
pub struct Cann {
    pub(super) acl: AclApi,
    pub(super) hccl: HcclApi,
    libraries: [PathBuf; 2],
}

impl core::fmt::Debug for Cann {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cann")
            .field("libraries", &self.libraries)
            .finish()
    }
}

/// The directories to look in, from the environment as CANN sets it up.
pub(super) fn default_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"] {
        if let Some(home) = std::env::var_os(var) {
            dirs.push(Path::new(&home).join("lib64"));
        }
    }
    dirs.push(PathBuf::from(
        "/usr/local/Ascend/ascend-toolkit/latest/lib64",
    ));
    dirs
}

/// glibc's `RTLD_NODELETE`: CANN stays loaded for the process's life once loaded. Its
/// threads (stream workers, callbacks) may still run its code after the last call returned,
/// so unloading it when the last handle drops would pull the code from under them.
const RTLD_NODELETE: core::ffi::c_int = 0x1000;

/// Opens the first of `names` found in `dirs`, else through the loader's own search.
pub(super) fn open(
    names: &[&'static str],
    dirs: &[PathBuf],
) -> Result<(libloading::Library, PathBuf), CannError> {
    let mut tried = Vec::new();
    for name in names {
        let mut candidates: Vec<PathBuf> = dirs.iter().map(|d| d.join(name)).collect();
        candidates.push(PathBuf::from(name));
        for path in candidates {
            // SAFETY: loading CANN runs its initialisers; the libraries are the vendor's,
            // found where CANN installs them (or where the caller pointed).
            let lib = unsafe {
                libloading::os::unix::Library::open(
                    Some(&path),
                    libloading::os::unix::RTLD_LAZY | RTLD_NODELETE,
                )
            };
            match lib {
                Ok(lib) => return Ok((lib.into(), path)),
                // The loader's message names the path and why it failed.
                Err(e) => tried.push(e.to_string()),
            }
        }
    }
    Err(CannError::NotFound {
        library: names[0],
        tried,
    })
}

impl Cann {
    /// Loads CANN from where its environment says, then the usual places.
    pub fn load() -> Result<Self, CannError> {
        Self::load_from(&[])
    }

    /// Loads CANN, looking first in `dirs`.
    pub fn load_from(dirs: &[PathBuf]) -> Result<Self, CannError> {
        let mut all: Vec<PathBuf> = dirs.to_vec();
        all.extend(default_dirs());
        let (acl_lib, acl_path) = open(&[ACL], &all)?;
        let (hccl_lib, hccl_path) = open(&HCCL, &all)?;
        for (lib, path, required) in [
            (&acl_lib, &acl_path, &ACL_REQUIRED[..]),
            (&hccl_lib, &hccl_path, &HCCL_REQUIRED[..]),
        ] {
            for &symbol in required {
                let mut name = symbol.as_bytes().to_vec();
                name.push(0);
                // SAFETY: only the address is looked up (as an untyped pointer), not used.
                if unsafe { lib.get::<*const c_void>(&name) }.is_err() {
                    return Err(CannError::MissingSymbol {
                        library: path.clone(),
                        symbol,
                    });
                }
            }
        }
        // SAFETY: the libraries are CANN's; the tables bind each symbol to the prototype of
        // our header, which follows CANN's public headers.
        let acl = unsafe { AclApi::from_library(acl_lib) }
            .map_err(|e| CannError::Invalid(e.to_string()))?;
        // SAFETY: as above.
        let hccl = unsafe { HcclApi::from_library(hccl_lib) }
            .map_err(|e| CannError::Invalid(e.to_string()))?;
        crate::pto_info!(
            "CANN loaded: {} and {}",
            acl_path.display(),
            hccl_path.display()
        );
        Ok(Cann {
            acl,
            hccl,
            libraries: [acl_path, hccl_path],
        })
    }

    /// Whether ACL can restrict an exported window to given processes
    /// (`aclrtMemSetPidToShareableHandle`, optional: a symbol that looks up as NULL is
    /// absent, judged by that lookup alone).
    pub fn has_pid_restriction(&self) -> bool {
        self.acl.aclrtMemSetPidToShareableHandle.is_ok()
    }

    /// The library files loaded: ACL's, then HCCL's.
    pub fn libraries(&self) -> &[PathBuf; 2] {
        &self.libraries
    }
}

/// `Ok` for success, else the call's error.
pub(super) fn check(function: &'static str, code: i64) -> Result<(), CannError> {
    if code == ACL_SUCCESS as i64 {
        Ok(())
    } else {
        Err(CannError::Call {
            function,
            code,
            message: None,
        })
    }
}

/// A required symbol, resolved (every one was checked at load, so this cannot fail).
macro_rules! sym {
    ($table:expr, $name:ident) => {
        match &$table.$name {
            Ok(f) => *f,
            Err(_) => unreachable!(concat!(stringify!($name), " was checked at load")),
        }
    };
}
pub(super) use sym;

/// Calls that take no handle.
impl Cann {
    /// `aclInit(NULL)`; true if this call initialised ACL (false: it was already).
    pub fn init(&self) -> Result<bool, CannError> {
        // SAFETY: aclInit accepts a null config path.
        let code = unsafe { sym!(self.acl, aclInit)(core::ptr::null()) };
        if code == ACL_ERROR_REPEAT_INITIALIZE as i32 {
            return Ok(false);
        }
        check("aclInit", code as i64).map(|()| true)
    }

    /// `aclFinalize()`.
    pub fn finalize(&self) -> Result<(), CannError> {
        // SAFETY: no arguments.
        check("aclFinalize", unsafe { sym!(self.acl, aclFinalize)() }
            as i64)
    }

    /// `aclrtSetDevice(device)`, for the calling thread.
    pub fn set_device(&self, device: i32) -> Result<(), CannError> {
        // SAFETY: plain integer argument.
        check(
            "aclrtSetDevice",
            unsafe { sym!(self.acl, aclrtSetDevice)(device) } as i64,
        )
    }

    /// `aclrtResetDevice(device)`.
    pub fn reset_device(&self, device: i32) -> Result<(), CannError> {
        // SAFETY: plain integer argument.
        check(
            "aclrtResetDevice",
            unsafe { sym!(self.acl, aclrtResetDevice)(device) } as i64,
        )
    }

    /// `HcclGetRootInfo`: rank 0's rendezvous token, to pass to every rank.
    pub fn root_info(&self) -> Result<std::boxed::Box<HcclRootInfo>, CannError> {
        let mut info = std::boxed::Box::new(HcclRootInfo {
            internal: [0; HCCL_ROOT_INFO_BYTES as usize],
        });
        // SAFETY: `info` is a valid, writable HcclRootInfo.
        let code = unsafe { sym!(self.hccl, HcclGetRootInfo)(&mut *info) };
        check("HcclGetRootInfo", code as i64).map(|()| info)
    }
}
