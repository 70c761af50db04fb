//! Finds the paths a file names: every leaf of its `use` trees (`use crate::{a, b::{c, d}}`
//! is three paths), and every `crate::...` or `super::...` path written in code.

/// One path a file names, with the byte offset it was found at.
pub struct Named {
    /// The path's segments, `crate` or `super`s first.
    pub segments: Vec<String>,
    /// Where in the file the path (or its `use`) starts.
    pub at: usize,
}

/// Every path `code` names in `use` items and in code (`code` is blanked already).
pub fn named(code: &str) -> Vec<Named> {
    let mut found = Vec::new();
    let mut rest = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(at) = find_word(code, "use", from) {
        let end = code[at..].find(';').map_or(code.len(), |n| at + n);
        let tokens = tokens(&code[at + 3..end]);
        let mut pos = 0;
        for segments in tree(&tokens, &mut pos, &[]) {
            found.push(Named { segments, at });
        }
        rest[at..end].fill(b' ');
        from = end;
    }
    let rest = String::from_utf8(rest).expect("only ASCII was written");
    for head in ["crate", "super"] {
        let mut from = 0;
        while let Some(at) = find_word(&rest, head, from) {
            from = at + head.len();
            if !rest[from..].starts_with("::") || rest[..at].trim_end().ends_with("(in") {
                continue;
            }
            if head == "super" && rest[..at].ends_with("::") {
                continue; // the tail of a `super::super::` chain already taken
            }
            let len = rest[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len() - at);
            let segments = rest[at..at + len]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            found.push(Named { segments, at });
            from = at + len;
        }
    }
    found
}

/// The offset of the next `word` at or after `from` that stands alone (not part of an identifier).
fn find_word(code: &str, word: &str, mut from: usize) -> Option<usize> {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = code.as_bytes();
    while let Some(n) = code[from..].find(word) {
        let at = from + n;
        let before = at.checked_sub(1).map(|i| b[i]);
        let after = b.get(at + word.len()).copied();
        if !before.is_some_and(ident) && !after.is_some_and(ident) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The tokens of a use tree: identifiers, `::`, `{`, `}`, `,` and `*`.
fn tokens(tree: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = tree.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_alphanumeric() || c == '_' || c == '$' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !(d.is_alphanumeric() || d == '_') {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            out.push(tree[i..end].trim_start_matches('$').to_string());
        } else if c == ':' {
            chars.next();
            out.push("::".into());
        } else if !c.is_whitespace() {
            out.push(c.to_string());
        }
    }
    out
}

/// The leaf paths of the use tree at `tokens[*pos..]`, each prefixed by `prefix`.
fn tree(tokens: &[String], pos: &mut usize, prefix: &[String]) -> Vec<Vec<String>> {
    let mut path = prefix.to_vec();
    while *pos < tokens.len() {
        match tokens[*pos].as_str() {
            "{" => {
                *pos += 1;
                let mut leaves = Vec::new();
                while *pos < tokens.len() && tokens[*pos] != "}" {
                    leaves.extend(tree(tokens, pos, &path));
                    if tokens.get(*pos).is_some_and(|t| t == ",") {
                        *pos += 1;
                    }
                }
                *pos += 1;
                return leaves;
            }
            "," | "}" => break,
            "as" => *pos += 2, // the alias names nothing new
            "::" | "*" => *pos += 1,
            "self" if *pos > 0 => *pos += 1, // `a::{self}` is `a`
            seg => {
                path.push(seg.to_string());
                *pos += 1;
            }
        }
    }
    vec![path]
}
