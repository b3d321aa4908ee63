//! Parsing a transport frame. A request in the usual shape (`jsonrpc`,
//! `id`, `method`, `params`) is taken apart while it is parsed, so the
//! dispatcher never builds (and drops) a JSON tree for its envelope; any
//! other frame (a batch, a notification, a response, something malformed)
//! is parsed as JSON and classified the long way, with the same result.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::dispatch::parse_payload;
use crate::protocol::RequestId;

/// One parsed frame.
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
    pub(crate) method: String,
    /// Empty when the request had no `params` or `null`.
    pub(crate) params: Map<String, Value>,
}

impl Incoming {
    /// Parses one frame (a stdio line, an HTTP body).
    ///
    /// # Errors
    /// The ready-to-send `-32700` reply, as [`parse_payload`] gives it.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, Value> {
        match parse_request(bytes) {
            Some(parts) => Ok(Self::Request(parts)),
            None => parse_payload(bytes).map(Self::Json),
        }
    }

    /// True for a request (an `id` and a `method`), well-formed or not.
    #[cfg(any(test, feature = "stdio", feature = "http"))]
    pub(crate) fn is_request(&self) -> bool {
        match self {
            Self::Request(_) => true,
            Self::Json(v) => is_request(v),
        }
    }

    /// The method, when it is a string.
    #[cfg(any(test, feature = "http"))]
    pub(crate) fn method(&self) -> Option<&str> {
        match self {
            Self::Request(parts) => Some(&parts.method),
            Self::Json(v) => v.get("method").and_then(Value::as_str),
        }
    }

    /// The `params` object, if there is one.
    #[cfg(any(test, feature = "http"))]
    pub(crate) fn params(&self) -> Option<&Map<String, Value>> {
        match self {
            Self::Request(parts) => Some(&parts.params),
            Self::Json(v) => v.get("params").and_then(Value::as_object),
        }
    }

    /// The `id` as sent, or `null` (for an error reply to it).
    #[cfg(any(test, feature = "http"))]
    pub(crate) fn id_value(&self) -> Value {
        match self {
            Self::Request(parts) => parts.id.to_value(),
            Self::Json(v) => v.get("id").cloned().unwrap_or(Value::Null),
        }
    }

    /// The `id`, when it is a valid request id.
    #[cfg(any(test, feature = "stdio"))]
    pub(crate) fn request_id(&self) -> Option<RequestId> {
        match self {
            Self::Request(parts) => Some(parts.id.clone()),
            Self::Json(v) => request_id_of(v),
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
    method: String,
    /// An object, `null` or absent (both `None`).
    #[serde(default)]
    params: Option<Map<String, Value>>,
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
    let envelope: Envelope<'_> = serde_json::from_slice(bytes).ok()?;
    if envelope.jsonrpc != "2.0" {
        return None;
    }
    Some(RequestParts {
        id: envelope.id.0,
        method: envelope.method,
        params: envelope.params.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parts(text: &str) -> RequestParts {
        match Incoming::parse(text.as_bytes()) {
            Ok(Incoming::Request(parts)) => parts,
            other => panic!("expected the short way for {text}: {other:?}"),
        }
    }

    fn long_way(text: &str) -> Value {
        match Incoming::parse(text.as_bytes()) {
            Ok(Incoming::Json(v)) => v,
            other => panic!("expected the long way for {text}: {other:?}"),
        }
    }

    #[test]
    fn usual_requests_are_taken_apart() {
        let p = parts(
            r#" {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"},"extra":1}"#,
        );
        assert_eq!(p.id, RequestId::Number(7));
        assert_eq!(p.method, "tools/call");
        assert_eq!(Value::Object(p.params), json!({"name": "x"}));

        let p = parts(r#"{"method":"ping","id":"a\"b","jsonrpc":"2.0"}"#);
        assert_eq!(p.id, RequestId::String("a\"b".into()));
        assert!(p.params.is_empty());

        let p = parts(r#"{"jsonrpc":"2.0","id":-3,"method":"ping","params":null}"#);
        assert_eq!(p.id, RequestId::Number(-3));
        assert!(p.params.is_empty());
    }

    #[test]
    fn everything_else_takes_the_long_way_unchanged() {
        for text in [
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            r#""just a string""#,
        ] {
            let expected: Value = serde_json::from_str(text).expect("valid JSON");
            assert_eq!(long_way(text), expected, "{text}");
        }
        assert!(Incoming::parse(b"{not json").is_err());
        assert!(Incoming::parse(b"").is_err());
    }

    #[test]
    fn accessors_agree_between_the_two_forms() {
        let text = r#"{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"x"}}"#;
        let short = Incoming::parse(text.as_bytes()).expect("parses");
        let long = Incoming::Json(serde_json::from_str(text).expect("valid JSON"));
        for m in [&short, &long] {
            assert!(m.is_request());
            assert_eq!(m.method(), Some("tools/call"));
            assert_eq!(m.params().and_then(|p| p.get("name")), Some(&json!("x")));
            assert_eq!(m.id_value(), json!("q"));
            assert_eq!(m.request_id(), Some(RequestId::String("q".into())));
        }
        assert!(matches!(short, Incoming::Request(_)));
    }
}
