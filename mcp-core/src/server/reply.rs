//! Responses on their way out, serialized straight to bytes.
//!
//! The dispatcher hands transports a [`Reply`] rather than a
//! `serde_json::Value`: the envelope (`jsonrpc`, `id`, `result`/`error`) is
//! written by `Serialize` impls, and a tool's [`CallToolResult`] goes from
//! its Rust type to the wire without an intermediate JSON tree. On
//! 2026-07-28 results the `resultType` and `_meta` server info are added
//! while writing, not inserted into a map first.

use std::sync::Arc;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};

use serde_json::value::RawValue;

use super::era::{meta_keys, CacheHint};
use crate::protocol::{CallToolResult, Content, ErrorObject, RequestId};

/// One JSON-RPC response.
#[derive(Debug)]
pub(crate) struct Reply {
    /// `None` is written as `null` (the request's id could not be read).
    pub(crate) id: Option<RequestId>,
    pub(crate) outcome: Outcome,
}

/// What a response carries.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A result already in its final JSON form.
    Json(Value),
    /// A tool's result; with `modern` set (the server's info, serialized
    /// once when the server was built) it is written as a 2026-07-28 result
    /// (`resultType`, `_meta` server info).
    Tool {
        result: CallToolResult,
        modern: Option<Arc<RawValue>>,
    },
    /// A listing whose array was serialized ahead of time: `{key: items}`,
    /// plus the cache hint and 2026-07-28 decoration when `modern` is set.
    Listing {
        key: &'static str,
        items: Arc<Box<RawValue>>,
        modern: Option<(Arc<RawValue>, CacheHint)>,
    },
    /// An error.
    Error(ErrorObject),
}

impl Reply {
    /// A success response.
    pub(crate) fn result(id: &RequestId, result: Value) -> Self {
        Self {
            id: Some(id.clone()),
            outcome: Outcome::Json(result),
        }
    }

    /// An error response (`id: None` for `null`).
    pub(crate) fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self {
            id,
            outcome: Outcome::Error(error),
        }
    }

    /// The JSON-RPC error code, for an error response.
    #[cfg(feature = "http")]
    pub(crate) fn error_code(&self) -> Option<i64> {
        match &self.outcome {
            Outcome::Error(e) => Some(e.code),
            _ => None,
        }
    }

    /// The response as a JSON value (for the `Value`-based public API).
    pub(crate) fn into_value(self) -> Value {
        serde_json::to_value(&self).unwrap_or(Value::Null)
    }

    /// Appends the response's JSON to `out`.
    pub(crate) fn write_to(&self, out: &mut Vec<u8>) {
        out.reserve(self.size_hint());
        // Serializing our own types into a Vec cannot fail, except for a
        // map with non-string keys, which `Value` cannot hold.
        let _ = serde_json::to_writer(&mut *out, self);
    }

    /// A lower bound of the written size from the bulk the reply carries
    /// (a tool's texts and base64 data, a prebuilt listing), so a large
    /// reply's buffer is sized once: growing it by doubling would hold up
    /// to twice the reply, plus the old buffer while it is copied.
    fn size_hint(&self) -> usize {
        // The envelope, the id, `resultType` and the like.
        const FRAME: usize = 256;
        let info = |modern: Option<&RawValue>| modern.map_or(0, |info| info.get().len());
        FRAME
            + match &self.outcome {
                Outcome::Tool { result, modern } => {
                    result.content.iter().map(Content::bulk_len).sum::<usize>()
                        + info(modern.as_deref())
                }
                Outcome::Listing { items, modern, .. } => {
                    items.get().len() + info(modern.as_ref().map(|(info, _)| &**info))
                }
                Outcome::Json(_) | Outcome::Error(_) => 0,
            }
    }
}

impl Serialize for Reply {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        match &self.outcome {
            Outcome::Json(result) => map.serialize_entry("result", result)?,
            Outcome::Tool {
                result,
                modern: None,
            } => map.serialize_entry("result", result)?,
            Outcome::Tool {
                result,
                modern: Some(info),
            } => map.serialize_entry("result", &ModernTool { result, info })?,
            Outcome::Listing { key, items, modern } => map.serialize_entry(
                "result",
                &Listing {
                    key,
                    items,
                    modern: modern.as_ref(),
                },
            )?,
            Outcome::Error(error) => map.serialize_entry("error", error)?,
        }
        map.end()
    }
}

/// A pre-serialized listing written as a result.
struct Listing<'a> {
    key: &'a str,
    items: &'a RawValue,
    modern: Option<&'a (Arc<RawValue>, CacheHint)>,
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

/// A tool result written as a 2026-07-28 result.
struct ModernTool<'a> {
    result: &'a CallToolResult,
    info: &'a RawValue,
}

impl Serialize for ModernTool<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let r = self.result;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("resultType", "complete")?;
        map.serialize_entry("content", &r.content)?;
        if let Some(structured) = &r.structured_content {
            map.serialize_entry("structuredContent", structured)?;
        }
        if let Some(is_error) = r.is_error {
            map.serialize_entry("isError", &is_error)?;
        }
        map.serialize_entry(
            "_meta",
            &MetaWithServerInfo {
                meta: r.meta.as_ref(),
                info: self.info,
            },
        )?;
        map.end()
    }
}

/// A result's `_meta` with the server's info added (replacing any the
/// handler set under the same key).
struct MetaWithServerInfo<'a> {
    meta: Option<&'a Map<String, Value>>,
    info: &'a RawValue,
}

impl Serialize for MetaWithServerInfo<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.meta.into_iter().flatten() {
            if key != meta_keys::SERVER_INFO {
                map.serialize_entry(key, value)?;
            }
        }
        map.serialize_entry(meta_keys::SERVER_INFO, self.info)?;
        map.end()
    }
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

    /// Appends the JSON to `out`.
    pub(crate) fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Self::One(reply) => reply.write_to(out),
            Self::Batch(replies) => {
                out.reserve(replies.iter().map(Reply::size_hint).sum());
                let _ = serde_json::to_writer(&mut *out, self);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelopes_match_the_value_builders() {
        let id = RequestId::Number(7);
        let ok = Reply::result(&id, json!({"x": 1}));
        assert_eq!(
            ok.into_value(),
            crate::protocol::ok(json!(7), json!({"x": 1}))
        );
        let err = Reply::error(None, ErrorObject::parse_error());
        assert_eq!(
            err.into_value(),
            crate::protocol::fail(Value::Null, &ErrorObject::parse_error())
        );
    }

    #[test]
    fn modern_tool_results_carry_result_type_and_merged_meta() {
        let mut result = CallToolResult::new(vec![Content::text("hi")]);
        let mut meta = Map::new();
        meta.insert("mine".into(), json!(1));
        meta.insert(meta_keys::SERVER_INFO.into(), json!("spoofed"));
        result.meta = Some(meta);
        let info: Arc<RawValue> =
            serde_json::value::to_raw_value(&json!({"name": "s", "version": "1"}))
                .map(Arc::from)
                .unwrap_or_else(|e| panic!("{e}"));
        let reply = Reply {
            id: Some(RequestId::String("a".into())),
            outcome: Outcome::Tool {
                result,
                modern: Some(info),
            },
        };
        let mut bytes = Vec::new();
        reply.write_to(&mut bytes);
        let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        assert_eq!(
            v,
            json!({"jsonrpc": "2.0", "id": "a", "result": {
                "resultType": "complete",
                "content": [{"type": "text", "text": "hi"}],
                "_meta": {"mine": 1, meta_keys::SERVER_INFO: {"name": "s", "version": "1"}}
            }})
        );
    }
}
