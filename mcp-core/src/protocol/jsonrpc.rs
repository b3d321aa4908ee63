//! JSON-RPC 2.0 framing: ids, error objects, error codes and response builders.
//!
//! Messages travel as [`serde_json::Value`]; this module classifies them and
//! builds replies without copying request payloads.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON-RPC error code. The codes of JSON-RPC 2.0 and MCP are constants
/// on this type; any other `i64` is an application's own code.
///
/// [`ErrorObject::code`] stays a plain `i64` (what the wire carries); an
/// `ErrorCode` compares equal to it and converts into it.
///
/// ```
/// use mcp_core::protocol::{ErrorCode, ErrorObject};
/// let e = ErrorObject::invalid_params("bad");
/// assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
/// assert_eq!(ErrorCode::INVALID_PARAMS.code(), -32602);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// The message was not valid JSON (`-32700`).
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON was not a valid JSON-RPC request (`-32600`).
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// The method does not exist or is not offered by this server (`-32601`).
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// The parameters were missing or of the wrong shape (`-32602`).
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// A handler failed unexpectedly, for example by panicking (`-32603`).
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// Too many requests are in flight; retry later (`-32000`, this
    /// framework's code for a request refused over a concurrency limit).
    pub const SERVER_BUSY: Self = Self(-32000);
    /// The caller lacks an OAuth scope the tool, resource or prompt needs
    /// (`-32003`, this framework's code; its `data.scopes` names them). Over
    /// HTTP it comes with status 403 and an `insufficient_scope` challenge.
    pub const INSUFFICIENT_SCOPE: Self = Self(-32003);
    /// A resource could not be found, as coded by the 2024-11-05 … 2025-11-25 revisions (`-32002`).
    pub const RESOURCE_NOT_FOUND: Self = Self(-32002);
    /// An HTTP header is missing or disagrees with the body (2026-07-28, `-32020`).
    pub const HEADER_MISMATCH: Self = Self(-32020);
    /// The request needs a client capability it did not declare (2026-07-28, `-32021`).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: Self = Self(-32021);
    /// The request's protocol version is not served (2026-07-28, `-32022`).
    pub const UNSUPPORTED_PROTOCOL_VERSION: Self = Self(-32022);

    /// The numeric code.
    pub const fn code(self) -> i64 {
        self.0
    }
}

impl From<ErrorCode> for i64 {
    fn from(code: ErrorCode) -> i64 {
        code.0
    }
}

impl From<i64> for ErrorCode {
    fn from(code: i64) -> Self {
        Self(code)
    }
}

impl From<i32> for ErrorCode {
    fn from(code: i32) -> Self {
        Self(i64::from(code))
    }
}

impl PartialEq<i64> for ErrorCode {
    fn eq(&self, other: &i64) -> bool {
        self.0 == *other
    }
}

impl PartialEq<ErrorCode> for i64 {
    fn eq(&self, other: &ErrorCode) -> bool {
        *self == other.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// A JSON-RPC request id: a string or an integer, never `null`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl RequestId {
    /// Reads an id from a message's `id` member. Returns `None` for `null`,
    /// fractional numbers, numbers outside `i64` and any other JSON type.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::String(s.clone())),
            Value::Number(n) => n.as_i64().map(Self::Number),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Number(n) => Value::from(*n),
            Self::String(s) => Value::String(s.clone()),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

/// A JSON-RPC error object: `{ code, message, data? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`ErrorCode`] for the standard ones).
    pub code: i64,
    /// A short human-readable description.
    pub message: String,
    /// Optional structured detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// The code as an [`ErrorCode`].
    pub fn error_code(&self) -> ErrorCode {
        ErrorCode(self.code)
    }

    /// An error with a code and message and no data.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> Self {
        Self {
            code: code.into().0,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches structured `data`.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700 Parse error`.
    pub fn parse_error() -> Self {
        Self::new(ErrorCode::PARSE_ERROR, "Parse error")
    }

    /// `-32600` with the given message.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// `-32601 Method not found: <method>`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32602` with the given message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32603` with the given message.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// Converts the error into its JSON form.
    pub fn to_value(&self) -> Value {
        let mut obj = Map::with_capacity(3);
        obj.insert("code".into(), Value::from(self.code));
        obj.insert("message".into(), Value::String(self.message.clone()));
        if let Some(data) = &self.data {
            obj.insert("data".into(), data.clone());
        }
        Value::Object(obj)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

// `ErrorObject` deliberately does not implement `std::error::Error`: that
// lets any Rust error convert into it with `?` (as an internal error).
/// An `std::error::Error` becomes `-32603` (`?` in a handler returning
/// `Result<_, ErrorObject>`). The message is the error and its whole
/// [`source`](std::error::Error::source) chain, joined with `": "` (a
/// source whose text the message already ends with is not repeated), cut
/// to [`MAX_ERROR_TEXT`] bytes.
impl<E: std::error::Error> From<E> for ErrorObject {
    fn from(error: E) -> Self {
        Self::internal(error_chain(&error))
    }
}

/// The longest error text a handler's error becomes on the wire (4 KiB):
/// a longer one is cut at a character boundary and ends with `…`.
pub const MAX_ERROR_TEXT: usize = 4096;

/// `error` and its `source()` chain, `"outer: inner: root"`, bounded by
/// [`MAX_ERROR_TEXT`].
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        if text.len() > MAX_ERROR_TEXT {
            break;
        }
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    bounded(text)
}

/// A `Display` error in its alternate form (`{:#}`: `anyhow` prints its
/// context chain with it), bounded by [`MAX_ERROR_TEXT`].
pub(crate) fn display_chain(error: &dyn std::fmt::Display) -> String {
    bounded(format!("{error:#}"))
}

/// The JSON-RPC error a resource or prompt function's `Err(error)` becomes:
/// the error itself when it is an [`ErrorObject`] (its code kept), and
/// otherwise `-32603` whose message is [`display_chain`] of it — the text a
/// tool's `Err` gives in its error result.
pub(crate) fn handler_error<E: fmt::Display + 'static>(error: E) -> ErrorObject {
    if let Some(object) = (&error as &dyn std::any::Any).downcast_ref::<ErrorObject>() {
        return object.clone();
    }
    ErrorObject::internal(display_chain(&error))
}

/// `text` cut to at most [`MAX_ERROR_TEXT`] bytes at a character boundary,
/// ending with `…` when cut.
pub(crate) fn bounded(mut text: String) -> String {
    if text.len() <= MAX_ERROR_TEXT {
        return text;
    }
    const ELLIPSIS: &str = "…";
    let mut end = MAX_ERROR_TEXT - ELLIPSIS.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(ELLIPSIS);
    text
}

/// Builds a success response `{"jsonrpc":"2.0","id":…,"result":…}`.
pub fn ok(id: Value, result: Value) -> Value {
    let mut obj = Map::with_capacity(3);
    obj.insert("jsonrpc".into(), Value::String("2.0".into()));
    obj.insert("id".into(), id);
    obj.insert("result".into(), result);
    Value::Object(obj)
}

/// Builds an error response. Pass `Value::Null` as the id when the request's
/// id could not be read.
pub fn fail(id: Value, error: &ErrorObject) -> Value {
    let mut obj = Map::with_capacity(3);
    obj.insert("jsonrpc".into(), Value::String("2.0".into()));
    obj.insert("id".into(), id);
    obj.insert("error".into(), error.to_value());
    Value::Object(obj)
}

/// Builds a notification `{"jsonrpc":"2.0","method":…,"params":…}`.
pub fn notification(method: &str, params: Value) -> Value {
    let mut obj = Map::with_capacity(3);
    obj.insert("jsonrpc".into(), Value::String("2.0".into()));
    obj.insert("method".into(), Value::String(method.into()));
    obj.insert("params".into(), params);
    Value::Object(obj)
}

/// Builds a request `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`;
/// `params` is left out when it is `null` (JSON-RPC allows only an object or
/// an array there).
pub(crate) fn request(id: &RequestId, method: &str, params: Value) -> Value {
    let mut obj = Map::with_capacity(4);
    obj.insert("jsonrpc".into(), Value::String("2.0".into()));
    obj.insert("id".into(), id.to_value());
    obj.insert("method".into(), Value::String(method.into()));
    if !params.is_null() {
        obj.insert("params".into(), params);
    }
    Value::Object(obj)
}

/// True when `message` is a JSON-RPC notification: an object with a `method`
/// and no `id` member. Notifications never get a reply.
pub fn is_notification(message: &Value) -> bool {
    message
        .as_object()
        .is_some_and(|o| o.contains_key("method") && !o.contains_key("id"))
}

/// How an incoming JSON value reads as a JSON-RPC message.
#[derive(Debug)]
pub enum MessageKind<'a> {
    /// A request: it has a method and a valid id.
    Request {
        /// The request id.
        id: RequestId,
        /// The method name.
        method: &'a str,
    },
    /// A notification: a method and no id.
    Notification {
        /// The method name.
        method: &'a str,
    },
    /// A response (`result` or `error`) to a request this side sent.
    Response {
        /// The id it answers, when readable.
        id: Option<RequestId>,
    },
    /// Not a valid JSON-RPC message; `id` is the id to answer with (`null` when unreadable).
    Invalid {
        /// The id to echo in the error response.
        id: Value,
        /// Why the message is invalid.
        reason: &'static str,
    },
}

/// Classifies a single (non-batch) JSON-RPC message.
pub(crate) fn classify(message: &Value) -> MessageKind<'_> {
    let Some(obj) = message.as_object() else {
        return MessageKind::Invalid {
            id: Value::Null,
            reason: "Invalid JSON-RPC request: expected an object",
        };
    };
    let raw_id = obj.get("id");
    let echo_id = || {
        raw_id
            .and_then(RequestId::from_value)
            .map_or(Value::Null, |id| id.to_value())
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return MessageKind::Invalid {
            id: echo_id(),
            reason: "Invalid JSON-RPC request: jsonrpc must be \"2.0\"",
        };
    }
    match obj.get("method") {
        Some(Value::String(method)) => match raw_id {
            None => MessageKind::Notification { method },
            Some(raw) => match RequestId::from_value(raw) {
                Some(id) => MessageKind::Request { id, method },
                None => MessageKind::Invalid {
                    id: Value::Null,
                    reason: "Invalid JSON-RPC request: id must be a string or an integer",
                },
            },
        },
        Some(_) => MessageKind::Invalid {
            id: echo_id(),
            reason: "Invalid JSON-RPC request: method must be a string",
        },
        None if obj.contains_key("result") || obj.contains_key("error") => MessageKind::Response {
            id: raw_id.and_then(RequestId::from_value),
        },
        None => MessageKind::Invalid {
            id: echo_id(),
            reason: "Invalid JSON-RPC request: method must be a string",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_accept_strings_and_integers_only() {
        assert_eq!(RequestId::from_value(&json!(7)), Some(RequestId::Number(7)));
        assert_eq!(
            RequestId::from_value(&json!("a")),
            Some(RequestId::String("a".into()))
        );
        assert_eq!(RequestId::from_value(&json!(null)), None);
        assert_eq!(RequestId::from_value(&json!(1.5)), None);
        assert_eq!(RequestId::from_value(&json!(1e30)), None);
        assert_eq!(RequestId::from_value(&json!([1])), None);
    }

    #[test]
    fn classify_reads_each_shape() {
        assert!(matches!(
            classify(&json!({"jsonrpc":"2.0","id":1,"method":"ping"})),
            MessageKind::Request { method: "ping", .. }
        ));
        assert!(matches!(
            classify(&json!({"jsonrpc":"2.0","method":"x"})),
            MessageKind::Notification { method: "x" }
        ));
        assert!(matches!(
            classify(&json!({"jsonrpc":"2.0","id":3,"result":{}})),
            MessageKind::Response {
                id: Some(RequestId::Number(3))
            }
        ));
        assert!(matches!(
            classify(&json!({"jsonrpc":"1.0","id":3,"method":"ping"})),
            MessageKind::Invalid { .. }
        ));
        assert!(matches!(
            classify(&json!({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})),
            MessageKind::Invalid {
                id: Value::Null,
                ..
            }
        ));
    }
}
