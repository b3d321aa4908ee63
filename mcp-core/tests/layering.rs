//! The crate's layering, checked on its sources: the built-in transports
//! serve through the same door a custom transport uses, and the storage
//! boundary and its Redis stores depend on neither a transport nor the
//! server, and the server's stages take the parts they read, not the
//! whole server.

use std::path::{Path, PathBuf};

/// What a file under `src/transport/` may name from `crate::server`: the
/// public entry (what a custom transport uses too), and the few narrow
/// handles the built-in transports need beyond it.
const SERVER_DOOR: &[&str] = &[
    // The public entry, re-exported by the crate.
    "Admission",
    "Admit",
    "Call",
    "Frame",
    "McpServer",
    "PendingCall",
    "Permit",
    "Response",
    "Started",
    "Unpolled",
    // The rest of the public transport API (`mcp_core::transport`): a
    // frame that does not parse, and the defaults a transport names.
    "parse_payload",
    "ParseError",
    "DEFAULT_CLIENT_REQUEST_TIMEOUT",
    "DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION",
    // Narrow handles: the `-32000` busy error, the HTTP transport's
    // per-connection limit (taken before its fair share of the server's,
    // outside `accept`: a refusal there is an HTTP 503), a denied scope's
    // error, a saved session's subscriptions.
    "too_many_in_flight",
    "InflightLimit",
    "LimitGuard",
    "ScopeDenied",
    "SubscriptionsHandle",
];

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    assert!(!out.is_empty(), "no sources under {}", dir.display());
    out
}

/// A file's code without its comment lines (doc links may name any path).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The items `code` names from `crate::server` (`crate::server::X`, or
/// each first segment of `crate::server::{A, b::C}`).
fn server_items(code: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::server::") {
        rest = &rest[at + "crate::server::".len()..];
        let list = match rest.strip_prefix('{') {
            Some(inner) => &inner[..inner.find('}').unwrap_or(inner.len())],
            None => rest,
        };
        let names: Vec<&str> = if rest.starts_with('{') {
            list.split(',').collect()
        } else {
            vec![list]
        };
        for name in names {
            let name: String = name
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                items.push(name);
            }
        }
    }
    items
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn transports_reach_the_server_only_through_its_door() {
    let mut wrong = Vec::new();
    for path in sources(&src().join("transport")) {
        let code = code_of(&path);
        for item in server_items(&code) {
            if !SERVER_DOOR.contains(&item.as_str()) {
                wrong.push(format!("{}: crate::server::{item}", path.display()));
            }
        }
        for reach in ["server::Inner", "server.inner", ".inner.subscriptions"] {
            if code.contains(reach) {
                wrong.push(format!("{}: {reach}", path.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "past the server's door:\n{}",
        wrong.join("\n")
    );
}

/// What the storage boundary and its Redis implementation must not
/// name: a transport, or the server's internals. They know the records
/// they keep, nothing of who serves them.
const BEYOND_STORAGE: &[&str] = &["transport::", "crate::server", "super::server"];

#[test]
fn the_storage_boundary_and_redis_depend_on_no_transport_or_server() {
    let mut wrong = Vec::new();
    for dir in ["storage", "redis"] {
        for path in sources(&src().join(dir)) {
            let code = code_of(&path);
            for reach in BEYOND_STORAGE {
                if code.contains(reach) {
                    wrong.push(format!("{}: {reach}", path.display()));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "storage code naming a transport or the server:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_item_scanner_reads_single_and_grouped_imports() {
    let code = "use crate::server::{Admit, Frame as F,\n  decode::Incoming};\nlet x = crate::server::Inner::new();";
    assert_eq!(server_items(code), ["Admit", "Frame", "decode", "Inner"]);
}

/// The files that may implement methods on `McpServer`: the handle and its
/// public entry points, which hand the pipeline on. Every other stage is a
/// function or a method of the part of the server it reads (`Pipeline` for
/// the dispatcher; `Lifecycle`, `Registry`, `Features`, `Chains`,
/// `Extensions`, `Handlers` for the rest), so its signature says what it
/// touches.
const MCP_SERVER_IMPLS: &[&str] = &[
    // The handle: builder entry, public queries, crate-private delegations.
    "server/mod.rs",
    // The transport entry (`accept`) and the simple forms (`handle_frame` …).
    "server/entry.rs",
    "server/batch.rs",
    // The live catalog's public edits, and a mounted backend's edits
    // (the registry changes, then the listeners are told through the bus).
    "server/live.rs",
    // The tasks extension's public entry (`run_task`, for a task spawner).
    "server/task_engine/mod.rs",
];

/// The files under `src/server/` that may name the whole server — the
/// handle `McpServer` or what it holds, `Inner` (the pipeline beside the
/// storage) — in their code. Any other file there is a stage that reads
/// only the parts it is given.
const WHOLE_SERVER: &[&str] = &[
    "server/mod.rs",
    "server/builder.rs",
    "server/entry.rs",
    "server/batch.rs",
    "server/live.rs",
    "server/task_engine/mod.rs",
    // The bus's sink holds the server weakly, and a saved session's
    // subscriptions handle likewise.
    "server/fanout.rs",
    "server/features.rs",
];

/// The files under `src/server/` that may name `Pipeline`, every part at
/// once: the dispatcher (it routes to every method) and the files that
/// build it or hand it on. A method, the route table, a round trip or a
/// task takes the parts it reads, never the whole.
const WHOLE_PIPELINE: &[&str] = &["server/prepare.rs", "server/run.rs"];

/// `code` with its string literals emptied (an error message may name a
/// type without the code using it).
fn without_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    let mut last = ' ';
    while let Some(c) = chars.next() {
        if c == '\'' {
            // A char literal holding a quote, `'"'` or `'\"'`, is no string.
            let ahead: String = chars.clone().take(3).collect();
            let skip = if ahead.starts_with("\"'") {
                2
            } else if ahead.starts_with("\\\"'") {
                3
            } else {
                0
            };
            for _ in 0..skip {
                chars.next();
            }
            out.push(c);
        } else if c == 'r' && !(last.is_alphanumeric() || last == '_') && chars.peek() == Some(&'#')
        {
            // A raw string `r#"…"#` ends at `"#`.
            let ahead: String = chars.clone().take(2).collect();
            if ahead == "#\"" {
                chars.next();
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '"' && c == '#' {
                        break;
                    }
                    prev = c;
                }
                out.push_str("\"\"");
            } else {
                out.push(c);
            }
        } else if c == '"' {
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => break,
                    _ => {}
                }
            }
            out.push_str("\"\"");
        } else {
            out.push(c);
        }
        last = c;
    }
    out
}

/// The identifiers of `code` (outside comments and strings).
fn identifiers(code: &str) -> std::collections::BTreeSet<String> {
    without_strings(code)
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn stages_name_only_the_parts_they_read() {
    let root = src();
    let mut wrong = Vec::new();
    let mut dispatchers = Vec::new();
    for path in sources(&root.join("server")) {
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let names = identifiers(&code_of(&path));
        let whole_server = WHOLE_SERVER.contains(&rel.as_str());
        for name in ["McpServer", "Inner"] {
            if names.contains(name) && !whole_server {
                wrong.push(format!("{rel}: {name}"));
            }
        }
        if names.contains("Pipeline") {
            if WHOLE_PIPELINE.contains(&rel.as_str()) {
                dispatchers.push(rel.clone());
            } else if !whole_server {
                wrong.push(format!("{rel}: Pipeline"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a stage naming the whole server or pipeline (give it the parts it \
         reads: `&Registry`, `&Features`, `Invoke` …):\n{}",
        wrong.join("\n")
    );
    // The scanner sees the dispatcher's own use.
    assert!(
        dispatchers.iter().any(|f| f == "server/run.rs"),
        "scanner found {dispatchers:?}"
    );
}

#[test]
fn the_name_scanner_skips_strings() {
    let code =
        "let m = \"call McpServer::builder()\"; let q = '\"'; f(r#\"{\"Inner\": 1}\"#, Pipeline);";
    let names = identifiers(code);
    assert!(names.contains("Pipeline"), "{names:?}");
    assert!(names.contains("f"), "{names:?}");
    assert!(!names.contains("McpServer"), "{names:?}");
    assert!(!names.contains("Inner"), "{names:?}");
}

/// Whether `line` opens an `impl` block of `McpServer` itself (inherent or
/// of a trait), not of another type whose name starts the same.
fn implements_mcp_server(line: &str) -> bool {
    let line = line.trim_start();
    if !line.starts_with("impl") {
        return false;
    }
    let head = line.split('{').next().unwrap_or(line);
    let target = match head.find(" for ") {
        Some(at) => &head[at + " for ".len()..],
        None => head
            .trim_start_matches("impl")
            .trim_start_matches(|c| c != ' '),
    };
    target
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .find(|word| !word.is_empty())
        .is_some_and(|word| word == "McpServer" || word.ends_with("::McpServer"))
}

#[test]
fn mcp_server_is_implemented_only_in_its_entry_files() {
    let root = src();
    let mut found = Vec::new();
    for path in sources(&root) {
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        if code_of(&path).lines().any(implements_mcp_server) {
            found.push(rel);
        }
    }
    let stray: Vec<&String> = found
        .iter()
        .filter(|f| !MCP_SERVER_IMPLS.contains(&f.as_str()))
        .collect();
    assert!(
        stray.is_empty(),
        "`impl McpServer` outside the entry files {MCP_SERVER_IMPLS:?}: {stray:?} \
         (make the stage a function of the parts it reads)"
    );
    assert!(
        found.iter().any(|f| f == "server/mod.rs"),
        "scanner found {found:?}"
    );
}

#[test]
fn the_impl_scanner_tells_mcp_server_from_its_builder() {
    assert!(implements_mcp_server("impl McpServer {"));
    assert!(implements_mcp_server("    impl fmt::Debug for McpServer {"));
    assert!(implements_mcp_server("impl crate::McpServer {"));
    assert!(!implements_mcp_server("impl McpServerBuilder {"));
    assert!(!implements_mcp_server(
        "impl fmt::Debug for McpServerBuilder {"
    ));
    assert!(!implements_mcp_server("impl Lifecycle {"));
    assert!(!implements_mcp_server("let x = McpServer::builder();"));
}
