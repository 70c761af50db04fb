//! The core's module graph has no circle: the arrows between the top-level modules of
//! `runtime-core/src` (read from `use` items and `crate::`/`super::` paths in production code;
//! tests and loom models are left out) form a DAG once the few arrows on [`ALLOWED`] are taken
//! away. Each allowed arrow says why it stays; an allowed arrow the code no longer draws fails
//! too, so the list cannot go stale. docs/core-modules.md tells the same story for readers.

mod graph;

use std::collections::BTreeSet;
use std::path::Path;

/// Arrows that may close a circle, as (from, to, why): a file of `from` names a path in `to`,
/// and `why` says why it has to stay. Empty: the graph has no circle. An arrow added here needs
/// its reason, here and in docs/core-modules.md.
const ALLOWED: &[(&str, &str, &str)] = &[];

#[test]
fn module_graph_has_no_circle_outside_the_allow_list() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let arrows = graph::arrows(&src);
    assert!(
        arrows.len() > 10,
        "the scan found too few arrows ({}): is it still reading the source?",
        arrows.len()
    );
    let allowed = |a: &graph::Arrow| ALLOWED.iter().any(|&(f, t, _)| a.from == f && a.to == t);
    let edges: BTreeSet<(String, String)> = arrows
        .iter()
        .filter(|a| !allowed(a))
        .map(|a| (a.from.clone(), a.to.clone()))
        .collect();
    let pairs: BTreeSet<(&str, &str)> = arrows
        .iter()
        .map(|a| (a.from.as_str(), a.to.as_str()))
        .collect();
    eprintln!(
        "{} arrows between {} module pairs:",
        arrows.len(),
        pairs.len()
    );
    for (from, to) in &pairs {
        eprintln!("  {from} -> {to}");
    }
    for (from, to, why) in ALLOWED {
        eprintln!("allowed: {from} -> {to}: {why}");
    }
    let mut report = String::new();
    for circle in graph::cycles(&edges) {
        report += &format!("\ncircle: {}\n", circle.join(", "));
        for (from, to) in edges
            .iter()
            .filter(|(f, t)| circle.contains(f) && circle.contains(t))
        {
            let sites: BTreeSet<&str> = arrows
                .iter()
                .filter(|a| a.from == *from && a.to == *to)
                .map(|a| a.site.as_str())
                .collect();
            let sites: Vec<&str> = sites.into_iter().collect();
            report += &format!("  {from} -> {to}: {}\n", sites.join(", "));
        }
    }
    for (f, t, _) in ALLOWED {
        if !arrows.iter().any(|a| a.from == *f && a.to == *t) {
            report +=
                &format!("\nallowed arrow {f} -> {t} is no longer drawn: take it off ALLOWED\n");
        }
    }
    assert!(
        report.is_empty(),
        "the core's module graph has a circle (see docs/core-modules.md):{report}"
    );
}

#[test]
fn the_scan_reads_groups_cfgs_and_paths_in_code() {
    let code = "
        pub(crate) use crate::{a::X, b::{self, c::Y}};
        #[cfg(test)]
        use crate::t::Z;
        #[cfg(not(loom))]
        use super::super::d::W;
        // use crate::comment::Nothing;
        fn f() -> u32 { let s = \"crate::string::Nothing\"; crate::e::g() }
        #[cfg(all(test, not(loom)))]
        mod tests { use crate::u::V; }
    ";
    let named = graph::named_in(code);
    assert_eq!(
        named,
        [
            "crate a X",
            "crate b",
            "crate b c Y",
            "super super d W",
            "crate e g"
        ]
    );
}

#[test]
fn a_circle_is_found_with_every_module_on_it_and_nothing_else() {
    let edges: BTreeSet<(String, String)> =
        [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("e", "d")]
            .into_iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect();
    assert_eq!(graph::cycles(&edges), [["a", "b", "c"]]);
    let dag: BTreeSet<_> = edges.into_iter().filter(|(f, _)| f != "c").collect();
    assert!(graph::cycles(&dag).is_empty(), "a DAG has no circle");
}
