//! The client's messages as bytes: requests and notifications written
//! straight to JSON (the 2026-07-28 `_meta` spliced in from a fragment
//! serialized once per connection, never cloned per request), and
//! replies read into an envelope whose `result` stays raw JSON until the
//! caller's type reads it.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::meta::meta_keys;
use crate::protocol::RequestId;

/// The members of the 2026-07-28 `_meta` this client writes itself.
const OWN_META: [&str; 3] = [
    meta_keys::PROTOCOL_VERSION,
    meta_keys::CLIENT_CAPABILITIES,
    meta_keys::CLIENT_INFO,
];

/// `meta`'s members as JSON text without the braces: what every request's
/// `_meta` starts with.
pub(crate) fn fragment(meta: &Map<String, Value>) -> String {
    let whole = Value::Object(meta.clone()).to_string();
    whole[1..whole.len() - 1].to_owned()
}

fn push_json(out: &mut Vec<u8>, value: &impl serde::Serialize) {
    // Writing to a Vec cannot fail, and maps with string keys always serialize.
    let _ = serde_json::to_writer(&mut *out, value);
}

/// Writes `params` with `_meta` made of `own` (the 2026-07-28 fragment),
/// then `progressToken` when given, then the caller's own `_meta` members.
fn push_params(
    out: &mut Vec<u8>,
    params: &Map<String, Value>,
    own: Option<&str>,
    token: Option<&str>,
) {
    out.push(b'{');
    let mut first = true;
    let mut sep = |out: &mut Vec<u8>| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
    };
    if own.is_some() || token.is_some() {
        sep(out);
        out.extend_from_slice(b"\"_meta\":{");
        let mut inner_first = true;
        if let Some(own) = own.filter(|f| !f.is_empty()) {
            out.extend_from_slice(own.as_bytes());
            inner_first = false;
        }
        if let Some(token) = token {
            if !std::mem::take(&mut inner_first) {
                out.push(b',');
            }
            out.extend_from_slice(b"\"progressToken\":");
            push_json(out, &token);
        }
        if let Some(Value::Object(theirs)) = params.get("_meta") {
            for (k, v) in theirs {
                let ours = (own.is_some() && OWN_META.contains(&k.as_str()))
                    || (token.is_some() && k == "progressToken");
                if ours {
                    continue;
                }
                if !std::mem::take(&mut inner_first) {
                    out.push(b',');
                }
                push_json(out, k);
                out.push(b':');
                push_json(out, v);
            }
        }
        out.push(b'}');
    }
    for (k, v) in params {
        if k == "_meta" && (own.is_some() || token.is_some()) {
            continue;
        }
        sep(out);
        push_json(out, k);
        out.push(b':');
        push_json(out, v);
    }
    out.push(b'}');
}

/// A request, as bytes.
pub(crate) fn request(
    id: &RequestId,
    method: &str,
    params: &Map<String, Value>,
    own_meta: Option<&str>,
    token: Option<&str>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(160 + own_meta.map_or(0, str::len));
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    push_json(&mut out, id);
    out.extend_from_slice(b",\"method\":");
    push_json(&mut out, &method);
    out.extend_from_slice(b",\"params\":");
    push_params(&mut out, params, own_meta, token);
    out.push(b'}');
    out
}

/// A notification, as bytes.
pub(crate) fn notification(
    method: &str,
    params: &Map<String, Value>,
    own_meta: Option<&str>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + own_meta.map_or(0, str::len));
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    push_json(&mut out, &method);
    out.extend_from_slice(b",\"params\":");
    push_params(&mut out, params, own_meta, None);
    out.push(b'}');
    out
}

/// One message from the server, its members kept raw.
#[derive(Debug, Deserialize)]
pub(crate) struct Envelope {
    #[serde(default)]
    pub(crate) id: Option<Value>,
    #[serde(default)]
    pub(crate) method: Option<String>,
    #[serde(default)]
    pub(crate) params: Option<Box<RawValue>>,
    #[serde(default)]
    pub(crate) result: Option<Box<RawValue>>,
    #[serde(default)]
    pub(crate) error: Option<Box<RawValue>>,
}

/// A progress notification's params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProgressParams {
    pub(crate) progress_token: Value,
    #[serde(default)]
    pub(crate) progress: f64,
    #[serde(default)]
    pub(crate) total: Option<f64>,
    #[serde(default)]
    pub(crate) message: Option<String>,
}

/// The `resultType` of a result, read without building the rest.
#[derive(Debug, Deserialize)]
pub(crate) struct Kind<'a> {
    #[serde(rename = "resultType", borrow, default)]
    pub(crate) result_type: Option<std::borrow::Cow<'a, str>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn the_modern_meta_token_and_the_callers_meta_merge_into_one_object() {
        let own = map(
            json!({meta_keys::PROTOCOL_VERSION: "2026-07-28", meta_keys::CLIENT_CAPABILITIES: {}}),
        );
        let params = map(
            json!({"name": "t", "_meta": {"progressToken": "old", "x": 1,
            meta_keys::PROTOCOL_VERSION: "spoofed"}}),
        );
        let bytes = request(
            &RequestId::Number(7),
            "tools/call",
            &params,
            Some(&fragment(&own)),
            Some("p7"),
        );
        let got: Value = serde_json::from_slice(&bytes).expect("valid JSON");
        assert_eq!(
            got,
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t", "_meta": {
                meta_keys::PROTOCOL_VERSION: "2026-07-28", meta_keys::CLIENT_CAPABILITIES: {},
                "progressToken": "p7", "x": 1}}})
        );
    }

    #[test]
    fn without_meta_to_add_params_are_written_as_they_are() {
        let params = map(json!({"uri": "a://b", "_meta": {"k": true}}));
        let bytes = notification("notifications/x", &params, None);
        let got: Value = serde_json::from_slice(&bytes).expect("valid JSON");
        assert_eq!(
            got,
            json!({"jsonrpc": "2.0", "method": "notifications/x", "params": params})
        );
        let bytes = request(&RequestId::from("s"), "ping", &Map::new(), None, None);
        let got: Value = serde_json::from_slice(&bytes).expect("valid JSON");
        assert_eq!(
            got,
            json!({"jsonrpc": "2.0", "id": "s", "method": "ping", "params": {}})
        );
    }
}
