//! The catalog lockfile: the server's public surface in a stable, sorted,
//! reviewable JSON file, and the one-line test that keeps the server
//! matching it.
//!
//! ```no_run
//! # async fn t(server: mcp_core::McpServer) {
//! mcp_core::catalog::lock::assert_lockfile(&server, "mcp.lock.json").await;
//! # }
//! ```
//!
//! On drift the test fails with every change, breaking ones first, each
//! with its path (see [`diff()`](super::diff())). Run it once with
//! `MCP_CATALOG=overwrite` to accept the change (the file is rewritten and
//! the test passes), as `TRYBUILD=overwrite` does for UI tests; review the
//! file's diff like any other. A missing lockfile fails the same way, so
//! CI never creates one silently.

use std::path::Path;

use serde_json::Value;

use super::diff::{diff, Change, Severity};
use super::{Catalog, CatalogError, DEFAULT_REVISIONS};
use crate::McpServer;

/// The `format` member of a lockfile this version writes and reads.
pub const FORMAT: &str = "mcp-core-catalog/1";

/// The environment variable that rewrites lockfiles: `overwrite`.
pub const OVERWRITE_VAR: &str = "MCP_CATALOG";

/// The lockfile's text for `catalog`: pretty JSON, keys sorted, one
/// trailing newline.
pub fn render(catalog: &Catalog) -> String {
    let mut text = serde_json::to_string_pretty(&catalog.to_json()).unwrap_or_default();
    text.push('\n');
    text
}

/// How a server compares with its lockfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Identical.
    Matches,
    /// No lockfile yet.
    Missing,
    /// The lockfile cannot be read as one.
    Unreadable(String),
    /// These changes, from the lockfile to the server.
    Drifted(Vec<Change>),
}

/// Compares `current` with the lockfile at `path`.
pub fn check(current: &Catalog, path: &Path) -> Verdict {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Verdict::Missing,
        Err(e) => return Verdict::Unreadable(e.to_string()),
    };
    let locked = match serde_json::from_str::<Value>(&text)
        .map_err(|e| e.to_string())
        .and_then(|v| Catalog::from_json(&v).map_err(|e| e.to_string()))
    {
        Ok(locked) => locked,
        Err(e) => return Verdict::Unreadable(e),
    };
    let changes = diff(&locked, current);
    if changes.is_empty() && locked == *current {
        Verdict::Matches
    } else {
        Verdict::Drifted(changes)
    }
}

/// A report of `changes`, breaking ones first, one per line.
pub fn report(changes: &[Change]) -> String {
    let mut out = String::new();
    let breaking = changes.iter().filter(|c| c.severity == Severity::Breaking);
    let compatible = changes
        .iter()
        .filter(|c| c.severity == Severity::Compatible);
    for change in breaking.chain(compatible) {
        out.push_str(&change.to_string());
        out.push('\n');
    }
    out
}

/// Asserts that `server`'s catalog (at [`DEFAULT_REVISIONS`]) matches the
/// lockfile at `path`; with `MCP_CATALOG=overwrite` it writes the file
/// instead. A relative `path` is taken from the current directory (under
/// `cargo test`, the package's root).
///
/// # Panics
/// On any drift (with every change classified), a missing or unreadable
/// lockfile, or a server whose listing fails — it is a test assertion.
///
/// # Cancel safety
/// Dropping the future only stops reading the catalog.
pub async fn assert_lockfile(server: &McpServer, path: impl AsRef<Path>) {
    let current = match Catalog::of_server(server, DEFAULT_REVISIONS).await {
        Ok(catalog) => catalog,
        Err(e) => panic!("reading the server's catalog failed: {e}"),
    };
    if let Err(message) = assert_catalog(&current, path.as_ref()) {
        panic!("{message}");
    }
}

/// The check behind [`assert_lockfile`], for a catalog read any way (the
/// `catalog` example reads one from another process): `Ok` when it
/// matches or was written, else the failure's text.
///
/// # Errors
/// The report of a drift, a missing or unreadable lockfile, or a write that failed.
pub fn assert_catalog(current: &Catalog, path: &Path) -> Result<(), CatalogError> {
    let overwrite = std::env::var(OVERWRITE_VAR).is_ok_and(|v| v == "overwrite");
    let verdict = check(current, path);
    if verdict == Verdict::Matches {
        return Ok(());
    }
    if overwrite {
        return std::fs::write(path, render(current))
            .map_err(|e| CatalogError::Write(format!("writing {}: {e}", path.display())));
    }
    let how = format!(
        "run with {OVERWRITE_VAR}=overwrite to write {} from the server",
        path.display()
    );
    Err(match verdict {
        Verdict::Matches => return Ok(()),
        Verdict::Missing => {
            CatalogError::Missing(format!("no catalog lockfile at {}: {how}", path.display()))
        }
        Verdict::Unreadable(e) => {
            CatalogError::Unreadable(format!("catalog lockfile {}: {e}; {how}", path.display()))
        }
        Verdict::Drifted(changes) => {
            let breaking = changes
                .iter()
                .filter(|c| c.severity == Severity::Breaking)
                .count();
            CatalogError::Drifted(format!(
                "the catalog drifted from {} ({} breaking, {} compatible change(s)); if intended, {how}:\n{}",
                path.display(),
                breaking,
                changes.len() - breaking,
                if changes.is_empty() {
                    "(only the order or form of the JSON differs)\n".to_owned()
                } else {
                    report(&changes)
                }
            ))
        }
    })
}
