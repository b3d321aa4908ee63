//! Stage 8, encode: responses on their way out, serialized straight to bytes.
//!
//! The dispatcher hands transports a [`Reply`] rather than a
//! `serde_json::Value`. There is one encoder, `Serialize`: the bytes a
//! transport writes ([`Response::write_to`]) and the JSON value the
//! `Value`-based API returns come from the same impls (only the envelope's
//! fixed text is written as it is; a test holds its bytes equal to what
//! `Serialize` gives). A tool's
//! [`CallToolResult`] goes from its Rust type to the wire without an
//! intermediate JSON tree, through its one list of members
//! (`ToolResultWire`); on 2026-07-28 results the `resultType` and `_meta`
//! server info are added while writing, not inserted into a map first.

use std::sync::Arc;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};

use serde_json::value::RawValue;

use crate::protocol::meta::meta_keys;
use crate::protocol::CacheHint;
use crate::protocol::{CallToolResult, Content, ErrorObject, RequestId};

/// One JSON-RPC response.
#[derive(Debug)]
pub(crate) struct Reply {
    /// `None` is written as `null` (the request's id could not be read).
    pub(crate) id: Option<RequestId>,
    pub(crate) body: Body,
}

/// The server's info, serialized once when the server was built: alone,
/// and as the whole `_meta` of a 2026-07-28 result that has no other
/// (`{"io.modelcontextprotocol/serverInfo": info}`), written as it is.
#[derive(Debug)]
pub(crate) struct ServerInfoRaw {
    info: Box<RawValue>,
    meta: Box<RawValue>,
}

impl ServerInfoRaw {
    /// Serializes `info` (a `Value` always serializes; `null` keeps this total).
    pub(crate) fn new(info: &Value) -> Self {
        let raw = |v: &Value| {
            serde_json::value::to_raw_value(v).unwrap_or_else(|_| RawValue::NULL.to_owned())
        };
        let mut meta = Map::new();
        meta.insert(meta_keys::SERVER_INFO.into(), info.clone());
        Self {
            info: raw(info),
            meta: raw(&Value::Object(meta)),
        }
    }
}

/// What a response carries.
#[derive(Debug)]
pub(crate) enum Body {
    /// A result already in its final JSON form.
    Json(Value),
    /// A tool's result; with `modern` set (the server's info, serialized
    /// once when the server was built) it is written as a 2026-07-28 result
    /// (`resultType`, `_meta` server info).
    Tool {
        result: CallToolResult,
        modern: Option<Arc<ServerInfoRaw>>,
    },
    /// A listing whose array was serialized ahead of time: `{key: items}`,
    /// plus the cache hint and 2026-07-28 decoration when `modern` is set.
    Listing {
        key: &'static str,
        items: Arc<Box<RawValue>>,
        modern: Option<(Arc<ServerInfoRaw>, CacheHint)>,
    },
    /// An error.
    Error(ErrorObject),
}

impl Reply {
    /// A success response.
    pub(crate) fn result(id: &RequestId, result: Value) -> Self {
        Self {
            id: Some(id.clone()),
            body: Body::Json(result),
        }
    }

    /// An error response (`id: None` for `null`).
    pub(crate) fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self {
            id,
            body: Body::Error(error),
        }
    }

    /// The JSON-RPC error code, for an error response.
    pub(crate) fn error_code(&self) -> Option<i64> {
        match &self.body {
            Body::Error(e) => Some(e.code),
            _ => None,
        }
    }

    /// The response as a JSON value (for the `Value`-based public API).
    pub(crate) fn into_value(self) -> Value {
        serde_json::to_value(&self).unwrap_or(Value::Null)
    }

    /// Appends the response's JSON to `out`: exactly the bytes its
    /// [`Serialize`] gives (a test holds the two equal), with only the
    /// envelope's fixed text written as it is (serde would scan each of its
    /// keys for characters to escape, on every reply). What the envelope
    /// holds (`id`, `result`, `error`) is written by the same `Serialize`
    /// impls.
    pub(crate) fn write_to(&self, out: &mut Vec<u8>) {
        out.reserve(self.size_hint());
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        write_json(out, &self.id);
        match &self.body {
            Body::Error(error) => {
                out.extend_from_slice(br#","error":"#);
                write_json(out, error);
            }
            Body::Tool {
                result,
                modern: Some(info),
            } => {
                // A 2026-07-28 tool result opens with `resultType`, written
                // as it is; the rest of its object is what `Serialize`
                // writes without it, its opening `{` turned into the comma
                // after `resultType` (the object is never empty: `content`
                // is always there).
                out.extend_from_slice(br#","result":{"resultType":"complete""#);
                let open = out.len();
                let meta = MetaWithServerInfo {
                    meta: result.meta.as_ref(),
                    info,
                };
                write_json(out, &result.wire(None, Some(meta)));
                if let Some(brace) = out.get_mut(open) {
                    *brace = b',';
                }
            }
            body => {
                out.extend_from_slice(br#","result":"#);
                write_json(out, &ResultOf(body));
            }
        }
        out.push(b'}');
    }

    /// A lower bound of the written size from the bulk the reply carries
    /// (a tool's texts and base64 data, a prebuilt listing), so a large
    /// reply's buffer is sized once: growing it by doubling would hold up
    /// to twice the reply, plus the old buffer while it is copied.
    fn size_hint(&self) -> usize {
        // The envelope, the id, `resultType` and the like.
        const FRAME: usize = 256;
        let info = |modern: Option<&ServerInfoRaw>| modern.map_or(0, |info| info.meta.get().len());
        FRAME
            + match &self.body {
                Body::Tool { result, modern } => {
                    result.content.iter().map(Content::bulk_len).sum::<usize>()
                        + info(modern.as_deref())
                }
                Body::Listing { items, modern, .. } => {
                    items.get().len() + info(modern.as_ref().map(|(info, _)| &**info))
                }
                Body::Json(_) | Body::Error(_) => 0,
            }
    }
}

impl Serialize for Reply {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        match &self.body {
            Body::Error(error) => map.serialize_entry("error", error)?,
            body => map.serialize_entry("result", &ResultOf(body))?,
        }
        map.end()
    }
}

/// A success response's `result` (what every body but an error holds).
struct ResultOf<'a>(&'a Body);

impl Serialize for ResultOf<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Body::Json(result) => result.serialize(serializer),
            Body::Tool {
                result,
                modern: None,
            } => result.serialize(serializer),
            Body::Tool {
                result,
                modern: Some(info),
            } => result
                .wire(
                    Some("complete"),
                    Some(MetaWithServerInfo {
                        meta: result.meta.as_ref(),
                        info,
                    }),
                )
                .serialize(serializer),
            Body::Listing { key, items, modern } => Listing {
                key,
                items,
                modern: modern.as_ref(),
            }
            .serialize(serializer),
            // Not a result: a reply writes its error under `error`.
            Body::Error(error) => error.serialize(serializer),
        }
    }
}

/// A pre-serialized listing written as a result.
struct Listing<'a> {
    key: &'a str,
    items: &'a RawValue,
    modern: Option<&'a (Arc<ServerInfoRaw>, CacheHint)>,
}

impl Serialize for Listing<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(self.key, self.items)?;
        if let Some((info, cache)) = self.modern {
            map.serialize_entry("ttlMs", &cache.ttl_ms)?;
            map.serialize_entry("cacheScope", &cache.scope)?;
            map.serialize_entry("resultType", "complete")?;
            map.serialize_entry(
                "_meta",
                &MetaWithServerInfo {
                    meta: None,
                    info: info.as_ref(),
                },
            )?;
        }
        map.end()
    }
}

/// A result's `_meta` with the server's info added (replacing any the
/// handler set under the same key).
struct MetaWithServerInfo<'a> {
    meta: Option<&'a Map<String, Value>>,
    info: &'a ServerInfoRaw,
}

impl Serialize for MetaWithServerInfo<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.meta.is_none_or(Map::is_empty) {
            // The usual case, written as serialized once.
            return self.info.meta.serialize(serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.meta.into_iter().flatten() {
            if key != meta_keys::SERVER_INFO {
                map.serialize_entry(key, value)?;
            }
        }
        map.serialize_entry(meta_keys::SERVER_INFO, &*self.info.info)?;
        map.end()
    }
}

/// Serializes `value` onto `out`. Serializing the crate's own types into a
/// `Vec` cannot fail, except for a map with non-string keys, which `Value`
/// cannot hold.
fn write_json(out: &mut Vec<u8>, value: &impl Serialize) {
    let _ = serde_json::to_writer(out, value);
}

/// What one payload (a message or a batch) gets back.
#[derive(Debug)]
pub(crate) enum Replies {
    /// The response to a single message.
    One(Reply),
    /// The responses to a batch's requests, in order.
    Batch(Vec<Reply>),
}

impl Replies {
    /// As a JSON value (for the `Value`-based public API).
    pub(crate) fn into_value(self) -> Value {
        serde_json::to_value(&self).unwrap_or(Value::Null)
    }

    /// Appends the JSON to `out`: the bytes its [`Serialize`] gives.
    pub(crate) fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Self::One(reply) => reply.write_to(out),
            Self::Batch(replies) => {
                out.reserve(replies.iter().map(Reply::size_hint).sum());
                out.push(b'[');
                for (i, reply) in replies.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    reply.write_to(out);
                }
                out.push(b']');
            }
        }
    }
}

impl Serialize for Replies {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::One(reply) => reply.serialize(serializer),
            Self::Batch(replies) => replies.serialize(serializer),
        }
    }
}

/// The answer to one frame: a response, or the responses to a batch's
/// requests. Written straight to bytes with [`write_to`](Self::write_to).
#[derive(Debug)]
pub struct Response(pub(crate) Replies);

impl Response {
    /// An error response (`id: None` is written as `null`), for what a
    /// transport refuses before the pipeline sees it (an over-long line).
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Reply::error(id, error).into()
    }

    /// Appends the JSON to `out` (no trailing newline).
    pub fn write_to(&self, out: &mut Vec<u8>) {
        self.0.write_to(out);
    }

    /// The JSON as bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out);
        out
    }

    /// The JSON as a value.
    pub fn into_value(self) -> Value {
        self.0.into_value()
    }

    /// True for the answer to a batch.
    pub fn is_batch(&self) -> bool {
        matches!(self.0, Replies::Batch(_))
    }

    /// True for a single response whose id is `null` (the request's id
    /// could not be read).
    pub fn is_id_null(&self) -> bool {
        matches!(&self.0, Replies::One(reply) if reply.id.is_none())
    }

    /// The error code of a single error response.
    pub fn error_code(&self) -> Option<i64> {
        match &self.0 {
            Replies::One(reply) => reply.error_code(),
            Replies::Batch(_) => None,
        }
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl From<Reply> for Response {
    fn from(reply: Reply) -> Self {
        Self(Replies::One(reply))
    }
}

#[cfg(test)]
mod tests;
