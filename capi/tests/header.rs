//! Every C header the project ships that describes Rust types is what cbindgen makes of
//! those types now: `pto_runtime.h` (this crate and the core), `pto_aicpu.h` (the AICPU
//! SO's ABI, `device-sys/src/abi`) and `pto_aicore_layout.h` (the AICore handshake, slot
//! and descriptors, `device-sys/src/chip/layout.rs`). `PTO_BLESS=1` rewrites them.

use std::path::{Path, PathBuf};

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One generated header: its cbindgen configuration (`capi/cbindgen/<name>.toml`), the
/// builder that reads its Rust sources, and where it is committed.
struct Header {
    name: &'static str,
    sources: fn(cbindgen::Builder) -> cbindgen::Builder,
    committed: &'static str,
}

const HEADERS: [Header; 3] = [
    Header {
        name: "pto_runtime",
        sources: |b| b.with_crate(root().join("capi")),
        committed: "capi/include/pto_runtime.h",
    },
    Header {
        name: "pto_aicpu",
        sources: |b| b.with_src(root().join("device-sys/src/abi/mod.rs")),
        committed: "aicpu/include/pto_aicpu.h",
    },
    Header {
        name: "pto_aicore_layout",
        sources: |b| {
            b.with_src(root().join("device-sys/src/chip/layout.rs"))
                .with_src(root().join("runtime-core/src/protocol.rs"))
                .with_src(root().join("runtime-core/src/ffi/task.rs"))
        },
        committed: "device-sys/aicore/pto_aicore_layout.h",
    },
];

fn generate(h: &Header) -> String {
    let toml = root().join(format!("capi/cbindgen/{}.toml", h.name));
    let config = cbindgen::Config::from_file(&toml).expect("the cbindgen configuration reads");
    let bindings = (h.sources)(cbindgen::Builder::new().with_config(config))
        .generate()
        .unwrap_or_else(|e| panic!("cbindgen reads the sources of {}: {e}", h.name));
    let mut made = Vec::new();
    bindings.write(&mut made);
    String::from_utf8(made).unwrap()
}

#[test]
fn the_committed_headers_are_current() {
    let bless = std::env::var_os("PTO_BLESS").is_some();
    let mut stale = Vec::new();
    for h in &HEADERS {
        let made = generate(h);
        let path = root().join(h.committed);
        if bless {
            std::fs::write(&path, &made).unwrap();
        } else if std::fs::read_to_string(&path).unwrap_or_default() != made {
            stale.push(h.committed);
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated header(s) {stale:?}: regenerate with \
         `PTO_BLESS=1 cargo test -p pto-runtime-capi --test header` and commit them"
    );
}
