//! Blanks out what is not code: comments (doc comments too), and the insides of string and
//! character literals. Every newline stays where it was, so byte offsets still give lines.

/// `src` with comments and literal contents replaced by spaces (newlines kept).
pub fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = block_comment_end(b, i);
                blank(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let end = string_end(b, i + 1);
                blank(&mut out, i + 1, end - 1);
                i = end;
            }
            b'r' if is_raw_string(b, i) => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let body = i + 2 + hashes;
                let close: String = core::iter::once('"')
                    .chain((0..hashes).map(|_| '#'))
                    .collect();
                let end = src[body..]
                    .find(&close)
                    .map_or(b.len(), |n| body + n + close.len());
                blank(&mut out, body, end.saturating_sub(close.len()));
                i = end;
            }
            b'\'' => {
                i = char_literal_end(b, i).map_or(i + 1, |end| {
                    blank(&mut out, i + 1, end - 1);
                    end
                })
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8: multi-byte characters sit in comments or literals, or are kept whole")
}

/// The offset just past the `*/` closing the (nestable) block comment opened at `i`.
fn block_comment_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// The offset just past the `"` closing a string whose body starts at `i`.
fn string_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// Whether `r` at `i` opens a raw string (`r"`, `r#"`), not an identifier ending or starting in r.
fn is_raw_string(b: &[u8], i: usize) -> bool {
    let starts_word = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let after = b[i + 1..].iter().find(|&&c| c != b'#');
    starts_word && after == Some(&b'"') && b.get(i + 1).is_some_and(|&c| c == b'"' || c == b'#')
}

/// The offset past a character literal opened at `i`, or `None` when `'` starts a lifetime.
fn char_literal_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i + 1) == Some(&b'\\') {
        let close = b[i + 2..].iter().position(|&c| c == b'\'')?;
        return Some(i + 2 + close + 1);
    }
    // One character (perhaps multi-byte) and then the closing quote.
    let width = match b.get(i + 1)? {
        c if *c < 0x80 => 1,
        c if *c >= 0xf0 => 4,
        c if *c >= 0xe0 => 3,
        _ => 2,
    };
    (b.get(i + 1 + width) == Some(&b'\'')).then_some(i + 2 + width)
}
