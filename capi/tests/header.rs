//! The committed C header matches what cbindgen makes of the crate now; `PTO_BLESS=1`
//! rewrites it.

#[test]
fn the_committed_header_is_current() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let config = cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).unwrap();
    let bindings = cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads the crate");
    let mut made = Vec::new();
    bindings.write(&mut made);
    let made = String::from_utf8(made).unwrap();
    let path = format!("{dir}/include/pto_runtime.h");
    if std::env::var_os("PTO_BLESS").is_some() {
        std::fs::write(&path, &made).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == made,
        "capi/include/pto_runtime.h is stale: regenerate it with \
         `PTO_BLESS=1 cargo test -p pto-runtime-capi --test header` and commit it"
    );
}
