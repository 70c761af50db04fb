//! Checks on the built libpto_aicpu.so (release, the target the tests run for): it exports
//! exactly `linker/pto_aicpu.exports`, carries a GNU build-id (CANN's dispatcher names the
//! uploaded file by it), needs nothing but libc, and asks for no glibc symbol version newer
//! than the baseline: GLIBC_2.17, the first aarch64 glibc, which every device OS CANN
//! supports has.

// Only the builder of the harness's loader is used here.
/// The SO these tests load: the shipped one, no features.
const SO_FEATURES: &[&str] = &[];

#[allow(dead_code)]
mod harness {
    pub mod so;
}

use object::elf;
use object::read::elf::{Dyn, ElfFile64};
use object::{Endianness, Object, ObjectSymbol};

/// The newest glibc symbol version the SO may ask for: (major, minor).
const GLIBC_BASELINE: (u32, u32) = (2, 17);

fn so_bytes() -> Vec<u8> {
    std::fs::read(harness::so::path()).expect("reading the built SO")
}

/// `GLIBC_2.17` as (2, 17); `None` for other version names.
fn glibc_version(name: &str) -> Option<(u32, u32)> {
    let v = name.strip_prefix("GLIBC_")?;
    let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next().flatten().unwrap_or(0)))
}

#[test]
fn exports_exactly_the_listed_entry_points() {
    let data = so_bytes();
    let file = ElfFile64::<Endianness>::parse(&*data).unwrap();
    let mut got: Vec<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .map(|s| s.name().unwrap().to_string())
        .collect();
    got.sort();
    let list = include_str!("../../linker/pto_aicpu.exports");
    let mut want: Vec<String> = list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect();
    want.sort();
    assert_eq!(got, want, "the SO's exported symbols");
}

#[test]
fn has_a_build_id() {
    let data = so_bytes();
    let file = ElfFile64::<Endianness>::parse(&*data).unwrap();
    let id = file.build_id().unwrap().expect("a GNU build-id note");
    assert!(id.len() >= 16, "a build-id of {} bytes", id.len());
}

#[test]
fn needs_libc_only_and_no_glibc_newer_than_the_baseline() {
    let data = so_bytes();
    let file = ElfFile64::<Endianness>::parse(&*data).unwrap();
    let endian = file.endian();
    let sections = file.elf_section_table();
    let (dynamic, link) = sections.dynamic(endian, &*data).unwrap().expect("dynamic");
    let strings = sections.strings(endian, &*data, link).unwrap();
    let needed: Vec<String> = dynamic
        .iter()
        .filter(|d| d.tag32(endian) == Some(elf::DT_NEEDED))
        .map(|d| String::from_utf8_lossy(d.string(endian, strings).unwrap()).into_owned())
        .collect();
    assert_eq!(needed, ["libc.so.6"], "NEEDED");

    let (mut needs, link) = sections
        .gnu_verneed(endian, &*data)
        .unwrap()
        .expect("versioned imports");
    let strings = sections.strings(endian, &*data, link).unwrap();
    let mut versions = Vec::new();
    while let Some((_, mut aux)) = needs.next().unwrap() {
        while let Some(a) = aux.next().unwrap() {
            versions.push(String::from_utf8_lossy(a.name(endian, strings).unwrap()).into_owned());
        }
    }
    assert!(!versions.is_empty());
    for v in &versions {
        let n = glibc_version(v).unwrap_or_else(|| panic!("unexpected version {v}"));
        assert!(
            n <= GLIBC_BASELINE,
            "{v} is newer than the baseline GLIBC_{}.{}",
            GLIBC_BASELINE.0,
            GLIBC_BASELINE.1
        );
    }
}

#[test]
fn the_version_parser_reads_glibc_names() {
    assert_eq!(glibc_version("GLIBC_2.17"), Some((2, 17)));
    assert_eq!(glibc_version("GLIBC_2.2.5"), Some((2, 2)));
    assert_eq!(glibc_version("GLIBC_2.34"), Some((2, 34)));
    assert!(glibc_version("GLIBC_2.34") > Some(GLIBC_BASELINE));
    assert_eq!(glibc_version("GCC_3.0"), None);
}
