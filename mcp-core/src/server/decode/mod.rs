//! Stage 1, decode: parsing a transport frame. A request in the usual shape (`jsonrpc`,
//! `id`, `method`, `params`) is taken apart while it is parsed, so the
//! dispatcher never builds (and drops) a JSON tree for its envelope; any
//! other frame (a batch, a notification, a response, something malformed)
//! is parsed as JSON and classified the long way, with the same result.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

mod parse_error;

pub use parse_error::ParseError;

use crate::protocol::meta::{DecodedMeta, Key, MetaClaim};
use crate::protocol::{ErrorObject, RequestId};

/// Parses one transport frame (a stdio line, an HTTP body) as JSON.
///
/// # Errors
/// A [`ParseError`] (its reply: `-32700 Parse error`, id `null`) for
/// invalid JSON, invalid UTF-8 or nesting deeper than serde_json's limit.
pub fn parse_payload(bytes: &[u8]) -> Result<Value, ParseError> {
    serde_json::from_slice(bytes).map_err(|e| {
        // Valid JSON nested deeper than serde_json's limit is refused, but
        // its id is answered when the envelope's own `id` is readable.
        if is_depth_limit(&e, bytes) {
            if let Some(id) = top_level_id(bytes) {
                return ParseError::new(
                    id.to_value(),
                    ErrorObject::invalid_request(
                        "Invalid JSON-RPC request: nested deeper than 128 levels",
                    ),
                );
            }
        }
        ParseError::new(Value::Null, ErrorObject::parse_error())
    })
}

/// serde_json's nesting limit: the bracket that opens the 128th level
/// makes it stop, reporting that bracket's position.
const DEPTH_LIMIT: usize = 128;

/// Whether `error` is serde_json refusing `bytes` for nesting past its
/// limit. serde_json cannot read past the bracket that reaches the limit,
/// so a syntax error reported exactly there is that refusal (any other
/// mistake is reported before it); told by position, not by message text.
fn is_depth_limit(error: &serde_json::Error, bytes: &[u8]) -> bool {
    error.classify() == serde_json::error::Category::Syntax
        && depth_limit_position(bytes) == Some((error.line(), error.column()))
}

/// The line and column (1-based, in bytes, as serde_json counts them) of
/// the bracket that opens nesting level [`DEPTH_LIMIT`], outside strings.
fn depth_limit_position(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'[' => {
                depth += 1;
                if depth == DEPTH_LIMIT {
                    let before = &bytes[..i];
                    let line_start = before
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |n| n + 1);
                    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
                    return Some((line, i + 1 - line_start));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The `id` member of a top-level JSON object, read without building the
/// message (iteratively: any depth of nesting elsewhere is skipped).
fn top_level_id(bytes: &[u8]) -> Option<RequestId> {
    let mut depth = 0usize;
    let mut i = 0;
    // At depth 1, after a key: the key's text.
    let mut key: Option<(usize, usize)> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let end = i.min(bytes.len());
                // A string at depth 1 followed by `:` is a key.
                let after = bytes.get(end + 1..).unwrap_or_default().trim_ascii_start();
                if depth == 1 && after.first() == Some(&b':') {
                    key = Some((start, end));
                }
            }
            b':' if depth == 1 && key.is_some_and(|(s, e)| &bytes[s..e] == b"id") => {
                let value = bytes.get(i + 1..)?.trim_ascii_start();
                let len = if value.first() == Some(&b'"') {
                    let mut j = 1;
                    while j < value.len() && value[j] != b'"' {
                        j += if value[j] == b'\\' { 2 } else { 1 };
                    }
                    j + 1
                } else {
                    value
                        .iter()
                        .position(|b| matches!(b, b',' | b'}') || b.is_ascii_whitespace())
                        .unwrap_or(value.len())
                };
                let id: Value = serde_json::from_slice(value.get(..len)?).ok()?;
                return RequestId::from_value(&id);
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// One decoded frame: a message or a batch, ready for
/// [`McpServer::accept`](crate::McpServer::accept).
///
/// A request in the usual shape is taken apart while it is parsed, so the
/// pipeline never builds a JSON tree for its envelope.
#[derive(Debug)]
pub struct Frame(pub(crate) Incoming);

impl Frame {
    /// Decodes one frame (a stdio line, an HTTP body).
    ///
    /// # Errors
    /// A [`ParseError`] (its reply: `-32700`, id `null`) for invalid JSON.
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        match parse_request(bytes) {
            Some(parts) => Ok(Self(Incoming::Request(parts))),
            None => parse_payload(bytes).map(|message| Self(Incoming::Json(message))),
        }
    }

    /// A frame from a message (or batch) already in JSON form.
    pub fn from_value(message: Value) -> Self {
        Self(Incoming::Json(message))
    }

    /// True for a single request (an `id` and a `method`), well-formed or not.
    pub fn is_request(&self) -> bool {
        match &self.0 {
            Incoming::Request(_) => true,
            Incoming::Json(v) => is_request(v),
        }
    }

    /// True for a batch (a JSON array).
    pub fn is_batch(&self) -> bool {
        matches!(self.0, Incoming::Json(Value::Array(_)))
    }

    /// True when the frame holds at least one request (itself, or a batch
    /// entry): something that gets an answer.
    pub fn has_request(&self) -> bool {
        match &self.0 {
            Incoming::Json(Value::Array(items)) => items.iter().any(is_request),
            Incoming::Request(_) => true,
            Incoming::Json(v) => is_request(v),
        }
    }

    /// The method of a single message, when it is a string.
    pub fn method(&self) -> Option<&str> {
        match &self.0 {
            Incoming::Request(parts) => Some(&parts.method),
            Incoming::Json(v) => v.get("method").and_then(Value::as_str),
        }
    }

    /// The `params` object of a single message, if there is one.
    ///
    /// A request decoded from text holds one member apart from it, so
    /// that a `tools/call` builds no JSON for it: a string `name` (read
    /// it with [`param_str`](Self::param_str)).
    pub fn params(&self) -> Option<&Map<String, Value>> {
        match &self.0 {
            Incoming::Request(parts) => Some(&parts.params),
            Incoming::Json(v) => v.get("params").and_then(Value::as_object),
        }
    }

    /// The string member `key` of a single message's `params` (`name`
    /// included, wherever it is held).
    pub fn param_str(&self, key: &str) -> Option<&str> {
        if let (Incoming::Request(parts), "name") = (&self.0, key) {
            if let Some(name) = &parts.held.name {
                return Some(name);
            }
        }
        self.params()?.get(key)?.as_str()
    }

    /// `params.arguments` of a single message, if there is one.
    pub fn arguments(&self) -> Option<Cow<'_, Value>> {
        self.params()
            .and_then(|p| p.get("arguments"))
            .map(Cow::Borrowed)
    }

    /// The protocol version a single message claims in its `_meta` (a
    /// 2026-07-28 request): `Some` when it carries one, holding the version
    /// when it is a string.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn claimed_version(&self) -> Option<Option<&str>> {
        fn in_params(params: Option<&Map<String, Value>>) -> Option<Option<&str>> {
            let claim = params?
                .get("_meta")?
                .get(crate::protocol::meta::PROTOCOL_VERSION)?;
            Some(claim.as_str())
        }
        match &self.0 {
            Incoming::Request(parts) => match &parts.claim {
                Some(claim) => Some(claim.version.as_str()),
                None => in_params(Some(&parts.params)),
            },
            Incoming::Json(v) => in_params(v.get("params").and_then(Value::as_object)),
        }
    }

    /// The `id` of a single message as sent, or `null`.
    pub fn id_value(&self) -> Value {
        match &self.0 {
            Incoming::Request(parts) => parts.id.to_value(),
            Incoming::Json(v) => v.get("id").cloned().unwrap_or(Value::Null),
        }
    }

    /// The `id` of a single message, when it is a valid request id.
    pub fn request_id(&self) -> Option<RequestId> {
        match &self.0 {
            Incoming::Request(parts) => Some(parts.id.clone()),
            Incoming::Json(v) => request_id_of(v),
        }
    }

    /// The batch entries, for a batch.
    pub fn batch(&self) -> Option<&[Value]> {
        match &self.0 {
            Incoming::Json(Value::Array(items)) => Some(items),
            _ => None,
        }
    }
}

/// One parsed frame, as [`Frame`] holds it (its accessors read it).
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A well-formed request, already taken apart.
    Request(RequestParts),
    /// Anything else, as JSON.
    Json(Value),
}

/// A well-formed request's parts: what the dispatcher would have taken out
/// of its JSON object.
#[derive(Debug)]
pub(crate) struct RequestParts {
    pub(crate) id: RequestId,
    pub(crate) method: MethodName,
    /// Empty when the request had no `params` or `null`.
    pub(crate) params: Map<String, Value>,
    /// A modern claim read while decoding (its reserved `_meta` keys are
    /// then no longer in `params`); `None` when the era is still to be read
    /// from `params` (messages handed over as JSON).
    pub(crate) claim: Option<MetaClaim>,
    /// The members of `params` held apart from it (then not in `params`).
    pub(crate) held: Held,
}

/// A request's method name: the usual ones are borrowed from a table
/// instead of copied out of each message.
pub(crate) type MethodName = Cow<'static, str>;

/// The methods a request names most often (a linear scan over a few
/// lengths costs less than an allocation).
const USUAL_METHODS: [&str; 10] = [
    "tools/call",
    "ping",
    "tools/list",
    "resources/read",
    "prompts/get",
    "resources/list",
    "prompts/list",
    "completion/complete",
    "server/discover",
    "initialize",
];

/// `method` as a [`MethodName`]: one of [`USUAL_METHODS`], borrowed, or
/// its own copy.
pub(crate) fn method_name(method: Cow<'_, str>) -> MethodName {
    match USUAL_METHODS.iter().find(|usual| **usual == method) {
        Some(usual) => Cow::Borrowed(usual),
        None => Cow::Owned(method.into_owned()),
    }
}

/// The member of a request's `params` that decoding holds apart from its
/// JSON map, so that a `tools/call` builds no JSON for it. It is put back
/// ([`restore`](Self::restore)) wherever params are read as JSON.
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// `params.name`, when it is a string.
    pub(crate) name: Option<String>,
}

impl Held {
    /// Puts the held member back into `params`.
    pub(crate) fn restore(self, params: &mut Map<String, Value>) {
        if let Some(name) = self.name {
            params.insert("name".into(), Value::String(name));
        }
    }
}

/// True for a JSON-RPC request (an `id` and a `method`), well-formed or not.
pub(crate) fn is_request(message: &Value) -> bool {
    message
        .as_object()
        .is_some_and(|o| o.contains_key("id") && o.contains_key("method"))
}

/// The message's `id`, when it is a valid request id.
pub(crate) fn request_id_of(message: &Value) -> Option<RequestId> {
    message.get("id").and_then(RequestId::from_value)
}

/// The envelope of a well-formed request. Anything this refuses (a missing
/// or mistyped member, a repeated key, `params` that is not an object) is
/// left to the long way, which answers it as before.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: WireId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    /// An object, `null` or absent (both `None`).
    #[serde(default)]
    params: Option<WireParams>,
}

/// `params` on the short way: its members, with `_meta` taken apart
/// ([`DecodedMeta::from_raw`]): a modern request's reserved keys never
/// become a JSON tree.
struct WireParams {
    members: Map<String, Value>,
    claim: Option<MetaClaim>,
    held: Held,
}

impl<'de> Deserialize<'de> for WireParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ParamsVisitor;
        impl<'de> Visitor<'de> for ParamsVisitor {
            type Value = WireParams;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a params object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<WireParams, A::Error> {
                let mut params = WireParams {
                    members: Map::new(),
                    claim: None,
                    held: Held::default(),
                };
                // Whether `members` holds a `_meta` or a `name` (only a
                // repeated key can meet one there, so the usual request
                // never searches the map for it).
                let (mut meta_member, mut name_member) = (false, false);
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    if key.0 == "_meta" {
                        let raw: &'de RawValue = map.next_value()?;
                        let meta = DecodedMeta::from_raw(raw).map_err(de::Error::custom)?;
                        // A modern request's `_meta` keeps only the members
                        // beyond the reserved ones (`progressToken`, …).
                        params.claim = meta.claim;
                        if params.claim.is_none() || !meta.rest.is_empty() {
                            params
                                .members
                                .insert("_meta".into(), Value::Object(meta.rest));
                            meta_member = true;
                        } else if std::mem::take(&mut meta_member) {
                            params.members.remove("_meta");
                        }
                    } else if key.0 == "name" {
                        // The last `name` wins, as in a JSON object.
                        if std::mem::take(&mut name_member) {
                            params.members.remove("name");
                        }
                        params.held.name = None;
                        match map.next_value()? {
                            Value::String(name) => params.held.name = Some(name),
                            other => {
                                params.members.insert("name".into(), other);
                                name_member = true;
                            }
                        }
                    } else {
                        let value = map.next_value()?;
                        params.members.insert(key.0.into_owned(), value);
                    }
                }
                Ok(params)
            }
        }
        deserializer.deserialize_map(ParamsVisitor)
    }
}

/// A request id as JSON-RPC allows it here: a string or an integer.
struct WireId(RequestId);

impl<'de> Deserialize<'de> for WireId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = WireId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<WireId, E> {
                Ok(WireId(RequestId::Number(n)))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<WireId, E> {
                i64::try_from(n)
                    .map(|n| WireId(RequestId::Number(n)))
                    .map_err(|_| E::custom("id out of range"))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<WireId, E> {
                Ok(WireId(RequestId::String(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<WireId, E> {
                Ok(WireId(RequestId::String(s)))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// The request in `bytes`, when it is a well-formed one.
fn parse_request(bytes: &[u8]) -> Option<RequestParts> {
    // A batch or garbage: straight to the long way.
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        return None;
    }
    // Checked as UTF-8 once, whole: parsing from text then skips the check
    // serde_json makes of every string and raw value read from bytes (the
    // 2026-07-28 `_meta` alone is a few hundred bytes). Invalid UTF-8 takes
    // the long way, which reports it.
    let text = std::str::from_utf8(bytes).ok()?;
    let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
    if envelope.jsonrpc != "2.0" {
        return None;
    }
    let (params, claim, held) = match envelope.params {
        Some(p) => (p.members, p.claim, p.held),
        None => (Map::new(), None, Held::default()),
    };
    Some(RequestParts {
        id: envelope.id.0,
        method: method_name(envelope.method),
        params,
        claim,
        held,
    })
}

#[cfg(test)]
mod tests;
