//! Header names of the Streamable HTTP binding and reading request headers.

// A refused request is answered with its ready `Response`; it is built once
// per request, so its size in a `Result` does not matter.
#![allow(clippy::result_large_err)]

use hyper::header::{HeaderMap, HeaderName, ACCEPT, CONTENT_TYPE};
use hyper::{Response, StatusCode};

use super::respond::error_response;
use super::sse::McpBody;
use crate::context::{HeaderValue, Headers};
use crate::protocol::{ErrorCode, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS};

/// The session header (`Mcp-Session-Id`; header names are case-insensitive).
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol version header clients send after `initialize`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// [`PROTOCOL_VERSION_HEADER`] as a header name (looked up without parsing).
pub(crate) static PROTOCOL_VERSION_NAME: HeaderName =
    HeaderName::from_static(PROTOCOL_VERSION_HEADER);
/// [`SESSION_HEADER`] as a header name.
pub(super) static SESSION_NAME: HeaderName = HeaderName::from_static(SESSION_HEADER);

pub(super) fn collect_headers(map: &HeaderMap) -> Headers {
    let mut out = Headers::new();
    for name in map.keys() {
        let mut values: Vec<String> = map
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        let value = if values.len() == 1 {
            HeaderValue::One(values.remove(0))
        } else {
            HeaderValue::Many(values)
        };
        out.insert(name.as_str().to_owned(), value);
    }
    out
}

pub(super) fn header_str(map: &HeaderMap, name: impl hyper::header::AsHeaderName) -> Option<&str> {
    map.get(name).and_then(|v| v.to_str().ok())
}

pub(super) fn is_json(map: &HeaderMap) -> bool {
    map.get(CONTENT_TYPE)
        .is_some_and(|ct| is_media_type(ct.as_bytes(), b"application/json"))
}

pub(super) fn accepts_sse(map: &HeaderMap) -> bool {
    map.get_all(ACCEPT).iter().any(|v| {
        // What the SDK clients send, compared whole before any parsing.
        v.as_bytes() == b"application/json, text/event-stream"
            || v.as_bytes()
                .split(|&b| b == b',')
                .any(|item| is_media_type(item, b"text/event-stream"))
    })
}

/// Whether `value` (one media type, parameters allowed) names `wanted`,
/// ignoring case and surrounding whitespace. Byte-wise: a header is
/// checked on every request, and this costs no UTF-8 pass or allocation.
pub(super) fn is_media_type(value: &[u8], wanted: &[u8]) -> bool {
    if value == wanted {
        return true;
    }
    let essence = value.split(|&b| b == b';').next().unwrap_or_default();
    essence.trim_ascii().eq_ignore_ascii_case(wanted)
}

/// 400 for an `MCP-Protocol-Version` this server does not speak.
pub(super) fn check_protocol_version(map: &HeaderMap) -> Result<(), Response<McpBody>> {
    let Some(value) = map.get(&PROTOCOL_VERSION_NAME) else {
        return Ok(());
    };
    let value = String::from_utf8_lossy(value.as_bytes());
    let value = value.trim();
    if SUPPORTED_PROTOCOL_VERSIONS.contains(&value) || MODERN_PROTOCOL_VERSIONS.contains(&value) {
        return Ok(());
    }
    Err(error_response(
        StatusCode::BAD_REQUEST,
        ErrorCode::INVALID_REQUEST,
        &format!(
            "Bad Request: unsupported MCP-Protocol-Version {:?} (supported: {})",
            value.chars().take(64).collect::<String>(),
            SUPPORTED_PROTOCOL_VERSIONS
                .iter()
                .chain(MODERN_PROTOCOL_VERSIONS)
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue as HttpHeaderValue;

    fn headers(name: hyper::header::HeaderName, values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(
                &name,
                HttpHeaderValue::from_str(v).expect("valid header value"),
            );
        }
        map
    }

    #[test]
    fn media_types_match_without_case_space_or_parameters() {
        assert!(is_json(&headers(CONTENT_TYPE, &["application/json"])));
        assert!(is_json(&headers(
            CONTENT_TYPE,
            &[" Application/JSON ; charset=utf-8"]
        )));
        assert!(!is_json(&headers(CONTENT_TYPE, &["application/jsonx"])));
        assert!(!is_json(&headers(
            CONTENT_TYPE,
            &["text/plain; application/json"]
        )));
        assert!(!is_json(&HeaderMap::new()));

        assert!(accepts_sse(&headers(
            ACCEPT,
            &["application/json, text/event-stream"]
        )));
        assert!(accepts_sse(&headers(
            ACCEPT,
            &["application/json", "TEXT/Event-Stream;q=0.5"]
        )));
        assert!(!accepts_sse(&headers(ACCEPT, &["application/json"])));
        assert!(!accepts_sse(&headers(
            ACCEPT,
            &["text/event-streamer, */*"]
        )));
        assert!(!accepts_sse(&HeaderMap::new()));
    }
}
