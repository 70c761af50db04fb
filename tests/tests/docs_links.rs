//! The README is a front door (at most 300 lines) and every relative link of it and of
//! `docs/` resolves: the file exists and, for `#anchor` links into our Markdown, the heading
//! does. The index `docs/README.md` names every page.

use std::path::{Path, PathBuf};

use pto_tests::snippets::doc_files;

/// The README's budget: what this is, the two commands, ten minutes in Rust and in C, where
/// each part lives, and links; the rest belongs in `docs/`.
const README_MAX_LINES: usize = 300;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

/// The text outside fenced code blocks, one entry per line (a fenced line becomes empty, so
/// line numbers and paragraph breaks stay).
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fence: Option<&str> = None;
    text.lines()
        .map(|line| {
            let t = line.trim_start();
            match fence {
                Some(f) if t.starts_with(f) => {
                    fence = None;
                    ""
                }
                Some(_) => "",
                None if t.starts_with("```") || t.starts_with("~~~") => {
                    fence = Some(&t[..3]);
                    ""
                }
                None => line,
            }
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, punctuation (backticks, colons, parentheses,
/// dots, ...) dropped, spaces turned into hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings (a repeated heading gets `-1`, `-2`, ... as on
/// GitHub).
fn anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let mut anchor = base.clone();
        let mut n = 0;
        while out.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        out.push(anchor);
    }
    out
}

/// The targets of the inline links (`[text](target)`) and reference definitions
/// (`[label]: target`) of a Markdown text, each with its line number, outside code blocks and
/// code spans.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let lines = prose_lines(text);
    // Reference definitions.
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix('[')
            && let Some(end) = rest.find("]:")
            && !rest[..end].contains(']')
        {
            let target = rest[end + 2..].split_whitespace().next().unwrap_or("");
            out.push((i + 1, target.to_string()));
        }
    }
    // Inline links, paragraph by paragraph, so a code span may wrap but a stray backtick
    // cannot hide the rest of the file.
    let mut para_start = 0;
    while para_start < lines.len() {
        let mut end = para_start;
        while end < lines.len() && !lines[end].trim().is_empty() {
            end += 1;
        }
        let para: Vec<(usize, char)> = lines[para_start..end]
            .iter()
            .enumerate()
            .flat_map(|(k, l)| {
                l.chars()
                    .chain(std::iter::once('\n'))
                    .map(move |c| (para_start + k + 1, c))
            })
            .collect();
        let mut i = 0;
        let mut span: Option<usize> = None;
        while i < para.len() {
            let c = para[i].1;
            if c == '`' {
                let run = para[i..].iter().take_while(|(_, c)| *c == '`').count();
                match span {
                    None => span = Some(run),
                    Some(open) if open == run => span = None,
                    Some(_) => {}
                }
                i += run;
                continue;
            }
            if span.is_none() && c == ']' && para.get(i + 1).is_some_and(|p| p.1 == '(') {
                let line = para[i].0;
                let mut depth = 0;
                let mut target = String::new();
                for &(_, c) in &para[i + 2..] {
                    match c {
                        '(' => depth += 1,
                        ')' if depth == 0 => break,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    target.push(c);
                }
                // A title after the address (`(file.md "title")`) is not part of it.
                let target = target.split_whitespace().next().unwrap_or("");
                let target = target.trim_start_matches('<').trim_end_matches('>');
                out.push((line, target.to_string()));
            }
            i += 1;
        }
        // Unclosed spans end with their paragraph.
        para_start = end + 1;
    }
    out
}

fn is_relative(target: &str) -> bool {
    !(target.is_empty()
        || target.contains("://")
        || target.starts_with("mailto:")
        || target.starts_with('/'))
}

#[test]
fn the_readme_is_a_front_door_of_at_most_300_lines() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let n = readme.lines().count();
    assert!(
        n <= README_MAX_LINES,
        "README.md has {n} lines, more than {README_MAX_LINES}: move the detail into a page \
         of docs/ and link it"
    );
}

#[test]
fn every_relative_link_of_the_readme_and_the_docs_resolves() {
    let root = root();
    let files = doc_files(&root);
    assert!(files.len() > 5, "README.md and the docs: {files:?}");
    let mut broken = Vec::new();
    let mut count = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a page");
        let name = file.strip_prefix(&root).unwrap_or(file).display();
        for (line, target) in links(&text) {
            if !is_relative(&target) {
                continue;
            }
            count += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if path.is_empty() {
                file.clone()
            } else {
                file.parent().expect("a page sits in a folder").join(path)
            };
            if !dest.exists() {
                broken.push(format!(
                    "{name}:{line}: {target}: no file {}",
                    dest.display()
                ));
                continue;
            }
            if let Some(anchor) = anchor
                && dest.extension().is_some_and(|x| x == "md")
            {
                let dest_text = std::fs::read_to_string(&dest).expect("a linked page");
                let known = anchors(&dest_text);
                if !known.iter().any(|a| a == anchor) {
                    broken.push(format!(
                        "{name}:{line}: {target}: no heading with anchor #{anchor} (there: {})",
                        known.join(", ")
                    ));
                }
            }
        }
    }
    assert!(
        count >= 20,
        "only {count} relative links found: is the parser blind?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_docs_index_names_every_page() {
    let root = root();
    let index = std::fs::read_to_string(root.join("docs/README.md")).expect("docs/README.md");
    let linked: Vec<String> = links(&index).into_iter().map(|(_, t)| t).collect();
    for file in doc_files(&root).iter().skip(1) {
        let page = file.file_name().unwrap().to_string_lossy().into_owned();
        if page == "README.md" {
            continue;
        }
        assert!(
            linked.contains(&page),
            "docs/README.md does not list docs/{page}"
        );
    }
}

#[test]
fn links_and_anchors_are_read_as_github_reads_them() {
    let text = "# A `b`: c (d)\n\nSee [x](a.md#y) and `[not](a link)`, \
                [`code` in text](b.md),\nand [wrapped\ntext](c.md \"title\").\n\
                ```sh\n# not a heading\n[no](link.md)\n```\n[ref]: d.md\n## A `b`: c (d)\n";
    assert_eq!(
        links(text),
        [
            (10, "d.md".to_string()),
            (3, "a.md#y".to_string()),
            (3, "b.md".to_string()),
            (5, "c.md".to_string()),
        ]
    );
    assert_eq!(anchors(text), ["a-b-c-d", "a-b-c-d-1"]);
    assert!(is_relative("docs/x.md") && is_relative("#here"));
    assert!(!is_relative("https://example.com/x.md"));
}
