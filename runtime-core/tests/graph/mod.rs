//! The import graph between the core's top-level modules (the direct children of `src/`),
//! read from the source: which files a production build compiles, which paths each names, and
//! which top-level module each path lands in.

mod items;
mod lex;
mod paths;
mod scc;

pub use scc::cycles;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// One arrow: a file of module `from` names a path in module `to`.
#[derive(Clone, Debug)]
pub struct Arrow {
    /// The top-level module whose file names the path.
    pub from: String,
    /// The top-level module the path lands in.
    pub to: String,
    /// The file, relative to `src/`, and the line of the `use` or the path.
    pub site: String,
}

/// A production file: its path relative to `src/`, its module path, and its code.
struct File {
    rel: String,
    module: Vec<String>,
    code: String,
}

/// The paths `src` names in production code, each as its segments joined by spaces.
pub fn named_in(src: &str) -> Vec<String> {
    let (code, _) = items::production_only(&lex::code_only(src));
    paths::named(&code)
        .into_iter()
        .map(|n| n.segments.join(" "))
        .collect()
}

/// Every arrow between distinct top-level modules of the crate rooted at `src`.
pub fn arrows(src: &Path) -> Vec<Arrow> {
    let files = production_files(src);
    let root = files
        .iter()
        .find(|f| f.module.is_empty())
        .expect("lib.rs is compiled");
    let tops: Vec<String> = files
        .iter()
        .filter(|f| f.module.len() == 1)
        .map(|f| f.module[0].clone())
        .collect();
    // Names `lib.rs` re-exports (`pub use a::b::Name`) land in the module they come from.
    let mut reexports = BTreeMap::new();
    for n in paths::named(&root.code) {
        if let (Some(first), Some(last)) = (n.segments.first(), n.segments.last())
            && tops.contains(first)
        {
            reexports.insert(last.clone(), first.clone());
        }
    }
    let mut out = Vec::new();
    for f in files.iter().filter(|f| !f.module.is_empty()) {
        for n in paths::named(&f.code) {
            let Some(to) = land(&f.module, &n.segments, &tops, &reexports) else {
                continue;
            };
            if to != f.module[0] {
                let line = f.code[..n.at].matches('\n').count() + 1;
                out.push(Arrow {
                    from: f.module[0].clone(),
                    to,
                    site: format!("{}:{line}", f.rel),
                });
            }
        }
    }
    out
}

/// The top-level module a path named from `module` lands in; `None` for paths outside the
/// crate (`core::`, dependencies) and for names it cannot place.
fn land(
    module: &[String],
    segments: &[String],
    tops: &[String],
    reexports: &BTreeMap<String, String>,
) -> Option<String> {
    let at_root = |seg: Option<&String>| {
        let seg = seg?;
        if tops.contains(seg) {
            Some(seg.clone())
        } else {
            reexports.get(seg).cloned()
        }
    };
    match segments.first()?.as_str() {
        "crate" => at_root(segments.get(1)),
        "super" => {
            let ups = segments.iter().take_while(|s| *s == "super").count();
            match module.len().checked_sub(ups) {
                Some(0) | None => at_root(segments.get(ups)),
                Some(_) => Some(module[0].clone()),
            }
        }
        // `self::`, a child module, or another crate: nothing outside this module.
        _ => None,
    }
}

/// The files a production build compiles, found by following `mod` items from `lib.rs`.
fn production_files(src: &Path) -> Vec<File> {
    let mut out = Vec::new();
    let mut todo = vec![(src.join("lib.rs"), Vec::<String>::new())];
    while let Some((path, module)) = todo.pop() {
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (code, off) = items::production_only(&lex::code_only(&text));
        if off {
            continue;
        }
        let dir = children_dir(&path, module.is_empty());
        for name in file_modules(&code) {
            let mut child = module.clone();
            child.push(name.clone());
            let flat = dir.join(format!("{name}.rs"));
            let nested = dir.join(&name).join("mod.rs");
            todo.push((if flat.exists() { flat } else { nested }, child));
        }
        let rel = path
            .strip_prefix(src)
            .expect("under src")
            .display()
            .to_string();
        out.push(File { rel, module, code });
    }
    out
}

/// Where the files of the modules declared in `path` live.
fn children_dir(path: &Path, root: bool) -> PathBuf {
    let dir = path.parent().expect("a file has a folder").to_path_buf();
    match path.file_stem().and_then(|s| s.to_str()) {
        Some("mod") => dir,
        Some(_) if root => dir,
        Some(stem) => dir.join(stem),
        None => dir,
    }
}

/// The names of the `mod name;` items in `code` (modules in files of their own).
fn file_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in code.split(';') {
        let words: Vec<&str> = piece.split_whitespace().collect();
        if let [.., "mod", name] = words.as_slice()
            && !name.contains(['{', '}', '(', ')'])
        {
            out.push((*name).to_string());
        }
    }
    out
}
