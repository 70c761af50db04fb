//! Why a C kernel file cannot be loaded: each error names the file and says how to build one
//! that can.

/// How to build a kernel the simulator loads, quoted by the errors.
pub const BUILD_HINT: &str = "build it as a shared object of this host, \
     e.g. `cc -shared -fPIC -O2 -I device-sys/aicore -o k.so k.c`";

/// A kernel file the simulator refuses, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelLoadError {
    /// The file could not be read.
    #[error("cannot read kernel {file}: {reason}")]
    Read {
        /// The file.
        file: String,
        /// The operating system's reason.
        reason: String,
    },
    /// Not an ELF file at all (raw code, say: the simulator runs shared objects).
    #[error(
        "kernel {file} is not an ELF file (raw code is not a kernel the simulator can find an entry in): {BUILD_HINT}"
    )]
    NotElf {
        /// The file.
        file: String,
    },
    /// An ELF file whose headers cannot be read.
    #[error("kernel {file} is not a readable ELF file ({reason}): {BUILD_HINT}")]
    BadElf {
        /// The file.
        file: String,
        /// What the reader found wrong.
        reason: String,
    },
    /// Code for another machine.
    #[error(
        "kernel {file} holds {machine} code, and the simulator runs {host} code: {BUILD_HINT} (with this host's compiler)"
    )]
    OtherMachine {
        /// The file.
        file: String,
        /// The machine its headers name.
        machine: String,
        /// This host's machine.
        host: String,
    },
    /// An ELF file that is not a shared object (an object file, an executable).
    #[error("kernel {file} is {kind}, not a shared object: {BUILD_HINT}")]
    NotShared {
        /// The file.
        file: String,
        /// What it is.
        kind: &'static str,
    },
    /// The entry symbol is not an exported function of the file.
    #[error(
        "kernel {file} does not export a function `{entry}`{}: give the kernel's entry that \
         name, or name the entry after a colon (`{file}:NAME`)",
        entry_note(*.hidden, functions)
    )]
    NoEntry {
        /// The file.
        file: String,
        /// The symbol looked for.
        entry: String,
        /// The file defines it, but keeps it to itself (static, or hidden visibility).
        hidden: bool,
        /// The functions it does export (leading underscores left out).
        functions: Vec<String>,
    },
    /// The file was not built with this runtime's kernel header.
    #[error(
        "kernel {file} has no `pto_kernel_abi_version`: it was not built with this runtime's pto_aicore.h; include \"pto_aicore.h\" (device-sys/aicore) in its source"
    )]
    NoAbiVersion {
        /// The file.
        file: String,
    },
    /// The file was built against another version of the kernel ABI.
    #[error(
        "kernel {file} was built for kernel ABI version {found}, and this runtime speaks version {want}: rebuild it with this runtime's device-sys/aicore/pto_aicore.h"
    )]
    AbiMismatch {
        /// The file.
        file: String,
        /// The version the file carries.
        found: u32,
        /// This runtime's version.
        want: u32,
    },
    /// The dynamic loader refused it (a symbol it needs is missing, say).
    #[error("kernel {file}: {reason}")]
    Load {
        /// The file.
        file: String,
        /// The loader's reason.
        reason: String,
    },
}

/// ` (...)` saying why the entry was not found.
fn entry_note(hidden: bool, functions: &[String]) -> String {
    if hidden {
        " (it defines one, but as `static` or with hidden visibility)".into()
    } else if functions.is_empty() {
        " (it exports no function)".into()
    } else {
        let mut list = functions
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if functions.len() > 8 {
            list.push_str(", ...");
        }
        format!(" (it exports: {list})")
    }
}
