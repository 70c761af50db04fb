//! Drops the items a production build does not compile: those under `#[cfg(test)]`,
//! `#[cfg(loom)]` or anything else that is false with `test` and `loom` off. Features count as
//! on, and a predicate this file cannot decide (a target) keeps its item.

/// `code` (already blanked by `lex::code_only`) with every cfg-false item blanked, and whether
/// the file itself is cfg-false (`#![cfg(test)]` at its top).
pub fn production_only(code: &str) -> (String, bool) {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    let mut whole_file_off = false;
    while let Some(n) = code[from..].find("#") {
        let at = from + n;
        let inner = code[at + 1..].starts_with('!');
        let open = at + 1 + usize::from(inner);
        if !code[open..].trim_start().starts_with('[') {
            from = at + 1;
            continue;
        }
        let open = open + code[open..].find('[').expect("checked just above");
        let close = matching(code.as_bytes(), open);
        let attr = &code[open + 1..close - 1];
        from = close;
        if cfg_of(attr) != Some(false) {
            continue;
        }
        if inner {
            whole_file_off = true;
            continue;
        }
        let end = item_end(code.as_bytes(), close);
        for c in &mut out[at..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end;
    }
    (
        String::from_utf8(out).expect("only ASCII was written"),
        whole_file_off,
    )
}

/// The value of a `cfg(...)` attribute body with `test` and `loom` off; `None` for attributes
/// that are not `cfg`, and for predicates that depend on the target.
fn cfg_of(attr: &str) -> Option<bool> {
    let attr = attr.trim();
    let body = attr.strip_prefix("cfg")?.trim_start().strip_prefix('(')?;
    eval(body.strip_suffix(')')?.trim())
}

/// Three-valued evaluation of one cfg predicate.
fn eval(p: &str) -> Option<bool> {
    let p = p.trim();
    let call = |name: &str| {
        let rest = p.strip_prefix(name)?.trim_start().strip_prefix('(')?;
        Some(split_args(rest.strip_suffix(')')?))
    };
    if let Some(args) = call("not") {
        return eval(args.first()?).map(|v| !v);
    }
    if let Some(args) = call("all") {
        let vals: Vec<_> = args.iter().map(|a| eval(a)).collect();
        return if vals.contains(&Some(false)) {
            Some(false)
        } else if vals.iter().all(|v| *v == Some(true)) {
            Some(true)
        } else {
            None
        };
    }
    if let Some(args) = call("any") {
        let vals: Vec<_> = args.iter().map(|a| eval(a)).collect();
        return if vals.contains(&Some(true)) {
            Some(true)
        } else if vals.iter().all(|v| *v == Some(false)) {
            Some(false)
        } else {
            None
        };
    }
    match p {
        "test" | "loom" => Some(false),
        _ if p.starts_with("feature") => Some(true),
        _ => None,
    }
}

/// The comma-separated arguments of a cfg call, split at depth zero.
fn split_args(s: &str) -> Vec<&str> {
    let mut args = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                args.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(&s[start..]);
    args.into_iter().filter(|a| !a.trim().is_empty()).collect()
}

/// The offset past the bracket that closes the one opened at `open`.
pub fn matching(b: &[u8], open: usize) -> usize {
    let mut depth = 0i32;
    for (i, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    b.len()
}

/// The offset past the item that starts at `at` (after its attributes): at the first `;` at
/// depth zero, or at the end of its first `{...}` block, whichever comes first.
fn item_end(b: &[u8], mut at: usize) -> usize {
    while at < b.len() {
        match b[at] {
            b';' => return at + 1,
            b'{' => return matching(b, at),
            b'(' | b'[' => at = matching(b, at),
            _ => at += 1,
        }
    }
    b.len()
}
