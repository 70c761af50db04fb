//! Declarations built from C by this host's compiler, read back and resolved.

use std::path::PathBuf;
use std::process::Command;

use super::*;

/// The target the tests run on.
const TARGET: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-unknown-linux-gnu"
} else {
    "x86_64-unknown-linux-gnu"
};

/// The SO built from `src` (after `#include "pto_aicpu.h"`), its bytes.
fn so(name: &str, src: &str) -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::temp_dir().join(format!("pto-orch-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join(format!("{name}.c"));
    let out = dir.join(format!("lib{name}.so"));
    std::fs::write(
        &c,
        format!(
            "#include \"pto_aicpu.h\"\n{src}\nint32_t pto_orchestrate(const PtoOrchOps *o, \
             const uint64_t *a, uint32_t n) {{ (void)o; (void)a; (void)n; return 0; }}\n"
        ),
    )
    .unwrap();
    let compiler = cc::Build::new()
        .opt_level(0)
        .cargo_metadata(false)
        .target(TARGET)
        .host(TARGET)
        .get_compiler();
    let o = Command::new(compiler.path())
        .args(["-shared", "-fPIC", "-std=c11", "-Wall", "-Werror", "-I"])
        .arg(root.join("aicpu/include"))
        .arg("-I")
        .arg(root.join("capi/include"))
        .arg("-o")
        .arg(&out)
        .arg(&c)
        .output()
        .expect("the C compiler runs");
    assert!(
        o.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read(&out).unwrap()
}

fn none() -> Capacities {
    Capacities::default()
}

#[test]
fn an_so_that_declares_nothing_runs_with_the_defaults() {
    let caps = resolve(&none(), &so("plain", "")).unwrap();
    assert_eq!(
        caps.max_deps,
        Capacity {
            value: 16,
            from: Origin::Default
        }
    );
    assert_eq!(caps.max_tensors.value, 8);
    assert_eq!(caps.max_args.value, 16);
    assert_eq!(caps.task_window.value, 1024);
    assert_eq!(
        caps.heap_bytes,
        Capacity {
            value: 1 << 20,
            from: Origin::Default
        }
    );
}

#[test]
fn a_declaration_sets_what_it_names_and_a_given_value_overrides_it() {
    let bytes = so(
        "declares",
        "PTO_ORCHESTRATION_CONFIG(.max_deps = 48, .max_tensors = 12, .task_window = 4096, \
         .heap_bytes = 1 << 24);",
    );
    let decl = declaration(&bytes).unwrap().expect("declared");
    assert_eq!((decl.max_deps, decl.max_args), (48, 0));
    let caps = resolve(&none(), &bytes).unwrap();
    assert_eq!(
        caps.max_deps,
        Capacity {
            value: 48,
            from: Origin::Declared
        }
    );
    assert_eq!(
        caps.max_tensors,
        Capacity {
            value: 12,
            from: Origin::Declared
        }
    );
    assert_eq!(
        caps.max_args,
        Capacity {
            value: 16,
            from: Origin::Default
        },
        "0: the default"
    );
    assert_eq!(caps.task_window.value, 4096);
    assert_eq!(caps.heap_bytes.value, 1 << 24);
    let given = Capacities {
        max_deps: Some(20),
        task_window: Some(64),
        ..none()
    };
    let caps = resolve(&given, &bytes).unwrap();
    assert_eq!(
        caps.max_deps,
        Capacity {
            value: 20,
            from: Origin::Given
        }
    );
    assert_eq!(
        caps.task_window,
        Capacity {
            value: 64,
            from: Origin::Given
        }
    );
    assert_eq!(caps.max_tensors.from, Origin::Declared);
}

#[test]
fn a_field_out_of_range_is_refused_by_name_even_when_a_given_value_overrides_it() {
    let bytes = so("deps100", "PTO_ORCHESTRATION_CONFIG(.max_deps = 100);");
    let given = Capacities {
        max_deps: Some(16),
        ..none()
    };
    let e = resolve(&given, &bytes).unwrap_err();
    assert_eq!(
        e,
        OrchConfigError::Declared {
            knob: Knob::MaxDeps,
            value: 100
        }
    );
    assert_eq!(
        e.to_string(),
        "pto_orchestration_config.max_deps = 100: a task may have 1 to 64 dependencies"
    );
    for (decl, knob) in [
        (".task_window = 1000", Knob::TaskWindow),
        (".task_window = 2", Knob::TaskWindow),
        (".max_tensors = 33", Knob::MaxTensors),
        (".max_args = 40", Knob::MaxArgs),
        (".heap_bytes = 1ull << 40", Knob::HeapBytes),
    ] {
        let name = format!("bad{}", knob.name());
        let e = resolve(
            &none(),
            &so(&name, &format!("PTO_ORCHESTRATION_CONFIG({decl});")),
        );
        assert!(
            matches!(e, Err(OrchConfigError::Declared { knob: k, .. }) if k == knob),
            "{decl}: {e:?}"
        );
    }
}

#[test]
fn tensors_and_arguments_past_a_payload_slot_name_both_and_where_they_came_from() {
    let bytes = so(
        "wide",
        "PTO_ORCHESTRATION_CONFIG(.max_tensors = 32, .max_args = 32);",
    );
    let e = resolve(&none(), &bytes).unwrap_err().to_string();
    assert_eq!(
        e,
        "`max_tensors` (32, declared by the SO) + `max_args` (32, declared by the SO) = 64 \
         argument words exceed a payload slot's 48: lower `max_tensors` or `max_args`"
    );
    let given = Capacities {
        max_args: Some(16),
        ..none()
    };
    assert_eq!(resolve(&given, &bytes).unwrap().max_tensors.value, 32);
    // 16 tensors and 32 scalar arguments, as the C++ runtime's programs use, fit.
    let both = so(
        "sixteen_and_32",
        "PTO_ORCHESTRATION_CONFIG(.max_tensors = 16, .max_args = 32);",
    );
    let caps = resolve(&none(), &both).unwrap();
    assert_eq!((caps.max_tensors.value, caps.max_args.value), (16, 32));
}

#[test]
fn a_malformed_symbol_is_refused_and_says_how_to_declare_it() {
    let wrong_abi = so(
        "abi9",
        "__attribute__((used, visibility(\"default\"))) const PtoOrchConfig \
         pto_orchestration_config = {.abi = 9};",
    );
    assert_eq!(
        declaration(&wrong_abi),
        Err(OrchConfigError::Abi { abi: 9 })
    );
    let wrong_size = so(
        "size40",
        "__attribute__((used, visibility(\"default\"))) const uint64_t \
         pto_orchestration_config[5] = {1, 2, 3, 4, 5};",
    );
    assert_eq!(
        declaration(&wrong_size),
        Err(OrchConfigError::Size { size: 40 })
    );
    let zeroed = so(
        "zeroed",
        "__attribute__((used, visibility(\"default\"))) PtoOrchConfig pto_orchestration_config;",
    );
    assert_eq!(declaration(&zeroed), Err(OrchConfigError::NoBytes));
    let e = declaration(b"\x7fELF but not really").unwrap_err();
    assert!(
        e.to_string().contains("cannot load the orchestration SO"),
        "{e}"
    );
}

#[test]
fn the_cxx_runtimes_config_function_alone_is_refused_and_beside_a_declaration_is_not() {
    let function = "__attribute__((visibility(\"default\"))) uint64_t \
                    aicpu_orchestration_config(void) { return 0; }";
    let e = declaration(&so("function", function)).unwrap_err();
    assert_eq!(e, OrchConfigError::FunctionOnly);
    assert!(e.to_string().contains("PTO_ORCHESTRATION_CONFIG"), "{e}");
    let both = so(
        "both",
        &format!("{function}\nPTO_ORCHESTRATION_CONFIG(.max_args = 4);"),
    );
    assert_eq!(resolve(&none(), &both).unwrap().max_args.value, 4);
}

#[test]
fn a_given_value_out_of_range_is_refused_naming_the_knob() {
    let bytes = so("given", "");
    let e = resolve(
        &Capacities {
            task_window: Some(96),
            ..none()
        },
        &bytes,
    )
    .unwrap_err();
    assert_eq!(
        e,
        OrchConfigError::Given {
            knob: Knob::TaskWindow,
            value: 96
        }
    );
    assert!(
        e.to_string()
            .starts_with("`task_window` = 96: the task window is a power of two")
    );
}
