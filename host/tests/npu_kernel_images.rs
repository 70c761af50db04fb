//! Kernels for the NPU path: the entry is found by its symbol in the kernel's ELF file, never
//! assumed at offset 0. An object file's entry section is uploaded alone (refused when it
//! needs relocations); a linked image's loadable segments are uploaded as linked (so its code
//! reaches its constants). A DAG of linked images runs on the fake NPU with every result
//! checked.

mod npu_util;

use std::path::Path;

use npu_util::{check_sums, dag, kit, npu_kernel, npu_linked_kernel, options, scratch};
use pto_host::npu::{KernelSpec, NpuSession, kernel_image};

fn src(name: &str) -> std::path::PathBuf {
    npu_util::root().join("host/tests").join(name)
}

/// `source` (C) written to a file and built as an object file.
fn object(name: &str, source: &str) -> KernelSpec {
    let dir = scratch();
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    npu_kernel(&c, &dir.join(format!("{name}.o")))
}

#[test]
fn an_object_files_entry_is_found_by_its_symbol_past_a_static_helper() {
    let k = object(
        "helper_first",
        "#include \"pto_aicore.h\"\n\
         static int64_t twice(int64_t v) { return 2 * v; }\n\
         __attribute__((noinline)) static int64_t thrice(int64_t v) { return 3 * v; }\n\
         void pto_kernel_entry(int64_t *args) { args[0] = twice(args[0]) + thrice(args[1]); }\n",
    );
    let image = kernel_image(&k).unwrap();
    assert!(
        image.entry > 0,
        "the helper comes first: entry at {}",
        image.entry
    );
    assert!(image.entry < image.code.len() as u64);
}

#[test]
fn an_object_file_that_needs_relocations_is_refused_naming_it() {
    let k = npu_kernel(&src("user_c/table.c"), &scratch().join("table_for_npu.o"));
    let e = kernel_image(&k).unwrap_err();
    assert!(e.starts_with(&format!("kernel {}: ", k.file)), "{e}");
    assert!(e.contains("relocation"), "{e}");
    assert!(e.contains("ld -Ttext=0 -e pto_kernel_entry"), "{e}");
}

#[test]
fn a_file_without_the_entry_or_not_an_elf_is_refused() {
    let mut k = object(
        "plain",
        "#include \"pto_aicore.h\"\nvoid other(int64_t *a) { a[0] = 1; }\n",
    );
    let e = kernel_image(&k).unwrap_err();
    assert!(e.contains("defines no function `pto_kernel_entry`"), "{e}");
    k.entry = "other".into();
    assert_eq!(kernel_image(&k).unwrap().entry, 0);
    k.bytes = vec![0x90; 16];
    let e = kernel_image(&k).unwrap_err();
    assert!(e.contains("is not an ELF file"), "{e}");
}

#[test]
fn a_linked_image_keeps_its_constants_beside_its_code() {
    let dir = scratch();
    let c = dir.join("lookup.c");
    std::fs::write(
        &c,
        "#include \"pto_aicore.h\"\n\
         static const int64_t T[8] = {11, 12, 13, 14, 15, 16, 17, 18};\n\
         void pto_kernel_entry(int64_t *args) { args[0] = T[args[0] & 7]; }\n",
    )
    .unwrap();
    let k = npu_linked_kernel(&c, &dir.join("lookup.elf"));
    let image = kernel_image(&k).unwrap();
    let table: Vec<u8> = (11i64..=18).flat_map(|v| v.to_le_bytes()).collect();
    assert!(
        image.code.windows(64).any(|w| w == table.as_slice()),
        "the table is uploaded with the code"
    );
}

#[test]
fn a_dag_of_linked_kernel_images_runs_on_the_fake_npu() {
    let _ = kit();
    let dir = scratch();
    let mut spec = dag(0, 0);
    spec.kernels = ["fill", "add", "sum", "fail", "hang"]
        .iter()
        .map(|k| {
            npu_linked_kernel(
                &src(&format!("npu_c/{k}.c")),
                &dir.join(Path::new(k).with_extension("elf")),
            )
        })
        .collect();
    let mut session = NpuSession::open(options()).unwrap_or_else(|e| panic!("{e}"));
    let out = session.run(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.ok(), "{}", out.status);
    check_sums(&out.buffers[0]).unwrap();
}
