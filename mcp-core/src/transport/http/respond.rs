//! Building the HTTP responses of the endpoint.

use hyper::header::{HeaderValue as HttpHeaderValue, CONTENT_TYPE};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use serde_json::json;

use super::sse::McpBody;
use crate::protocol::ErrorCode;
use crate::server::Response as Replies;
use serde::Serialize;

pub(super) fn close_after(response: &mut Response<McpBody>) {
    response.headers_mut().insert(
        hyper::header::CONNECTION,
        HttpHeaderValue::from_static("close"),
    );
}

/// 400 for an id-less error (the message could not be read as JSON-RPC at
/// all), 200 for everything else. A 2026-07-28 request also gets 404 for an
/// unknown or removed method (`-32601`) and 400 for invalid params
/// (`-32602`) and its header, capability and version errors
/// (`-32020`…`-32022`), as that revision's HTTP binding asks.
pub(super) fn reply_status(reply: &Replies, modern: bool) -> StatusCode {
    let Some(code) = reply.error_code() else {
        return StatusCode::OK;
    };
    if reply.is_id_null() {
        return StatusCode::BAD_REQUEST;
    }
    match ErrorCode(code) {
        ErrorCode::METHOD_NOT_FOUND if modern => StatusCode::NOT_FOUND,
        ErrorCode::INVALID_PARAMS
        | ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            if modern =>
        {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

pub(super) fn not_found(parts: &Parts) -> Response<McpBody> {
    error_response(
        StatusCode::NOT_FOUND,
        ErrorCode::METHOD_NOT_FOUND,
        &format!("Not found: {} {}", parts.method, parts.uri),
    )
}

/// 404 for a request whose path is not the endpoint's: a JSON-RPC
/// `-32601` naming the requested path, the configured one and the fix
/// (`HttpOptions::path`), with both paths in `data`.
pub(super) fn path_mismatch(parts: &Parts, configured: &str) -> Response<McpBody> {
    let requested = parts.uri.path();
    let message = format!(
        "Not found: {} {}: this MCP endpoint is configured at `{configured}`, not \
         `{requested}`; mounted under another path, build it with \
         `HttpOptions::new().path(\"{requested}\")` (HttpOptions::path), or send \
         requests to `{configured}`",
        parts.method, parts.uri,
    );
    json_response(
        StatusCode::NOT_FOUND,
        &json!({ "jsonrpc": "2.0", "id": null, "error": {
            "code": ErrorCode::METHOD_NOT_FOUND,
            "message": message,
            "data": { "configuredPath": configured, "requestedPath": requested },
        } }),
    )
}

pub(super) fn status_only(status: StatusCode) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = status;
    r
}

pub(super) fn json_response<T: Serialize + ?Sized>(
    status: StatusCode,
    body: &T,
) -> Response<McpBody> {
    let mut bytes = Vec::with_capacity(256);
    if serde_json::to_writer(&mut bytes, body).is_err() {
        bytes = b"null".to_vec();
    }
    json_bytes_response(status, bytes)
}

/// The response to a request: its replies written straight from their parts.
pub(super) fn replies_response(status: StatusCode, replies: &Replies) -> Response<McpBody> {
    let mut bytes = Vec::new();
    replies.write_to(&mut bytes);
    json_bytes_response(status, bytes)
}

pub(super) fn json_bytes_response(status: StatusCode, bytes: Vec<u8>) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(bytes));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HttpHeaderValue::from_static("application/json"),
    );
    r
}

pub(super) fn error_response(
    status: StatusCode,
    code: ErrorCode,
    message: &str,
) -> Response<McpBody> {
    json_response(
        status,
        &json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } }),
    )
}

pub(super) fn sse_response(body: McpBody) -> Response<McpBody> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HttpHeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        hyper::header::CACHE_CONTROL,
        HttpHeaderValue::from_static("no-cache, no-transform"),
    );
    // Tells nginx-style proxies not to hold events back.
    h.insert("x-accel-buffering", HttpHeaderValue::from_static("no"));
    r
}
