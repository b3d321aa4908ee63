//! The catalog as a public API: a lockfile that classifies every change,
//! schema profiles for the models and clients that consume it, and its
//! context cost in tokens.
//!
//! A server's tools, resources, templates and prompts are read by models
//! and MCP clients the way a library's items are read by its callers:
//! renaming an argument, making one required or dropping an enum value
//! breaks every prompt and cached listing built on it. This module makes
//! that a checked property, the way `Cargo.lock` and snapshot tests do.
//!
//! - [`Catalog`]: what a server lists, per protocol revision, normalized
//!   (sorted keys, no `_meta`), read in process ([`Catalog::of_server`]) or
//!   from any server through [`crate::client`] ([`Catalog::collect`]).
//! - [`lock`]: the lockfile (`mcp.lock.json`) and the one-line test
//!   ([`assert_lockfile`](lock::assert_lockfile)); `MCP_CATALOG=overwrite` rewrites it. On drift,
//!   [`diff()`] classifies every change as breaking or compatible, with its
//!   path.
//! - [`profile`]: checkers for OpenAI strict function calling, Gemini
//!   function declarations, Anthropic tool use and documented MCP client
//!   limits, each issue with its path and rule; and the strict-mode rewrite
//!   that serves an OpenAI-compatible schema without changing what the tool
//!   receives.
//! - [`tokens`]: the listing's cost in tokens, counted by a real tokenizer
//!   (`tiktoken-rs`, `o200k_base`), per entry and in total, with a budget check.
//!
//! ```no_run
//! # async fn t() {
//! use mcp_core::catalog;
//! let server = mcp_core::McpServer::builder().build().expect("builds");
//! // In a test: fails on drift, listing each change; MCP_CATALOG=overwrite updates it.
//! catalog::lock::assert_lockfile(&server, "mcp.lock.json").await;
//! # }
//! ```
//!
//! The `catalog` example is the command-line face: it prints the lock
//! diff, the profile report and the token counts of any server, a command
//! or a URL, written with `mcp-core` or not.

mod change;
mod collect;
mod diff;
mod error;
pub mod lock;
pub mod profile;
mod schema_diff;
pub mod tokens;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub use diff::{diff, Change, Severity};
pub use error::CatalogError;

/// The protocol revisions a catalog is read at by default: the newest of
/// each era (what a listing can differ by).
pub const DEFAULT_REVISIONS: &[&str] = &["2025-11-25", "2026-07-28"];

/// What a server lists at one protocol revision, keyed and normalized.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Surface {
    /// Tools by name.
    pub tools: BTreeMap<String, Value>,
    /// Resources by URI.
    pub resources: BTreeMap<String, Value>,
    /// Resource templates by URI template.
    pub resource_templates: BTreeMap<String, Value>,
    /// Prompts by name.
    pub prompts: BTreeMap<String, Value>,
}

/// A server's public surface, per protocol revision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    /// Surfaces by protocol revision.
    pub revisions: BTreeMap<String, Surface>,
}

impl Surface {
    /// A surface from raw listing items (as `tools/list` and friends return
    /// them). Items without their key (`name`, `uri`, `uriTemplate`) are
    /// skipped; `_meta` members are dropped and keys sorted at every level.
    pub fn from_listings(
        tools: &[Value],
        resources: &[Value],
        resource_templates: &[Value],
        prompts: &[Value],
    ) -> Self {
        Self {
            tools: keyed(tools, "name"),
            resources: keyed(resources, "uri"),
            resource_templates: keyed(resource_templates, "uriTemplate"),
            prompts: keyed(prompts, "name"),
        }
    }

    /// The surface as the lockfile holds it.
    pub fn to_json(&self) -> Value {
        let part = |m: &BTreeMap<String, Value>| {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        };
        let mut out = Map::new();
        out.insert("prompts".into(), part(&self.prompts));
        out.insert("resourceTemplates".into(), part(&self.resource_templates));
        out.insert("resources".into(), part(&self.resources));
        out.insert("tools".into(), part(&self.tools));
        Value::Object(out)
    }

    /// The surface of a lockfile's revision entry (missing parts are empty).
    pub fn from_json(value: &Value) -> Self {
        let part = |key: &str| -> BTreeMap<String, Value> {
            value
                .get(key)
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), normalize_item(v)))
                        .collect()
                })
                .unwrap_or_default()
        };
        Self {
            tools: part("tools"),
            resources: part("resources"),
            resource_templates: part("resourceTemplates"),
            prompts: part("prompts"),
        }
    }

    /// The tools as listing items (for [`profile`] and [`tokens`]).
    pub fn tool_list(&self) -> Vec<Value> {
        self.tools.values().cloned().collect()
    }
}

impl Catalog {
    /// The catalog as the lockfile holds it.
    pub fn to_json(&self) -> Value {
        let revisions: Map<String, Value> = self
            .revisions
            .iter()
            .map(|(rev, s)| (rev.clone(), s.to_json()))
            .collect();
        serde_json::json!({ "format": lock::FORMAT, "revisions": revisions })
    }

    /// The catalog of a lockfile's JSON.
    ///
    /// # Errors
    /// A document that is not a catalog lockfile of this format.
    pub fn from_json(value: &Value) -> Result<Self, CatalogError> {
        match value.get("format").and_then(Value::as_str) {
            Some(lock::FORMAT) => {}
            other => {
                return Err(CatalogError::Format(format!(
                    "not a catalog lockfile of format {:?} (found {other:?})",
                    lock::FORMAT
                )))
            }
        }
        let revisions = value
            .get("revisions")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                CatalogError::Format("a catalog lockfile needs a `revisions` object".to_owned())
            })?;
        Ok(Self {
            revisions: revisions
                .iter()
                .map(|(rev, s)| (rev.clone(), Surface::from_json(s)))
                .collect(),
        })
    }

    /// The newest revision's surface, if any.
    pub fn latest(&self) -> Option<&Surface> {
        self.revisions.values().next_back()
    }
}

/// The tools `server` lists at the newest of [`DEFAULT_REVISIONS`], for
/// the one-line test assertions (which panic when the listing fails).
async fn newest_tools(server: &crate::McpServer) -> Vec<Value> {
    match Catalog::of_server(server, DEFAULT_REVISIONS).await {
        Ok(catalog) => catalog.latest().map(Surface::tool_list).unwrap_or_default(),
        Err(e) => panic!("reading the server's catalog failed: {e}"),
    }
}

fn keyed(items: &[Value], key: &str) -> BTreeMap<String, Value> {
    items
        .iter()
        .filter_map(|item| {
            let name = item.get(key)?.as_str()?.to_owned();
            Some((name, normalize_item(item)))
        })
        .collect()
}

/// A listing item with its `_meta` dropped (server metadata, not API) and
/// keys sorted at every level.
fn normalize_item(item: &Value) -> Value {
    match item {
        Value::Object(map) => sorted(map.iter().filter(|(k, _)| *k != "_meta")),
        other => sort_keys(other),
    }
}

fn sort_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => sorted(map.iter()),
        Value::Array(items) => Value::Array(items.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

fn sorted<'a>(members: impl Iterator<Item = (&'a String, &'a Value)>) -> Value {
    let mut members: Vec<(&String, &Value)> = members.collect();
    members.sort_by(|a, b| a.0.cmp(b.0));
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.clone(), sort_keys(v)))
            .collect(),
    )
}
