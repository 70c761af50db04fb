//! What a kernel file is, read from its ELF headers and symbol tables before anything is
//! loaded: the simulator takes a shared object for this host's machine that exports its
//! entry as a function. Anything else is refused with the reason and how to build it.

use object::{Architecture, Object, ObjectKind, ObjectSymbol, SymbolKind};

use super::error::KernelLoadError;

/// The machine this process runs, as ELF headers name it.
pub(crate) const HOST: Architecture = if cfg!(target_arch = "aarch64") {
    Architecture::Aarch64
} else {
    Architecture::X86_64
};

/// A readable name of `a` for messages.
pub(crate) fn machine_name(a: Architecture) -> String {
    match a {
        Architecture::X86_64 => "x86_64".into(),
        Architecture::Aarch64 => "aarch64".into(),
        Architecture::Unknown => "an unknown machine".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// Checks that `bytes` (the file `file`) is a shared object for this host that exports
/// `entry` as a function; whether it also exports the kernel ABI's version
/// ([`super::ABI_SYMBOL`]).
pub(crate) fn check(bytes: &[u8], file: &str, entry: &str) -> Result<bool, KernelLoadError> {
    let file = file.to_owned();
    if !bytes.starts_with(b"\x7fELF") {
        return Err(KernelLoadError::NotElf { file });
    }
    let elf = object::File::parse(bytes).map_err(|e| KernelLoadError::BadElf {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    let machine = elf.architecture();
    if machine != HOST {
        return Err(KernelLoadError::OtherMachine {
            file,
            machine: machine_name(machine),
            host: machine_name(HOST),
        });
    }
    if elf.kind() != ObjectKind::Dynamic {
        return Err(KernelLoadError::NotShared {
            file,
            kind: kind_name(elf.kind()),
        });
    }
    let exported = elf
        .dynamic_symbols()
        .any(|s| s.is_definition() && s.kind() == SymbolKind::Text && s.name() == Ok(entry));
    if exported {
        let abi = elf.dynamic_symbols().any(|s| {
            s.is_definition()
                && s.kind() == SymbolKind::Data
                && s.size() == 4
                && s.name() == Ok(super::ABI_SYMBOL)
        });
        return Ok(abi);
    }
    // Why not: defined but kept to the file (static or hidden), or not there at all.
    let hidden = elf
        .symbols()
        .any(|s| s.is_definition() && s.kind() == SymbolKind::Text && s.name() == Ok(entry));
    let mut functions: Vec<String> = elf
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.kind() == SymbolKind::Text)
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .filter(|n| !n.starts_with('_'))
        .collect();
    functions.sort();
    functions.dedup();
    Err(KernelLoadError::NoEntry {
        file,
        entry: entry.to_owned(),
        hidden,
        functions,
    })
}

fn kind_name(k: ObjectKind) -> &'static str {
    match k {
        ObjectKind::Relocatable => "an object file (cc -c)",
        ObjectKind::Executable => "an executable",
        ObjectKind::Core => "a core dump",
        _ => "not a shared object",
    }
}
