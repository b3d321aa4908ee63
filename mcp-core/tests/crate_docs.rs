//! The crate docs name every feature: each key of `[features]` in
//! `mcp-core/Cargo.toml` (other than `default`) must appear, in backticks,
//! in the crate-level doc comment of `src/lib.rs` and in the README's
//! feature list, so a new feature cannot ship undocumented.

use std::path::Path;

/// The keys of the `[features]` table, in order, without `default`.
fn features(manifest: &str) -> Vec<String> {
    let mut in_features = false;
    let mut names = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        if !in_features || line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((key, _)) = line.split_once('=') {
            let key = key.trim().trim_matches('"');
            if key != "default" {
                names.push(key.to_owned());
            }
        }
    }
    names
}

/// The crate-level doc comment: the leading `//!` lines of `lib.rs`.
fn crate_doc(lib_rs: &str) -> String {
    lib_rs
        .lines()
        .take_while(|l| l.starts_with("//!") || l.trim().is_empty())
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_features_table_parses() {
    let names = features("[package]\nname = \"x\"\n[features]\ndefault = [\"a\"]\n## doc\na = []\nb-c = [\"a\"]\n\n[dependencies]\nd = \"1\"\n");
    assert_eq!(names, ["a", "b-c"]);
    assert_eq!(
        crate_doc("//! one\n//! two\n\nuse x;\n//! not\n"),
        " one\n two"
    );
}

#[test]
fn every_feature_is_named_in_the_crate_docs_and_the_readme() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let names = features(&read(&root.join("Cargo.toml")));
    assert!(
        names.len() >= 3,
        "no features read from Cargo.toml: {names:?}"
    );
    let docs = crate_doc(&read(&root.join("src/lib.rs")));
    let readme = read(&root.join("../README.md"));
    let missing_docs: Vec<_> = names
        .iter()
        .filter(|n| !docs.contains(&format!("`{n}`")))
        .collect();
    assert!(
        missing_docs.is_empty(),
        "features not named in lib.rs's crate docs: {missing_docs:?}"
    );
    let missing_readme: Vec<_> = names
        .iter()
        .filter(|n| !readme.contains(&format!("`{n}`")))
        .collect();
    assert!(
        missing_readme.is_empty(),
        "features not named in README.md: {missing_readme:?}"
    );
}
