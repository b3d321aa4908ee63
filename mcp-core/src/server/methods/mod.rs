//! The methods a registered request is routed to, one file per family.
//! Each takes the request's [`RequestFacts`]
//! and its params and returns the answer or why it stopped.

pub(crate) mod features;
pub(crate) mod listen;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod search;
pub(crate) mod tools;

use serde_json::{Map, Value};

use super::registry::ToolRegistry;
use super::request_facts::RequestFacts;
use crate::context::{scopes_allowed, Extensions};
use crate::handler::tool::McpToolDef;
use crate::protocol::ErrorObject;

/// Refuses a pagination cursor: every list fits in one page.
pub(crate) fn check_cursor(params: &Map<String, Value>) -> Result<(), ErrorObject> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(ErrorObject::invalid_params(
            "Invalid cursor: this server lists everything in one page",
        )),
    }
}

/// `{key: value}`.
fn single(key: &str, value: Value) -> Value {
    let mut map = Map::with_capacity(1);
    map.insert(key.to_owned(), value);
    Value::Object(map)
}

/// A listing result `{key: items}` (one page: a cursor is refused), with
/// the listing's cache hint on 2026-07-28. The items are those `facts`'
/// caller may see (a listing the same for every caller is sent prebuilt
/// and never gets here), so the hint is always `private`: whether a
/// listing depends on the caller is read from the catalog version the
/// request uses, never fixed when the server was built.
fn listing(
    facts: &RequestFacts,
    params: &Map<String, Value>,
    (key, cache): (&str, crate::protocol::CacheHint),
    items: impl Iterator<Item = Value>,
) -> Result<Value, ErrorObject> {
    check_cursor(params)?;
    let mut result = single(key, Value::Array(items.collect()));
    if let (true, Value::Object(map)) = (facts.is_modern(), &mut result) {
        cache.per_caller().apply(map);
    }
    Ok(result)
}

fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> Value {
    // Our own protocol types always serialize; a failure would be a bug, so
    // degrade to null rather than panic.
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The tools of `catalog` that `facts`' caller may see: its scopes grant
/// theirs and their `visible` hooks accept it (what `tools/list` lists and
/// `search_tools` searches).
pub(crate) fn visible<'a>(
    catalog: &'a ToolRegistry,
    facts: &'a RequestFacts,
    ext: &'a Extensions,
) -> impl Iterator<Item = &'a McpToolDef> + 'a {
    catalog
        .tools
        .iter()
        .filter(move |t| scopes_allowed(ext, t.scopes()) && t.is_visible(&facts.ctx))
}
