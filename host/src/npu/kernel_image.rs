//! A kernel's code as an AICore runs it, taken from the kernel's ELF file: the bytes to upload
//! and the offset of the entry in them, the entry found by its symbol (never assumed at
//! offset 0).
//!
//! Two kinds of file are taken:
//! - an object file (`ccec -c`, `cc -c`): the section holding the entry is uploaded alone, so
//!   it must need no relocation (a call to a global function of the file, a constant in
//!   `.rodata`: each is a relocation nothing would apply);
//! - a linked image (an executable or shared object, e.g. `ld -Ttext=0 -e NAME`): every
//!   loadable segment, laid out as linked, so code may reach its constants; it must need no
//!   dynamic relocation and no library (the AICore has neither loader nor libc).
//!
//! Anything else is refused with one line naming the file.

use object::elf::PT_LOAD;
use object::read::elf::{ElfFile64, ProgramHeader};
use object::{Object, ObjectKind, ObjectSection, ObjectSymbol, SymbolKind, SymbolSection};

use crate::program::KernelSpec;

/// The largest kernel image uploaded (a guard against a file that is not a kernel).
pub const MAX_IMAGE: u64 = 64 << 20;

/// What is uploaded for a kernel, and where its entry is in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelImage {
    /// The bytes to upload.
    pub code: Vec<u8>,
    /// The entry's offset in `code`.
    pub entry: u64,
}

/// The image of kernel `k`; why not, in one line naming its file.
pub fn kernel_image(k: &KernelSpec) -> Result<KernelImage, String> {
    let file = &k.file;
    let hint = "the NPU path takes the kernel's ELF file (an object file, or an image \
                linked with `-e` at its entry) and finds the entry by its symbol";
    if !k.bytes.starts_with(b"\x7fELF") {
        return Err(format!("kernel {file} is not an ELF file: {hint}"));
    }
    let elf = ElfFile64::<object::Endianness>::parse(k.bytes.as_slice())
        .map_err(|e| format!("kernel {file} is not a readable 64-bit ELF file ({e}): {hint}"))?;
    let entry = elf
        .symbols()
        .chain(elf.dynamic_symbols())
        .find(|s| s.is_definition() && s.kind() == SymbolKind::Text && s.name() == Ok(&k.entry))
        .ok_or_else(|| {
            format!(
                "kernel {file} defines no function `{}`: give the kernel's entry that name, or \
                 name it after a colon (`{file}:NAME`)",
                k.entry
            )
        })?;
    match elf.kind() {
        ObjectKind::Relocatable => from_object(&elf, file, &entry),
        ObjectKind::Executable | ObjectKind::Dynamic => from_image(&elf, file, &entry),
        _ => Err(format!(
            "kernel {file} is neither an object file nor a linked image: {hint}"
        )),
    }
}

/// The entry's section of an object file, alone.
fn from_object(
    elf: &ElfFile64<'_, object::Endianness>,
    file: &str,
    entry: &object::read::elf::ElfSymbol64<'_, '_, object::Endianness>,
) -> Result<KernelImage, String> {
    let SymbolSection::Section(index) = entry.section() else {
        return Err(format!("kernel {file}: its entry is not in a section"));
    };
    let section = elf
        .section_by_index(index)
        .map_err(|e| format!("kernel {file}: {e}"))?;
    let name = section.name().unwrap_or("?");
    if let Some((offset, _)) = section.relocations().next() {
        let count = section.relocations().count();
        // With -ffunction-sections each function is a section of its own, and every call
        // between them a relocation.
        let sections = if name.starts_with(".text.") {
            " (each function has a section of its own: build with -fno-function-sections)"
        } else {
            ""
        };
        return Err(format!(
            "kernel {file}: its code section {name} needs {count} relocation(s) (the first at \
             offset {offset:#x}){sections}, and an uploaded section is not linked: make the \
             functions it calls `static`, keep constant tables out of it, or link the object \
             into one image (`ld -Ttext=0 -e {}`)",
            entry.name().unwrap_or("?")
        ));
    }
    let code = section
        .data()
        .map_err(|e| format!("kernel {file}: section {name}: {e}"))?
        .to_vec();
    let at = entry.address() - section.address();
    if at >= code.len() as u64 {
        return Err(format!(
            "kernel {file}: its entry lies outside section {name}"
        ));
    }
    Ok(KernelImage { code, entry: at })
}

/// Every loadable segment of a linked image, laid out as linked.
fn from_image(
    elf: &ElfFile64<'_, object::Endianness>,
    file: &str,
    entry: &object::read::elf::ElfSymbol64<'_, '_, object::Endianness>,
) -> Result<KernelImage, String> {
    if elf.imports().is_ok_and(|i| !i.is_empty()) {
        return Err(format!(
            "kernel {file} calls into libraries (it imports symbols), and an AICore has none: \
             link it without them (`-nostdlib`, `-static`)"
        ));
    }
    if elf
        .dynamic_relocations()
        .is_some_and(|mut r| r.next().is_some())
    {
        return Err(format!(
            "kernel {file} needs dynamic relocations, and nothing applies them on an AICore: \
             link it at a fixed address (`-Ttext=0`, no `-shared`/`-pie`)"
        ));
    }
    let endian = elf.endian();
    let data = elf.data();
    let loads: Vec<_> = elf
        .elf_program_headers()
        .iter()
        .filter(|p| p.p_type(endian) == PT_LOAD && p.p_memsz(endian) > 0)
        .collect();
    let (Some(low), Some(high)) = (
        loads.iter().map(|p| p.p_vaddr(endian)).min(),
        loads
            .iter()
            .map(|p| p.p_vaddr(endian).saturating_add(p.p_memsz(endian)))
            .max(),
    ) else {
        return Err(format!("kernel {file} has no loadable segment"));
    };
    if high - low > MAX_IMAGE {
        return Err(format!(
            "kernel {file}'s image spans {} bytes, past the {MAX_IMAGE} a kernel may take",
            high - low
        ));
    }
    let mut code = vec![0u8; (high - low) as usize];
    for p in loads {
        let bytes = p
            .data(endian, data)
            .map_err(|()| format!("kernel {file}: a segment lies outside the file"))?;
        let at = (p.p_vaddr(endian) - low) as usize;
        code[at..at + bytes.len()].copy_from_slice(bytes);
    }
    let at = entry
        .address()
        .checked_sub(low)
        .filter(|&a| a < high - low)
        .ok_or_else(|| format!("kernel {file}: its entry lies outside its loadable segments"))?;
    Ok(KernelImage { code, entry: at })
}
