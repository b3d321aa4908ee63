//! Bytes as an HTTP request to `McpHttpService::handle` (built in memory,
//! no sockets). The first two bytes pick the request head; the rest is the
//! POST body:
//!
//! - byte 0: bits 0-1 `Accept` (both types / JSON / event stream / none),
//!   bits 2-3 `MCP-Protocol-Version` (none / 2025-11-25 / 2026-07-28 /
//!   2025-06-18), bit 4 a wrong `Content-Type`, bit 5 sessions on (an
//!   `initialize` is made first and its `Mcp-Session-Id` sent), bit 6 the
//!   2026-07-28 routing headers (`Mcp-Method`, `Mcp-Name`) copied from the
//!   body, bit 7 a foreign `Origin`;
//! - byte 1: bits 0-1 the method (POST / POST / GET / DELETE), bit 2 a
//!   foreign `Host`, bit 3 another path, bit 4 no session id even with
//!   sessions on, bit 5 a bogus session id, bit 6 an `Authorization` header,
//!   bit 7 a `Last-Event-ID` header.
//!
//! The response body must be empty, one JSON value, or (for
//! `text/event-stream`) events whose data are JSON-RPC messages in valid
//! JSON. Streams that stay open (a GET stream, a call waiting on the
//! client) are read for a bounded (paused, so free) time and what arrived
//! is checked.
//!
//! The server and runtime are built once per process; each input gets a
//! new `McpHttpService` (so a new session table).

#![no_main]

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use libfuzzer_sys::fuzz_target;
use mcp_core::{
    transport::http::{McpHttpService, SessionOptions},
    HttpOptions,
};
use mcp_core_fuzz::{assert_json, assert_jsonrpc, shared};
use serde_json::{json, Value};

/// How long (paused time) a response body is read before what arrived is checked.
const READ_FOR: Duration = Duration::from_secs(30);

/// Reads `body` until it ends or [`READ_FOR`] passes; returns the bytes and
/// whether the body ended.
async fn read_body(mut body: mcp_core::transport::http::McpBody) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + READ_FOR;
    loop {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return (out, false),
            Ok(None) => return (out, true),
            Ok(Some(Err(e))) => panic!("response body error: {e:?}"),
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    out.extend_from_slice(&data);
                }
            }
        }
    }
}

/// Checks an event stream: complete events only (a stream cut by the read
/// bound may end in a partial one).
fn check_sse(input: &[u8], body: &[u8], ended: bool) {
    let text = std::str::from_utf8(body).unwrap_or_else(|e| {
        panic!(
            "event stream is not UTF-8: {e}\n  input: {}",
            String::from_utf8_lossy(input)
        )
    });
    let mut events: Vec<&str> = text.split("\n\n").collect();
    let tail = events.pop().unwrap_or("");
    assert!(
        !ended || tail.is_empty(),
        "event stream ends in a partial event {tail:?}\n  input: {}",
        String::from_utf8_lossy(input)
    );
    for event in events {
        let mut data: Vec<&str> = Vec::new();
        for line in event.split('\n') {
            if line.starts_with(':') {
                continue; // a comment (keep-alive)
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "data" => data.push(value),
                "event" | "id" | "retry" => {}
                _ => panic!(
                    "event stream: unexpected line {line:?}\n  input: {}",
                    String::from_utf8_lossy(input)
                ),
            }
        }
        if !data.is_empty() {
            let joined = data.join("\n");
            let value = assert_json("event data", input, joined.as_bytes());
            assert_jsonrpc("event data", input, &value);
        }
    }
}

/// The request the flags and `body` describe.
fn build_request(flags: [u8; 2], body: &[u8], session: Option<&str>) -> Request<Full<Bytes>> {
    let [a, b] = flags;
    let method = match b & 3 {
        2 => "GET",
        3 => "DELETE",
        _ => "POST",
    };
    let path = if b & 8 != 0 { "/other" } else { "/mcp" };
    let host = if b & 4 != 0 {
        "evil.example"
    } else {
        "127.0.0.1:40000"
    };
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", host);
    match a & 3 {
        0 => req = req.header("accept", "application/json, text/event-stream"),
        1 => req = req.header("accept", "application/json"),
        2 => req = req.header("accept", "text/event-stream"),
        _ => {}
    }
    match (a >> 2) & 3 {
        1 => req = req.header("mcp-protocol-version", "2025-11-25"),
        2 => req = req.header("mcp-protocol-version", "2026-07-28"),
        3 => req = req.header("mcp-protocol-version", "2025-06-18"),
        _ => {}
    }
    let content_type = if a & 16 != 0 {
        "text/plain"
    } else {
        "application/json"
    };
    req = req.header("content-type", content_type);
    if a & 64 != 0 {
        if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(body) {
            if let Some(Ok(v)) = m
                .get("method")
                .and_then(Value::as_str)
                .map(hyper::header::HeaderValue::from_str)
            {
                req = req.header("mcp-method", v);
            }
            let name = m
                .get("params")
                .and_then(|p| p.get("name").or_else(|| p.get("uri")));
            if let Some(Ok(v)) = name
                .and_then(Value::as_str)
                .map(hyper::header::HeaderValue::from_str)
            {
                req = req.header("mcp-name", v);
            }
        }
    }
    if a & 128 != 0 {
        req = req.header("origin", "http://evil.example");
    }
    if b & 32 != 0 {
        req = req.header("mcp-session-id", "not-a-session");
    } else if let (Some(id), false) = (session, b & 16 != 0) {
        req = req.header("mcp-session-id", id);
    }
    if b & 64 != 0 {
        req = req.header("authorization", "Bearer fuzz");
    }
    if b & 128 != 0 {
        req = req.header("last-event-id", "1");
    }
    req.body(Full::new(Bytes::copy_from_slice(body)))
        .unwrap_or_else(|e| panic!("request: {e}"))
}

fuzz_target!(|data: &[u8]| {
    let [a, b, body @ ..] = data else {
        return;
    };
    let flags = [*a, *b];
    let sessions = a & 32 != 0;
    let (rt, server) = shared();
    rt.block_on(async {
        let mut options = HttpOptions::new().max_body_bytes(64 * 1024);
        if sessions {
            options = options.sessions(SessionOptions::default());
        }
        let service = McpHttpService::new(server.clone(), options)
            .for_connection(Some(([127, 0, 0, 1], 40000).into()));
        let session = if sessions {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}, "sampling": {}, "roots": {}},
                "clientInfo": {"name": "fuzz", "version": "0"}}});
            let req = build_request([0, 0], init.to_string().as_bytes(), None);
            let response = service.handle(req).await;
            let id = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let (bytes, _) = read_body(response.into_body()).await;
            let _ = assert_json("initialize", data, &bytes);
            id
        } else {
            None
        };
        let response = service
            .handle(build_request(flags, body, session.as_deref()))
            .await;
        let is_sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let (bytes, ended) = read_body(response.into_body()).await;
        if is_sse {
            check_sse(data, &bytes, ended);
        } else if !bytes.is_empty() {
            assert!(
                ended,
                "a JSON body that never ends\n  input: {}",
                String::from_utf8_lossy(data)
            );
            let value = assert_json("http body", data, &bytes);
            assert_jsonrpc("http body", data, &value);
        }
    });
});
