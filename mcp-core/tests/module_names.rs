//! Names that explain themselves: no two modules of `mcp-core/src` share a
//! name for different things. Two directories never share a name, and the
//! names that once meant two things at once (a public module and a private
//! one of the same name) name one module only.
//!
//! Other repeated file names (`tools.rs` in several layers, say) are the
//! same meaning per layer and are allowed.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Names that must name at most one module (a file stem or a directory).
const SINGLE_MEANING: [&str; 6] = [
    "catalog",
    "tasks",
    "outbound",
    "scope",
    "extensions",
    "entry",
];

/// Every directory (`dirs`) and every `.rs` file stem other than `mod`
/// (`stems`) under `dir`, each with the paths it names, relative to `root`.
fn walk(
    root: &Path,
    dir: &Path,
    dirs: &mut BTreeMap<String, Vec<PathBuf>>,
    stems: &mut BTreeMap<String, Vec<PathBuf>>,
) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let relative = path.strip_prefix(root).expect("under root").to_path_buf();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 file name")
            .to_owned();
        if path.is_dir() {
            dirs.entry(name).or_default().push(relative);
            walk(root, &path, dirs, stems);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "mod" {
                stems.entry(stem.to_owned()).or_default().push(relative);
            }
        }
    }
}

fn tree() -> (
    BTreeMap<String, Vec<PathBuf>>,
    BTreeMap<String, Vec<PathBuf>>,
) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (mut dirs, mut stems) = (BTreeMap::new(), BTreeMap::new());
    walk(&root, &root, &mut dirs, &mut stems);
    (dirs, stems)
}

fn listed(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

#[test]
fn no_two_directories_share_a_name() {
    let (dirs, _) = tree();
    assert!(
        dirs.contains_key("server"),
        "the walk found mcp-core/src/server"
    );
    let shared: Vec<String> = dirs
        .iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|(name, paths)| {
            format!(
                "`{name}/` names {} directories: {}",
                paths.len(),
                listed(paths)
            )
        })
        .collect();
    assert!(
        shared.is_empty(),
        "directories under mcp-core/src that share a name (rename one so \
         each name says what it holds):\n{}",
        shared.join("\n")
    );
}

#[test]
fn names_with_one_meaning_name_one_module() {
    let (dirs, stems) = tree();
    let mut found = Vec::new();
    let mut twice = Vec::new();
    for name in SINGLE_MEANING {
        let mut modules: Vec<PathBuf> = Vec::new();
        modules.extend(dirs.get(name).into_iter().flatten().cloned());
        modules.extend(stems.get(name).into_iter().flatten().cloned());
        if !modules.is_empty() {
            found.push(name);
        }
        if modules.len() > 1 {
            twice.push(format!(
                "`{name}` names {} modules: {}",
                modules.len(),
                listed(&modules)
            ));
        }
    }
    // The public modules of these names exist, so the check looks at the
    // real tree.
    for public in ["catalog", "tasks", "extensions", "outbound", "entry"] {
        assert!(
            found.contains(&public),
            "mcp-core/src has a `{public}` module"
        );
    }
    assert!(
        twice.is_empty(),
        "a name that must mean one thing names more than one module under \
         mcp-core/src (rename the private one after what it does):\n{}",
        twice.join("\n")
    );
}
