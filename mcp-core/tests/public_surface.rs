//! The public surface stays chosen: few names at the crate root, typed
//! errors in public signatures, no foreign crate re-exported.
//!
//! Counted at the root: every name a `pub use` item of `src/lib.rs` brings
//! in (the macros included). Public modules (`pub mod`) are counted
//! separately and not limited here: each is one path, documented on its own.

use std::path::{Path, PathBuf};

/// The most names the crate root may re-export.
const MAX_ROOT_NAMES: usize = 32;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level items of `text` starting with `pub use`, each up to its
/// `;` (comments dropped).
fn root_pub_uses(text: &str) -> Vec<String> {
    let code: String = std::iter::once("")
        .chain(text.lines())
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut items = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("\npub use ") {
        let after = &rest[at + "\npub use ".len()..];
        let end = after.find(';').unwrap_or(after.len());
        items.push(after[..end].to_owned());
        rest = &after[end..];
    }
    items
}

/// The names one `use` tree brings in: the last segment of each leaf (or
/// its `as` alias).
fn names_of(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut names = Vec::new();
    let mut leaf = String::new();
    let mut flush = |leaf: &mut String| {
        let item = leaf.trim();
        if !item.is_empty() && !item.ends_with("::") {
            let name = match item.split_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => item.rsplit("::").next().unwrap_or(item),
            };
            if name != "self" {
                names.push(name.to_owned());
            }
        }
        leaf.clear();
    };
    for ch in tree.chars() {
        match ch {
            '{' => leaf.clear(),
            ',' | '}' => flush(&mut leaf),
            _ => leaf.push(ch),
        }
    }
    flush(&mut leaf);
    names
}

#[test]
fn the_root_re_exports_at_most_32_names() {
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).expect("read lib.rs");
    let mut names: Vec<String> = root_pub_uses(&lib)
        .iter()
        .flat_map(|tree| names_of(tree))
        .collect();
    names.sort();
    let count = names.len();
    let mut unique = names.clone();
    unique.dedup();
    assert_eq!(unique.len(), count, "a name re-exported twice: {names:?}");
    let modules = lib
        .lines()
        .filter(|l| l.trim_start().starts_with("pub mod "))
        .count();
    assert!(
        count <= MAX_ROOT_NAMES,
        "{count} names at the crate root (at most {MAX_ROOT_NAMES}; {modules} public modules \
         not counted): {names:?}"
    );
    assert!(names.iter().any(|n| n == "McpServer"), "{names:?}");
}

#[test]
fn the_name_counter_reads_trees() {
    assert_eq!(names_of("a::B"), ["B"]);
    assert_eq!(
        names_of("a::{B, c::{D, E as F}}, "),
        ["B", "D", "F"].map(String::from)
    );
    assert_eq!(
        root_pub_uses("// x\npub use a::{B,\n  C};\npub(crate) use d::E;\npub use f::G;\n"),
        ["a::{B,\n  C}", "f::G"]
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The signatures of `pub fn`s (not `pub(crate)`) in `text`: from `pub`
/// to the body's `{` or the `;`, whitespace removed.
fn pub_fn_signatures(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("pub ") {
        let rest = &text[at + 4..];
        let rest = rest.trim_start_matches("const ");
        let rest = rest.trim_start_matches("async ");
        let rest = rest.trim_start_matches("unsafe ");
        if !rest.starts_with("fn ") {
            continue;
        }
        let end = rest.find(['{', ';']).unwrap_or(rest.len());
        out.push(rest[..end].split_whitespace().collect());
    }
    out
}

/// The error type (last generic argument) of every `Result<…>` in `sig`.
fn result_errors(sig: &str) -> Vec<String> {
    let mut errors = Vec::new();
    for (at, _) in sig.match_indices("Result<") {
        let args = &sig[at + "Result<".len()..];
        let (mut depth, mut last_comma, mut end) = (0usize, None, None);
        for (i, ch) in args.char_indices() {
            match ch {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => last_comma = Some(i),
                _ => {}
            }
        }
        if let (Some(comma), Some(end)) = (last_comma, end) {
            errors.push(args[comma + 1..end].to_owned());
        }
    }
    errors
}

#[test]
fn the_result_reader_finds_the_error_type() {
    assert_eq!(
        result_errors("fnf(a:u8)->Result<Map<String,Value>,ErrorObject>"),
        ["ErrorObject"]
    );
    assert_eq!(result_errors("fnf()->Result<(),String>"), ["String"]);
    assert_eq!(
        pub_fn_signatures("pub(crate) fn a() {}\npub async fn b(x: u8)\n -> u8 { x }"),
        ["fnb(x:u8)->u8"]
    );
}

#[test]
fn no_public_function_returns_a_string_or_json_error() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read source");
        for sig in pub_fn_signatures(&text) {
            let Some((_, ret)) = sig.split_once("->") else {
                continue;
            };
            for error in result_errors(ret) {
                if matches!(error.as_str(), "String" | "Value" | "serde_json::Value") {
                    found.push(format!("{}: {sig}", file.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "public functions with a String or JSON error (use an error type):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_foreign_crate_is_re_exported() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read source");
        for foreign in ["jsonwebtoken", "redis", "rustls"] {
            let patterns = [
                format!("pub use {foreign}::"),
                format!("pub use ::{foreign}::"),
                format!("pub use {foreign};"),
            ];
            for pattern in patterns {
                assert!(
                    !text.contains(&pattern),
                    "{} re-exports `{foreign}`: wrap it in an own type",
                    file.display()
                );
            }
        }
    }
}
