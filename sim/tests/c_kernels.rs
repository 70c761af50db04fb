//! C kernels from Rust: `CKernel` loads a shared object built for this host into a
//! `KernelTable`, and a run calls its entry through a payload slot laid out as on the chip;
//! a kernel built against another kernel ABI version, or without the header, is refused.

use std::path::{Path, PathBuf};

use pto_runtime_core::{Config, KernelId, TaskSpec, TensorArg, WorkerClass};
use pto_sim::{CKernel, KernelLoadError, KernelTable, SimOptions};

const TARGET: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-unknown-linux-gnu"
} else {
    "x86_64-unknown-linux-gnu"
};

/// `source` built as `name.so` (a shared object of this host) in a scratch folder.
fn build(name: &str, source: &str) -> PathBuf {
    build_as(name, source, false)
}

/// `source` built as C (or C++) into `name.so` in a scratch folder.
fn build_as(name: &str, source: &str, cpp: bool) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("c-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join(format!("{name}.{}", if cpp { "cpp" } else { "c" }));
    std::fs::write(&c, source).unwrap();
    let so = dir.join(format!("{name}.so"));
    let cc = cc::Build::new()
        .cpp(cpp)
        .target(TARGET)
        .host(TARGET)
        .opt_level(0)
        .cargo_metadata(false)
        .get_compiler();
    let out = cc
        .to_command()
        .args(["-shared", "-fPIC", "-I"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../device-sys/aicore"))
        .arg("-o")
        .arg(&so)
        .arg(&c)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    so
}

#[test]
fn a_c_kernel_runs_from_a_rust_workload() {
    let so = build(
        "negate",
        "#include \"pto_aicore.h\"\n\
         void negate(int64_t *args) {\n\
             const PtoKernelTensor *t = pto_kernel_tensor(args, 0);\n\
             int64_t *v = (int64_t *)(uintptr_t)t->base;\n\
             for (uint64_t i = 0; i < pto_tensor_elems(t); i++) v[i] = -v[i] + args[1];\n\
         }\n",
    );
    let kernel = CKernel::open(&so, Some("negate")).unwrap();
    assert_eq!(kernel.entry(), "negate");
    let kernels = KernelTable::new().with_c(KernelId(0), "negate", kernel);
    // C kernels dereference device addresses: the memory sits at host addresses.
    let opts = SimOptions {
        host_addresses: true,
        ..SimOptions::default()
    };
    let out = pto_sim::run(Config::tiny(), kernels, opts, |o| {
        let mem = o.platform().memory();
        let buf = mem.alloc_buffer(8 * 8, 64).unwrap();
        mem.write_u64s(buf.base, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let t = [TensorArg::whole_inout(buf, 8)];
        o.submit(
            &TaskSpec::new(KernelId(0), WorkerClass::Aiv)
                .tensors(&t)
                .args(&[100]),
        )
        .unwrap();
        buf
    })
    .unwrap();
    let mut v = [0u64; 8];
    out.memory.read_u64s(out.value.base, &mut v).unwrap();
    assert_eq!(v.map(|w| w as i64), [99, 98, 97, 96, 95, 94, 93, 92]);
}

#[test]
fn a_kernel_of_another_abi_version_or_without_the_header_is_refused() {
    let other = build(
        "other_abi",
        "#include <stdint.h>\n\
         const uint32_t pto_kernel_abi_version = 99;\n\
         void pto_kernel_entry(int64_t *args) { args[0] = 0; }\n",
    );
    match CKernel::open(&other, None) {
        Err(e @ KernelLoadError::AbiMismatch { found: 99, .. }) => {
            assert!(
                e.to_string().contains("rebuild it with this runtime's"),
                "{e}"
            )
        }
        other => panic!("{other:?}"),
    }
    let bare = build(
        "no_header",
        "#include <stdint.h>\nvoid pto_kernel_entry(int64_t *args) { args[0] = 0; }\n",
    );
    match CKernel::open(&bare, None) {
        Err(e @ KernelLoadError::NoAbiVersion { .. }) => {
            assert!(e.to_string().contains("include \"pto_aicore.h\""), "{e}")
        }
        other => panic!("{other:?}"),
    }
    match CKernel::open("/nonexistent/k.so", None) {
        Err(KernelLoadError::Read { file, .. }) => assert_eq!(file, "/nonexistent/k.so"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_c_kernel_reads_its_spmd_block_and_the_count() {
    let so = build(
        "blocks",
        "#include \"pto_aicore.h\"\n\
         void pto_kernel_entry(int64_t *args) {\n\
             const PtoKernelTensor *t = pto_kernel_tensor(args, 0);\n\
             int64_t *v = (int64_t *)(uintptr_t)t->base;\n\
             uint32_t b = pto_kernel_block_idx(args);\n\
             v[b] = 100 * (int64_t)pto_kernel_block_num(args) + b;\n\
         }\n",
    );
    let kernels =
        KernelTable::new().with_c(KernelId(0), "blocks", CKernel::open(&so, None).unwrap());
    let opts = SimOptions {
        host_addresses: true,
        ..SimOptions::default()
    };
    let cfg = Config {
        aiv_cores: 4,
        ..Config::tiny()
    };
    let out = pto_sim::run(cfg, kernels, opts, |o| {
        let mem = o.platform().memory();
        let buf = mem.alloc_buffer(8 * 4, 64).unwrap();
        let t = [TensorArg::whole_inout(buf, 8)];
        o.submit(
            &TaskSpec::new(KernelId(0), WorkerClass::Aiv)
                .tensors(&t)
                .blocks(4),
        )
        .unwrap();
        buf
    })
    .unwrap();
    let mut v = [0u64; 4];
    out.memory.read_u64s(out.value.base, &mut v).unwrap();
    assert_eq!(v, [400, 401, 402, 403], "each block wrote its own element");
}

#[test]
fn a_mix_task_runs_a_c_kernel_of_its_own_on_each_lane() {
    let so = build(
        "lanes",
        "#include \"pto_aicore.h\"\n\
         static void put(int64_t *args, int64_t marker) {\n\
             int64_t *v = (int64_t *)(uintptr_t)pto_kernel_tensor(args, 0)->base;\n\
             uint32_t at = pto_kernel_block_idx(args) * 3 + pto_kernel_lane(args);\n\
             v[at] = marker + at;\n\
         }\n\
         void cube(int64_t *args) { put(args, 100); }\n\
         void vec0(int64_t *args) { put(args, 200); }\n\
         void vec1(int64_t *args) { put(args, 300); }\n",
    );
    let open = |name| CKernel::open(&so, Some(name)).unwrap();
    let kernels = KernelTable::new()
        .with_c(KernelId(0), "cube", open("cube"))
        .with_c(KernelId(1), "vec0", open("vec0"))
        .with_c(KernelId(2), "vec1", open("vec1"));
    let opts = SimOptions {
        host_addresses: true,
        ..SimOptions::default()
    };
    let cfg = Config {
        aic_cores: 2,
        aiv_cores: 4,
        ..Config::tiny()
    };
    let out = pto_sim::run(cfg, kernels, opts, |o| {
        let mem = o.platform().memory();
        let buf = mem.alloc_buffer(8 * 6, 64).unwrap();
        let t = [TensorArg::whole_inout(buf, 8)];
        o.submit(
            &TaskSpec::mix(KernelId(0), [KernelId(1), KernelId(2)])
                .tensors(&t)
                .blocks(2),
        )
        .unwrap();
        buf
    })
    .unwrap();
    let mut v = [0u64; 6];
    out.memory.read_u64s(out.value.base, &mut v).unwrap();
    assert_eq!(
        v,
        [100, 201, 302, 103, 204, 305],
        "block b's lane l ran its lane's kernel"
    );
}

#[test]
fn a_c_kernel_gets_16_tensors_and_32_scalar_arguments() {
    let so = build(
        "wide",
        "#include \"pto_aicore.h\"\n\
         void pto_kernel_entry(int64_t *args) {\n\
             uint32_t nt = pto_kernel_ntensors(args);\n\
             int64_t s = 0;\n\
             for (uint32_t i = 0; i < 32; i++) s += args[nt + i];\n\
             for (uint32_t t = 0; t < nt; t++) ((int64_t *)(uintptr_t)args[t])[0] = s + t;\n\
         }\n",
    );
    let kernels = KernelTable::new().with_c(KernelId(0), "wide", CKernel::open(&so, None).unwrap());
    let opts = SimOptions {
        host_addresses: true,
        ..SimOptions::default()
    };
    let cfg = Config {
        max_tensors: 16,
        max_args: 32,
        ..Config::tiny()
    };
    let out = pto_sim::run(cfg, kernels, opts, |o| {
        let mem = o.platform().memory();
        let bufs: Vec<_> = (0..16).map(|_| mem.alloc_buffer(8, 64).unwrap()).collect();
        let t: Vec<TensorArg> = bufs.iter().map(|&b| TensorArg::whole_inout(b, 8)).collect();
        let scalars: Vec<u64> = (1..=32).collect();
        o.submit(
            &TaskSpec::new(KernelId(0), WorkerClass::Aiv)
                .tensors(&t)
                .args(&scalars),
        )
        .unwrap();
        bufs
    })
    .unwrap();
    for (t, b) in out.value.iter().enumerate() {
        let mut v = [0u64];
        out.memory.read_u64s(b.base, &mut v).unwrap();
        assert_eq!(
            v[0],
            528 + t as u64,
            "tensor {t}: 1 + .. + 32, plus its index"
        );
    }
}

#[test]
fn a_c_kernel_reads_its_tensors_dtype_buffer_offset_and_five_dimensions() {
    // The kernel copies tensor 0's descriptor fields into tensor 1 (u64s), then sums the
    // elements of tensor 0 (a 5-dimensional i32 box) walking all five dimensions.
    let so = build(
        "describe",
        "#include \"pto_aicore.h\"\n\
         void pto_kernel_entry(int64_t *args) {\n\
             const PtoKernelTensor *t = pto_kernel_tensor(args, 0);\n\
             uint64_t *o = (uint64_t *)(uintptr_t)pto_kernel_tensor(args, 1)->base;\n\
             o[0] = t->dtype; o[1] = t->buffer; o[2] = t->buffer_len; o[3] = t->start_offset;\n\
             o[4] = t->rank; o[5] = t->elem; o[6] = pto_tensor_elems(t);\n\
             for (int d = 0; d < 5; d++) { o[7 + d] = t->shape[d]; o[12 + d] = t->strides[d]; }\n\
             const int32_t *x = (const int32_t *)(uintptr_t)t->base;\n\
             int64_t sum = 0;\n\
             for (uint32_t a = 0; a < t->shape[0]; a++)\n\
             for (uint32_t b = 0; b < t->shape[1]; b++)\n\
             for (uint32_t c = 0; c < t->shape[2]; c++)\n\
             for (uint32_t d = 0; d < t->shape[3]; d++)\n\
             for (uint32_t e = 0; e < t->shape[4]; e++)\n\
                 sum += x[a * t->strides[0] + b * t->strides[1] + c * t->strides[2]\n\
                          + d * t->strides[3] + e * t->strides[4]];\n\
             o[17] = (uint64_t)sum;\n\
         }\n",
    );
    let kernels =
        KernelTable::new().with_c(KernelId(0), "describe", CKernel::open(&so, None).unwrap());
    let opts = SimOptions {
        host_addresses: true,
        ..SimOptions::default()
    };
    // A 2x2x2x2x2 box of a 3x3x3x3x3 i32 array (element k holds k), from (1, 1, 1, 1, 1).
    let strides = [81u64, 27, 9, 3, 1];
    let start = strides.iter().sum::<u64>();
    let out = pto_sim::run(Config::tiny(), kernels, opts, |o| {
        let mem = o.platform().memory();
        let x = mem.alloc_buffer(243 * 4, 64).unwrap();
        let words: Vec<u32> = (0..243).collect();
        mem.write_u32s(x.base, &words).unwrap();
        let report = mem.alloc_buffer(18 * 8, 64).unwrap();
        let tile = pto_runtime_core::Tile {
            base: x.base + 4 * start,
            elem: 4,
            rank: 5,
            shape: [2; 5],
            strides,
        };
        let t = [
            TensorArg::input(x, tile).typed(pto_runtime_core::Dtype::I32),
            TensorArg::whole_output(report, 8),
        ];
        o.submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv).tensors(&t))
            .unwrap();
        (x, report)
    })
    .unwrap();
    let (x, report) = out.value;
    let mut v = [0u64; 18];
    out.memory.read_u64s(report.base, &mut v).unwrap();
    let want_sum: u64 = (0..32u64)
        .map(|k| start + (0..5).map(|d| (k >> (4 - d) & 1) * strides[d]).sum::<u64>())
        .sum();
    assert_eq!(
        v[..7],
        [7, x.base, x.len, start, 5, 4, 32],
        "dtype i32, buffer, offset in elements, rank, element size, elements"
    );
    assert_eq!(v[7..12], [2; 5]);
    assert_eq!(v[12..17], strides);
    assert_eq!(v[17], want_sum);
}

#[test]
fn a_cpp_kernel_includes_the_header_and_carries_its_abi_version() {
    let so = build_as(
        "cpp_kernel",
        "#include \"pto_aicore.h\"\n\
         extern \"C\" void pto_kernel_entry(int64_t *args) {\n\
             const PtoKernelTensor *t = pto_kernel_tensor(args, 0);\n\
             auto *v = reinterpret_cast<int64_t *>(t->base);\n\
             v[0] = 7 + static_cast<int64_t>(pto_kernel_block_num(args));\n\
         }\n",
        true,
    );
    let kernels = KernelTable::new().with_c(KernelId(0), "cpp", CKernel::open(&so, None).unwrap());
    let opts = SimOptions {
        host_addresses: true,
        ..SimOptions::default()
    };
    let out = pto_sim::run(Config::tiny(), kernels, opts, |o| {
        let buf = o.platform().memory().alloc_buffer(8, 64).unwrap();
        let t = [TensorArg::whole_output(buf, 8)];
        o.submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv).tensors(&t))
            .unwrap();
        buf
    })
    .unwrap();
    let mut v = [0u64; 1];
    out.memory.read_u64s(out.value.base, &mut v).unwrap();
    assert_eq!(v, [8]);
}
