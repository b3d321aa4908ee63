//! Kept results: the whole of a cut result, held in the server's
//! [`StateStore`] for its caller to read back page by page through
//! `resources/read` of `mcp-result://<id>[?from=<byte offset>]`.
//!
//! # The key
//!
//! A kept result is stored under
//! `(principal: "\0mcp-result\0" + caller, kind: "\0mcp-result", id)`,
//! where `id` is 128 bits from the OS random source (`crate::random`).
//! Why it cannot alias user state ([`crate::state`]) nor another caller's
//! kept results:
//! - The store keys entries by the three parts as a tuple (in memory: a
//!   map per principal of `(kind, id)`; on Redis: a hash per principal
//!   digest, fields `len(kind):kind:id`), so no choice of one part can
//!   spill into another.
//! - User state uses the caller's principal as it is and a kind that is a
//!   `Stateful::KIND` constant of the server's own code, never client
//!   input. Our kind starts with a NUL byte, which no kind is written
//!   with, so even a client whose principal is crafted to equal
//!   `"\0mcp-result\0alice"` reaches none of alice's kept results through
//!   its state: its handles carry other kinds, and its own kept results
//!   live under `"\0mcp-result\0\0mcp-result\0alice"`.
//! - Reading back always builds the key from the reader's own principal,
//!   so another principal's read looks up an entry that does not exist
//!   and gets exactly the answer of an unknown URI.
//!
//! The prefixed principal is also what keeps the bound separate: the store
//! applies its byte cap per principal, so kept results count against
//! [`ResultLimit::KEPT_BYTES_PER_PRINCIPAL`] (with
//! [`ResultLimit::KEPT_IDLE_TTL`]) and never against the caller's own
//! state budget.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::cut::text_end;
use crate::handler::ResultLimit;
use crate::protocol::ErrorObject;
use crate::storage::{StateKey, StateLimits, StateLookup, StateStore, StateWrite};

/// The scheme of kept results' URIs.
pub(crate) const SCHEME: &str = "mcp-result://";

/// The kind of every kept result (see the module docs).
const KIND: &str = "\u{0}mcp-result";

/// Bytes of a page's reply around its text (URIs, members, metadata).
const PAGE_ENVELOPE: usize = 512;

fn key(principal: &str, id: &str) -> StateKey {
    StateKey {
        principal: format!("{KIND}\u{0}{principal}"),
        kind: KIND.to_owned(),
        id: id.to_owned(),
    }
}

fn limits() -> StateLimits {
    StateLimits {
        idle_ttl: ResultLimit::KEPT_IDLE_TTL,
        max_bytes_per_principal: ResultLimit::KEPT_BYTES_PER_PRINCIPAL,
    }
}

/// Where a result was kept, or why not.
pub(super) enum Kept {
    /// Readable at this URI.
    At(String),
    /// The caller's kept results would exceed their bound.
    Full,
    /// This result alone is over the bound: never sent to the store.
    TooLarge,
    /// The store failed (or there is none).
    Unavailable,
}

/// Keeps `json` (the whole result) for `principal`, to be read in pages
/// of at most `page` bytes.
pub(super) async fn keep(
    store: Option<&Arc<dyn StateStore>>,
    principal: &str,
    json: &str,
    page: usize,
) -> Kept {
    let Some(store) = store else {
        return Kept::Unavailable;
    };
    let id: String = crate::random::bytes::<16>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    // The page size first (the reading replica may have other limits).
    let mut value = format!("{page}\n").into_bytes();
    let key = key(principal, &id);
    if key.charged(value.len() + json.len()) > ResultLimit::KEPT_BYTES_PER_PRINCIPAL {
        return Kept::TooLarge;
    }
    value.extend_from_slice(json.as_bytes());
    match store.write(&key, None, value, &limits()).await {
        Ok(StateWrite::Written { .. }) => Kept::At(format!("{SCHEME}{id}")),
        Ok(StateWrite::OverCap { .. }) => Kept::Full,
        Ok(_) | Err(_) => Kept::Unavailable,
    }
}

/// True for the URI of a kept result.
#[inline]
pub(crate) fn is_kept(uri: &str) -> bool {
    uri.starts_with(SCHEME)
}

/// `resources/read` of a kept result's URI for `principal`: one page.
/// `unknown` is the answer to a URI nothing is behind, given unchanged for
/// an id that is not this caller's.
pub(crate) async fn read(
    store: Option<&Arc<dyn StateStore>>,
    principal: &str,
    uri: &str,
    unknown: impl Fn() -> ErrorObject,
) -> Result<Value, ErrorObject> {
    let rest = uri.get(SCHEME.len()..).unwrap_or_default();
    let (id, query) = match rest.split_once('?') {
        Some((id, query)) => (id, Some(query)),
        None => (rest, None),
    };
    let from = match query.map(|q| q.strip_prefix("from=").map(str::parse::<usize>)) {
        None => 0,
        Some(Some(Ok(from))) => from,
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "{uri}: the only query a kept result takes is `?from=<byte offset>`"
            ))
            .with_data(json!({ "uri": uri })))
        }
    };
    let well_formed = id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let Some(store) = store.filter(|_| well_formed) else {
        return Err(unknown());
    };
    let value = match store.load(&key(principal, id), &limits()).await {
        Ok(StateLookup::Found { value, .. }) => value,
        Ok(StateLookup::Missing) => return Err(unknown()),
        Ok(StateLookup::Expired) => {
            return Err(ErrorObject::invalid_params(format!(
                "{uri}: this kept result expired after {} s without a read; call the tool again",
                ResultLimit::KEPT_IDLE_TTL.as_secs()
            ))
            .with_data(json!({ "uri": uri })))
        }
        Err(e) => return Err(ErrorObject::internal(e.to_string())),
    };
    // Written by `keep` only: a page size, a newline, the JSON.
    let text = String::from_utf8(value).map_err(|_| unknown())?;
    let (page, whole) = text.split_once('\n').ok_or_else(&unknown)?;
    let page: usize = page.parse().map_err(|_| unknown())?;
    if from > whole.len() || (from == whole.len() && from > 0) || !whole.is_char_boundary(from) {
        return Err(ErrorObject::invalid_params(format!(
            "{uri}: {from} is not the offset of a page of this {}-byte result",
            whole.len()
        ))
        .with_data(json!({ "uri": uri })));
    }
    let room = page.saturating_sub(PAGE_ENVELOPE).max(PAGE_ENVELOPE);
    let rest = &whole[from..];
    let mut end = from + text_end(rest, room, false);
    if end == from {
        // At least one character, so that paging always moves on.
        end += rest.chars().next().map_or(0, char::len_utf8);
    }
    let mut meta = Map::new();
    meta.insert("offset".into(), json!(from));
    meta.insert("total".into(), json!(whole.len()));
    if end < whole.len() {
        meta.insert("nextUri".into(), json!(format!("{SCHEME}{id}?from={end}")));
    }
    Ok(json!({
        "contents": [{
            "uri": uri,
            "mimeType": "application/json",
            "text": &whole[from..end],
            "_meta": meta,
        }]
    }))
}

/// `resources/read` of a kept result's URI, routed on a server whose
/// method table refused it (one with no resources): the route, else `None`.
pub(crate) fn route(
    method: &str,
    params: &Map<String, Value>,
) -> Option<crate::server::route::Route> {
    let uri = params.get("uri").and_then(Value::as_str);
    (method == "resources/read" && uri.is_some_and(is_kept))
        .then_some(crate::server::route::Route::ResourcesRead)
}
