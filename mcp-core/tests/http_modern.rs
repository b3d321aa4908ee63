//! The 2026-07-28 HTTP binding over real loopback TCP: the routing headers
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`)
//! checked against the body, base64-wrapped values, the statuses of modern
//! errors, `Mcp-Session-Id` ignored, JSON or SSE per request, cancellation
//! by closing the response, and legacy sessions on the same endpoint.
//!
//! The client is raw HTTP/1.1 over `TcpStream` (the same style as
//! `tests/http.rs`), so every header is sent exactly as written.

#![cfg(feature = "http")]

#[path = "common/raw_http.rs"]
mod raw_http;
#[path = "common/tool_events.rs"]
mod tool_events;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::{serve_http, HttpOptions};

use mcp_core::transport::http::{HttpHandle, SessionOptions};
use mcp_core::{
    handler::{PromptArgs, ResourceRequest},
    protocol::CallToolResult,
    InvokeContext, McpPromptDef, McpResourceDef, McpServer, McpToolDef,
};
use raw_http::{raw, Resp, Stream};
use serde_json::{json, Map, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tool_events::{send_event, EndReport, Events};

/// Hang guard for every wait in these tests.
const GUARD: Duration = Duration::from_secs(20);

async fn guard<F: std::future::Future>(what: &str, fut: F) -> F::Output {
    match tokio::time::timeout(GUARD, fut).await {
        Ok(v) => v,
        Err(_) => panic!("hang guard: {what} did not complete within {GUARD:?}"),
    }
}

const MODERN: &str = "2026-07-28";
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const NON_ASCII_URI: &str = "test://docs/résumé";

// ---------------------------------------------------------------- fixture

/// The schema of `route`: every kind of `x-mcp-header` argument.
fn route_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "config": {"type": "object", "properties": {
                "zone": {"type": "string", "x-mcp-header": "Zone"}
            }},
            "query": {"type": "string"}
        },
        "required": ["region"]
    })
}

fn build_server(events: Events) -> McpServer {
    let any = json!({"type": "object"});
    let e1 = Arc::clone(&events);
    let e2 = Arc::clone(&events);
    McpServer::builder()
        .server_info("http-modern-test", "1.0.0")
        .logging()
        .tool(McpToolDef::new(
            "echo",
            "echo",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            |args: Map<String, Value>, _ctx: InvokeContext| async move {
                CallToolResult::text(args.get("text").and_then(Value::as_str).unwrap_or(""))
            },
        ))
        .tool(McpToolDef::new(
            "route",
            "routed by its x-mcp-header arguments",
            route_schema(),
            |args: Map<String, Value>, _ctx: InvokeContext| async move {
                CallToolResult::text(Value::Object(args).to_string())
            },
        ))
        .tool(McpToolDef::new(
            "fails",
            "a tool execution error",
            any.clone(),
            |_args: Map<String, Value>, _ctx: InvokeContext| async move {
                CallToolResult::error("it failed")
            },
        ))
        .tool(McpToolDef::new(
            "needs_sampling",
            "needs the sampling capability",
            any.clone(),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                match ctx.require_capability(json!({"sampling": {}})).await {
                    Ok(()) => CallToolResult::text("sampled"),
                    Err(e) => CallToolResult::error(e.to_string()),
                }
            },
        ))
        .tool(McpToolDef::new(
            "slow",
            "steps with progress",
            any.clone(),
            |args: Map<String, Value>, ctx: InvokeContext| async move {
                let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
                for i in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    ctx.report_progress(i as f64, Some(steps as f64), Some("step"))
                        .await;
                }
                CallToolResult::text(format!("done {steps}"))
            },
        ))
        .tool(McpToolDef::new(
            "ticker",
            "progress until cancelled",
            any.clone(),
            move |_args: Map<String, Value>, ctx: InvokeContext| {
                let events = Arc::clone(&e1);
                async move {
                    let _report = EndReport {
                        name: "ticker",
                        ctx: ctx.clone(),
                        events: Arc::clone(&events),
                    };
                    send_event(&events, "ticker started".into());
                    let mut i = 0.0;
                    while !ctx.is_cancelled() {
                        i += 1.0;
                        ctx.report_progress(i, None, None).await;
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    CallToolResult::error("cancelled")
                }
            },
        ))
        .tool(McpToolDef::new(
            "block",
            "runs until cancelled",
            any,
            move |_args: Map<String, Value>, ctx: InvokeContext| {
                let events = Arc::clone(&e2);
                async move {
                    let _report = EndReport {
                        name: "block",
                        ctx: ctx.clone(),
                        events: Arc::clone(&events),
                    };
                    send_event(&events, "block started".into());
                    ctx.cancelled().await;
                    CallToolResult::error("cancelled")
                }
            },
        ))
        .prompt(McpPromptDef::new(
            "greet",
            |_args: PromptArgs, _ctx: InvokeContext| async move { "hello".to_owned() },
        ))
        .resource(McpResourceDef::new(
            "test://static",
            "static",
            |_req: ResourceRequest, _ctx: InvokeContext| async move { "static text".to_owned() },
        ))
        .resource(McpResourceDef::new(
            NON_ASCII_URI,
            "résumé",
            |_req: ResourceRequest, _ctx: InvokeContext| async move { "cv".to_owned() },
        ))
        .resource_subscriptions()
        .build()
        .expect("valid server")
}

struct Fixture {
    handle: HttpHandle,
    server: McpServer,
    events: mpsc::UnboundedReceiver<String>,
}

impl Fixture {
    async fn start(options: HttpOptions) -> Self {
        let (tx, events) = mpsc::unbounded_channel();
        let server = build_server(Arc::new(Mutex::new(tx)));
        let handle = serve_http(server.clone(), options)
            .await
            .expect("serve_http");
        Self {
            handle,
            server,
            events,
        }
    }

    fn addr(&self) -> SocketAddr {
        self.handle.local_addr()
    }

    /// Waits for a specific tool event, skipping others.
    async fn wait_event(&mut self, wanted: &str) {
        loop {
            let event = guard("tool event", self.events.recv())
                .await
                .expect("event channel open");
            if event == wanted {
                return;
            }
        }
    }
}

fn sessions() -> HttpOptions {
    HttpOptions::new().sessions(SessionOptions::default())
}

// ---------------------------------------------------------------- raw client

/// Builds a request; every header is written as given.
fn request(addr: SocketAddr, method: &str, headers: &[(String, String)], body: &str) -> Vec<u8> {
    let mut out = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("connection"))
    {
        out.push_str("Connection: close\r\n");
    }
    if !body.is_empty() || method == "POST" {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    out.push_str(body);
    out.into_bytes()
}

// ---------------------------------------------------------------- modern requests

/// A 2026-07-28 request and the headers it is sent with: by default the
/// ones a conforming client sends (`MCP-Protocol-Version`, `Mcp-Method`,
/// `Mcp-Name` where the method has one), editable before sending.
struct Modern {
    body: Value,
    headers: Vec<(String, String)>,
}

fn modern_meta() -> Value {
    json!({
        PROTOCOL_VERSION: MODERN,
        CLIENT_CAPABILITIES: {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
    })
}

impl Modern {
    fn new(id: i64, method: &str, params: Value) -> Self {
        let mut params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let name = match method {
            "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
            "resources/read" => params.get("uri").and_then(Value::as_str),
            _ => None,
        }
        .map(str::to_owned);
        params.entry("_meta").or_insert_with(modern_meta);
        let mut headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            (
                "Accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
            ("MCP-Protocol-Version".to_owned(), MODERN.to_owned()),
            ("Mcp-Method".to_owned(), method.to_owned()),
        ];
        if let Some(name) = name {
            headers.push(("Mcp-Name".to_owned(), name));
        }
        Self {
            body: json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            headers,
        }
    }

    /// A `tools/call` of `name` with `arguments`.
    fn call(id: i64, name: &str, arguments: Value) -> Self {
        Self::new(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
    }

    /// Sets a header (replacing any of the same name, in any case).
    fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Drops a header (any case).
    fn without(mut self, name: &str) -> Self {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self
    }

    /// Edits the body.
    fn body(mut self, edit: impl FnOnce(&mut Value)) -> Self {
        edit(&mut self.body);
        self
    }

    fn bytes(&self, addr: SocketAddr) -> Vec<u8> {
        request(addr, "POST", &self.headers, &self.body.to_string())
    }

    async fn send(&self, addr: SocketAddr) -> Resp {
        let resp = raw(addr, &self.bytes(addr)).await;
        // JSON replies are recorded for schema validation (MCP_TRACE_DIR);
        // the revision is the body's claim, or the 2026-07-28 header's.
        if resp
            .header("content-type")
            .is_some_and(|c| c.starts_with("application/json"))
        {
            if let Ok(reply) = serde_json::from_slice::<Value>(&resp.body) {
                mcp_core::testing::trace::trace_exchange(&self.body, &reply, MODERN);
            }
        }
        resp
    }

    async fn open(&self, addr: SocketAddr) -> Stream {
        Stream::open(addr, &self.bytes(addr)).await
    }
}

/// Asserts a JSON response with `status` carrying JSON-RPC error `code` for
/// request `id`; returns the error object.
fn assert_error(r: &Resp, status: u16, code: i64, id: i64) -> Value {
    assert_eq!(r.status, status, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    let body = r.json();
    assert_eq!(body["id"], id, "the error carries the request id: {body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    body["error"].clone()
}

/// Asserts a 200 JSON result for request `id`; returns the result.
fn assert_ok(r: &Resp, id: i64) -> Value {
    assert_eq!(r.status, 200, "{}", r.text());
    let body = r.json();
    assert_eq!(body["id"], id, "{body}");
    assert!(body.get("error").is_none(), "unexpected error: {body}");
    assert_eq!(body["result"]["resultType"], "complete", "{body}");
    body["result"].clone()
}

fn tool_text(result: &Value) -> String {
    result
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no tool text in {result}"))
        .to_owned()
}

fn b64(text: &str) -> String {
    format!(
        "=?base64?{}?=",
        mcp_core::protocol::base64::encode(text.as_bytes())
    )
}

// ---------------------------------------------------------------- sessions

#[tokio::test]
async fn modern_requests_ignore_and_never_get_a_session() {
    let f = Fixture::start(sessions()).await;
    let list = Modern::new(1, "tools/list", json!({}));
    let r = list.send(f.addr()).await;
    assert!(assert_ok(&r, 1)["tools"].is_array());
    assert_eq!(r.header("mcp-session-id"), None);

    // An unknown session id is ignored, not 404.
    let r = list
        .header("Mcp-Session-Id", "no-such-session")
        .send(f.addr())
        .await;
    assert_ok(&r, 1);
    assert_eq!(r.header("mcp-session-id"), None);

    // `initialize` with the modern envelope is a removed method: 404, and no
    // session is minted for it.
    let r = Modern::new(
        2,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "c", "version": "1"}}),
    )
    .send(f.addr())
    .await;
    assert_error(&r, 404, -32601, 2);
    assert_eq!(r.header("mcp-session-id"), None);
    f.handle.close().await;
}

#[tokio::test]
async fn legacy_sessions_share_the_endpoint() {
    let f = Fixture::start(sessions()).await;
    let addr = f.addr();
    let json_headers = |extra: &[(&str, &str)]| {
        let mut h = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Accept".to_owned(), "application/json".to_owned()),
        ];
        h.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        h
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let r = raw(
        addr,
        &request(addr, "POST", &json_headers(&[]), &init.to_string()),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25");
    let sid = r.header("mcp-session-id").expect("a session").to_owned();

    // Legacy traffic needs no Mcp-Method/Mcp-Name, only its session.
    let legacy_call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "legacy"}}});
    let headers = json_headers(&[
        ("Mcp-Session-Id", &sid),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]);
    let r = raw(
        addr,
        &request(addr, "POST", &headers, &legacy_call.to_string()),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["content"][0]["text"], "legacy");
    assert!(r.json()["result"].get("resultType").is_none());

    // A legacy -32602 (unknown tool) stays HTTP 200.
    let unknown = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "nope", "arguments": {}}});
    let r = raw(addr, &request(addr, "POST", &headers, &unknown.to_string())).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["error"]["code"], -32602);

    // Without its session a legacy request is still refused.
    let r = raw(
        addr,
        &request(addr, "POST", &json_headers(&[]), &legacy_call.to_string()),
    )
    .await;
    assert_eq!(r.status, 400);

    // A modern request carrying the legacy session id is served statelessly.
    let r = Modern::call(3, "echo", json!({"text": "modern"}))
        .header("Mcp-Session-Id", &sid)
        .send(addr)
        .await;
    assert_eq!(tool_text(&assert_ok(&r, 3)), "modern");
    assert_eq!(r.header("mcp-session-id"), None);

    // GET opens the legacy session's stream; DELETE ends the session.
    let get = [
        ("Accept".to_owned(), "text/event-stream".to_owned()),
        ("Mcp-Session-Id".to_owned(), sid.clone()),
    ];
    let s = Stream::open(addr, &request(addr, "GET", &get, "")).await;
    assert_eq!(s.status, 200);
    assert_eq!(s.header("content-type"), Some("text/event-stream"));
    assert_eq!(s.header("x-accel-buffering"), Some("no"));
    drop(s);
    let r = raw(
        addr,
        &request(addr, "DELETE", &[("Mcp-Session-Id".to_owned(), sid)], ""),
    )
    .await;
    assert_eq!(r.status, 204);
    f.handle.close().await;
}

#[tokio::test]
async fn get_and_delete_are_405_without_sessions() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let addr = f.addr();
    for method in ["GET", "DELETE"] {
        for version in [None, Some(MODERN)] {
            let mut headers = vec![("Accept".to_owned(), "text/event-stream".to_owned())];
            if let Some(v) = version {
                headers.push(("MCP-Protocol-Version".to_owned(), v.to_owned()));
            }
            let r = raw(addr, &request(addr, method, &headers, "")).await;
            assert_eq!(r.status, 405, "{method} {version:?}");
            assert_eq!(r.header("allow"), Some("POST"));
        }
    }
    // POST still serves modern requests.
    assert_ok(&Modern::new(1, "tools/list", json!({})).send(addr).await, 1);
    f.handle.close().await;
}

// ---------------------------------------------------------------- standard headers

#[tokio::test]
async fn protocol_version_header_must_equal_the_claim() {
    let f = Fixture::start(sessions()).await;
    let addr = f.addr();
    let list = || Modern::new(7, "tools/list", json!({}));

    let r = list().without("MCP-Protocol-Version").send(addr).await;
    assert_error(&r, 400, -32020, 7);
    let r = list()
        .header("MCP-Protocol-Version", "2025-11-25")
        .send(addr)
        .await;
    assert_error(&r, 400, -32020, 7);
    // Values are case-sensitive.
    let r = list()
        .header("MCP-Protocol-Version", "2026-07-28X")
        .send(addr)
        .await;
    assert_error(&r, 400, -32020, 7);
    // Optional whitespace around the value is not part of it; the name is
    // case-insensitive.
    let r = list()
        .without("MCP-Protocol-Version")
        .header("mcp-protocol-version", " \t2026-07-28 \t")
        .send(addr)
        .await;
    assert_ok(&r, 7);

    // The body claims a version this server does not serve: the header
    // agrees, so the answer is -32022 naming the supported versions.
    let unsupported = |header: &str| {
        list()
            .body(|b| b["params"]["_meta"][PROTOCOL_VERSION] = json!("v999.0.0"))
            .header("MCP-Protocol-Version", header)
    };
    let r = unsupported("v999.0.0").send(addr).await;
    let error = assert_error(&r, 400, -32022, 7);
    assert_eq!(error["data"]["supported"], json!([MODERN]));
    assert_eq!(error["data"]["requested"], "v999.0.0");
    // The header disagrees with the body's version: a header mismatch.
    let r = unsupported(MODERN).send(addr).await;
    assert_error(&r, 400, -32020, 7);
    f.handle.close().await;
}

#[tokio::test]
async fn modern_header_without_the_body_claim_is_invalid_params() {
    let f = Fixture::start(sessions()).await;
    let addr = f.addr();
    // No `_meta` at all.
    let r = Modern::new(8, "tools/list", json!({}))
        .body(|b| b["params"] = json!({}))
        .send(addr)
        .await;
    assert_error(&r, 400, -32602, 8);
    // `_meta` without the protocol version.
    let r = Modern::new(9, "server/discover", json!({}))
        .body(|b| {
            b["params"]["_meta"]
                .as_object_mut()
                .expect("meta")
                .remove(PROTOCOL_VERSION);
        })
        .send(addr)
        .await;
    assert_error(&r, 400, -32602, 9);
    // The claim without client capabilities is a malformed envelope.
    let r = Modern::new(10, "server/discover", json!({}))
        .body(|b| {
            b["params"]["_meta"]
                .as_object_mut()
                .expect("meta")
                .remove(CLIENT_CAPABILITIES);
        })
        .send(addr)
        .await;
    assert_error(&r, 400, -32602, 10);
    // A notification with the modern header and no claim is accepted.
    let note = Modern::new(0, "notifications/initialized", json!({}))
        .body(|b| {
            b.as_object_mut().expect("object").remove("id");
            b["params"] = json!({});
        })
        .send(addr)
        .await;
    assert_eq!(note.status, 202, "{}", note.text());
    f.handle.close().await;
}

#[tokio::test]
async fn mcp_method_must_equal_the_body_method() {
    let f = Fixture::start(HttpOptions::new()).await;
    let addr = f.addr();
    let list = || Modern::new(11, "tools/list", json!({}));

    for bad in [
        list().without("Mcp-Method"),
        list().header("Mcp-Method", "prompts/list"),
        list().header("Mcp-Method", "TOOLS/LIST"),
        list().header("Mcp-Method", "tools/list/"),
        list().header("Mcp-Method", &b64("prompts/list")),
    ] {
        let r = bad.send(addr).await;
        let error = assert_error(&r, 400, -32020, 11);
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("Mcp-Method")),
            "{error}"
        );
    }
    for good in [
        list()
            .without("Mcp-Method")
            .header("mcp-method", "tools/list"),
        list()
            .without("Mcp-Method")
            .header("MCP-METHOD", "tools/list"),
        list().header("Mcp-Method", "  tools/list\t"),
        list().header("Mcp-Method", &b64("tools/list")),
    ] {
        assert_ok(&good.send(addr).await, 11);
    }
    // A repeated header is refused.
    let mut twice = list();
    twice
        .headers
        .push(("Mcp-Method".to_owned(), "tools/list".to_owned()));
    assert_error(&twice.send(addr).await, 400, -32020, 11);
    f.handle.close().await;
}

#[tokio::test]
async fn mcp_name_must_equal_the_name_or_uri() {
    let f = Fixture::start(HttpOptions::new()).await;
    let addr = f.addr();

    // tools/call: params.name.
    let call = || Modern::call(12, "echo", json!({"text": "hi"}));
    assert_eq!(tool_text(&assert_ok(&call().send(addr).await, 12)), "hi");
    for bad in [
        call().without("Mcp-Name"),
        call().header("Mcp-Name", "wrong_tool_name"),
        call().header("Mcp-Name", "ECHO"),
    ] {
        assert_error(&bad.send(addr).await, 400, -32020, 12);
    }
    assert_ok(&call().header("Mcp-Name", "  echo  ").send(addr).await, 12);
    assert_ok(&call().header("mcp-name", "echo").send(addr).await, 12);

    // prompts/get: params.name.
    let get = || Modern::new(13, "prompts/get", json!({"name": "greet"}));
    assert_ok(&get().send(addr).await, 13);
    assert_error(&get().without("Mcp-Name").send(addr).await, 400, -32020, 13);
    assert_error(
        &get().header("Mcp-Name", "other").send(addr).await,
        400,
        -32020,
        13,
    );

    // resources/read: params.uri.
    let read = |uri: &str| Modern::new(14, "resources/read", json!({"uri": uri}));
    let r = read("test://static").send(addr).await;
    assert_eq!(assert_ok(&r, 14)["contents"][0]["text"], "static text");
    assert_error(
        &read("test://static").without("Mcp-Name").send(addr).await,
        400,
        -32020,
        14,
    );
    assert_error(
        &read("test://static")
            .header("Mcp-Name", "test://other")
            .send(addr)
            .await,
        400,
        -32020,
        14,
    );
    // A non-ASCII URI travels base64-wrapped; raw non-ASCII bytes are
    // invalid characters.
    let r = read(NON_ASCII_URI)
        .header("Mcp-Name", &b64(NON_ASCII_URI))
        .send(addr)
        .await;
    assert_eq!(assert_ok(&r, 14)["contents"][0]["text"], "cv");
    let r = read(NON_ASCII_URI).send(addr).await; // raw UTF-8 in the header
    let error = assert_error(&r, 400, -32020, 14);
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("invalid characters")),
        "{error}"
    );

    // Other methods have no Mcp-Name; one sent anyway is ignored.
    let r = Modern::new(15, "tools/list", json!({}))
        .header("Mcp-Name", "whatever")
        .send(addr)
        .await;
    assert_ok(&r, 15);
    f.handle.close().await;
}

// ---------------------------------------------------------------- Mcp-Param-*

/// A `route` call with every annotated argument and its header.
fn route(id: i64) -> Modern {
    Modern::call(
        id,
        "route",
        json!({"region": "eu-west", "priority": 42, "verbose": true,
               "config": {"zone": "z1"}, "query": "not mirrored"}),
    )
    .header("Mcp-Param-Region", "eu-west")
    .header("Mcp-Param-Priority", "42")
    .header("Mcp-Param-Verbose", "true")
    .header("Mcp-Param-Zone", "z1")
}

#[tokio::test]
async fn param_headers_mirror_annotated_arguments() {
    let f = Fixture::start(HttpOptions::new()).await;
    let addr = f.addr();

    let r = route(20).send(addr).await;
    let result = assert_ok(&r, 20);
    assert_eq!(
        serde_json::from_str::<Value>(&tool_text(&result)).expect("args JSON")["region"],
        "eu-west"
    );

    // Present, non-null argument without its header; values that differ.
    for bad in [
        route(21).without("Mcp-Param-Region"),
        route(21).without("Mcp-Param-Priority"),
        route(21).without("Mcp-Param-Verbose"),
        route(21).without("Mcp-Param-Zone"),
        route(21).header("Mcp-Param-Region", "us-east"),
        route(21).header("Mcp-Param-Region", "EU-WEST"),
        route(21).header("Mcp-Param-Priority", "43"),
        route(21).header("Mcp-Param-Priority", "forty-two"),
        route(21).header("Mcp-Param-Verbose", "TRUE"),
        route(21).header("Mcp-Param-Verbose", "1"),
        route(21).header("Mcp-Param-Zone", "z2"),
    ] {
        let r = bad.send(addr).await;
        let error = assert_error(&r, 400, -32020, 21);
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("Mcp-Param-")),
            "{error}"
        );
    }

    // Header names in any case; whitespace trimmed; integers compare
    // numerically.
    for good in [
        route(22)
            .without("Mcp-Param-Region")
            .header("mcp-param-region", "eu-west"),
        route(22)
            .without("Mcp-Param-Region")
            .header("MCP-PARAM-REGION", " eu-west "),
        route(22).header("Mcp-Param-Priority", "42.0"),
        route(22).header("Mcp-Param-Priority", &b64("42")),
        route(22)
            .header("Mcp-Param-Priority", "42")
            .body(|b| b["params"]["arguments"]["priority"] = json!(42.0)),
    ] {
        assert_ok(&good.send(addr).await, 22);
    }

    // A null or absent argument expects no header; an unannotated one never does.
    let r = route(23)
        .without("Mcp-Param-Verbose")
        .without("Mcp-Param-Zone")
        .body(|b| {
            let args = &mut b["params"]["arguments"];
            args["verbose"] = Value::Null;
            args.as_object_mut().expect("args").remove("config");
        })
        .send(addr)
        .await;
    assert_ok(&r, 23);
    let r = route(24)
        .without("Mcp-Param-Zone")
        .body(|b| b["params"]["arguments"]["config"] = json!({"zone": null}))
        .send(addr)
        .await;
    assert_ok(&r, 24);
    f.handle.close().await;
}

#[tokio::test]
async fn base64_wrapped_values_are_decoded_strictly() {
    let f = Fixture::start(HttpOptions::new()).await;
    let addr = f.addr();
    let region = |body: &str, header: &str| {
        route(30)
            .body(|b| b["params"]["arguments"]["region"] = json!(body))
            .header("Mcp-Param-Region", header)
    };

    // Valid base64 of the body value.
    assert_ok(&region("Hello", "=?base64?SGVsbG8=?=").send(addr).await, 30);
    // Values that need base64: surrounding spaces, non-ASCII, control chars.
    for value in ["  padded  ", "Grüße", "line\r\nbreak", "\ttab"] {
        assert_ok(&region(value, &b64(value)).send(addr).await, 30);
    }
    // Invalid padding, characters outside the alphabet, not UTF-8.
    for bad in [
        "=?base64?SGVsbG8?=",
        "=?base64?SGVs!!!bG8=?=",
        "=?base64?SGVsbG8==?=",
        "=?base64?/w==?=",
    ] {
        assert_error(&region("Hello", bad).send(addr).await, 400, -32020, 30);
    }
    // Without both markers (lowercase) the value is literal.
    for literal in [
        "SGVsbG8=",
        "=?base64?SGVsbG8=",
        "SGVsbG8=?=",
        "=?BASE64?SGVsbG8=?=",
    ] {
        assert_ok(&region(literal, literal).send(addr).await, 30);
    }
    // A literal is not decoded, so it does not match the decoded text.
    assert_error(
        &region("Hello", "SGVsbG8=").send(addr).await,
        400,
        -32020,
        30,
    );
    f.handle.close().await;
}

// ---------------------------------------------------------------- statuses

#[tokio::test]
async fn modern_error_statuses() {
    let f = Fixture::start(sessions()).await;
    let addr = f.addr();

    // -32602: unknown tool, resource not found.
    assert_error(
        &Modern::call(40, "no_such_tool", json!({})).send(addr).await,
        400,
        -32602,
        40,
    );
    let error = assert_error(
        &Modern::new(41, "resources/read", json!({"uri": "test://missing"}))
            .send(addr)
            .await,
        400,
        -32602,
        41,
    );
    assert_eq!(error["data"]["uri"], "test://missing");

    // -32021: a capability the request did not declare.
    let error = assert_error(
        &Modern::call(42, "needs_sampling", json!({}))
            .send(addr)
            .await,
        400,
        -32021,
        42,
    );
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    // Declared: served.
    let r = Modern::call(43, "needs_sampling", json!({}))
        .body(|b| b["params"]["_meta"][CLIENT_CAPABILITIES] = json!({"sampling": {}}))
        .send(addr)
        .await;
    assert_eq!(tool_text(&assert_ok(&r, 43)), "sampled");

    // -32601: unknown and removed methods are 404 with the JSON-RPC body.
    for (id, method) in [
        (44, "unknown/method"),
        (45, "initialize"),
        (46, "ping"),
        (47, "logging/setLevel"),
        (48, "resources/subscribe"),
        (49, "resources/unsubscribe"),
    ] {
        let params = match method {
            "logging/setLevel" => json!({"level": "info"}),
            "resources/subscribe" | "resources/unsubscribe" => json!({"uri": "test://static"}),
            _ => json!({}),
        };
        let r = Modern::new(id, method, params).send(addr).await;
        assert_error(&r, 404, -32601, id);
        assert_eq!(r.header("mcp-session-id"), None);
    }

    // A tool execution error is a result: 200.
    let r = Modern::call(50, "fails", json!({})).send(addr).await;
    let result = assert_ok(&r, 50);
    assert_eq!(result["isError"], true);

    // Discover answers 200 with its own envelope.
    let r = Modern::new(51, "server/discover", json!({}))
        .send(addr)
        .await;
    assert_eq!(assert_ok(&r, 51)["supportedVersions"], json!([MODERN]));
    f.handle.close().await;
}

#[tokio::test]
async fn modern_messages_are_not_batched_and_notifications_are_202() {
    let f = Fixture::start(sessions()).await;
    let addr = f.addr();
    let one = Modern::new(60, "tools/list", json!({}));
    let batch = Modern {
        body: json!([one.body, Modern::new(61, "tools/list", json!({})).body]),
        headers: one.headers.clone(),
    };
    let r = batch.send(addr).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], -32600);

    // A notification carrying the claim: accepted, nothing to answer.
    let note = Modern::new(0, "notifications/cancelled", json!({"requestId": 1}))
        .body(|b| {
            b.as_object_mut().expect("object").remove("id");
        })
        .without("Mcp-Name");
    let r = note.send(addr).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert!(r.body.is_empty());
    f.handle.close().await;
}

// ---------------------------------------------------------------- streams

#[tokio::test]
async fn modern_responses_are_json_or_sse_per_request() {
    let f = Fixture::start(sessions()).await;
    let addr = f.addr();
    let slow = |id: i64| {
        Modern::call(id, "slow", json!({"steps": 3}))
            .body(|b| b["params"]["_meta"]["progressToken"] = json!(format!("p{id}")))
    };

    // Accepting SSE: progress on the request's own stream, then the result.
    let mut s = slow(70).open(addr).await;
    assert_eq!(s.status, 200);
    assert_eq!(s.header("content-type"), Some("text/event-stream"));
    assert_eq!(s.header("x-accel-buffering"), Some("no"));
    assert_eq!(s.header("mcp-session-id"), None);
    let mut progress = Vec::new();
    let result = loop {
        let event = s.next_event().await.expect("an event before the end");
        if event["method"] == "notifications/progress" {
            assert_eq!(event["params"]["progressToken"], "p70");
            progress.push(event["params"]["progress"].as_f64().expect("progress"));
        } else {
            break event;
        }
    };
    assert_eq!(progress, vec![1.0, 2.0, 3.0]);
    assert_eq!(result["id"], 70);
    assert_eq!(result["result"]["resultType"], "complete");
    assert_eq!(tool_text(&result["result"]), "done 3");
    assert_eq!(s.next_event().await, None, "the response ends the stream");

    // Accepting only JSON: no progress, a plain JSON response.
    let mut s = slow(71)
        .header("Accept", "application/json")
        .open(addr)
        .await;
    assert_eq!(s.status, 200);
    assert_eq!(s.header("content-type"), Some("application/json"));
    assert_eq!(s.header("x-accel-buffering"), None);
    let body = s.body_json().await;
    assert_eq!(body["id"], 71);
    assert_eq!(tool_text(&body["result"]), "done 3");

    // A call that sends nothing first is JSON even when SSE is accepted.
    let r = Modern::call(72, "echo", json!({"text": "plain"}))
        .send(addr)
        .await;
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(tool_text(&assert_ok(&r, 72)), "plain");
    f.handle.close().await;
}

/// A listen delivers nothing but notifications before its end, so a POST
/// that accepts only JSON could never be answered: 406 at once, never held
/// open (found by the `http_request` fuzz target as a request that hung).
#[tokio::test]
async fn a_listen_accepting_only_json_is_406() {
    let f = Fixture::start(sessions()).await;
    let addr = f.addr();
    let listen = |id: i64| {
        Modern::new(
            id,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
    };
    let r = guard(
        "a JSON-only listen",
        listen(80).header("Accept", "application/json").send(addr),
    )
    .await;
    let error = assert_error(&r, 406, -32600, 80);
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("text/event-stream")),
        "{error}"
    );
    // Accepting event streams, the same listen is acknowledged on a stream.
    let mut s = listen(81).open(addr).await;
    assert_eq!(s.status, 200);
    assert_eq!(s.header("content-type"), Some("text/event-stream"));
    let ack = guard("the acknowledgement", s.next_event()).await;
    assert!(ack.is_some(), "an acknowledgement on the listen stream");
    drop(s);
    f.handle.close().await;
}

#[tokio::test]
async fn closing_the_response_cancels_a_modern_call() {
    let mut f = Fixture::start(sessions()).await;
    let addr = f.addr();

    // An event stream already carrying progress: the client closes it.
    let mut s = Modern::call(80, "ticker", json!({}))
        .body(|b| b["params"]["_meta"]["progressToken"] = json!("t80"))
        .header("Connection", "keep-alive")
        .open(addr)
        .await;
    assert_eq!(s.header("content-type"), Some("text/event-stream"));
    f.wait_event("ticker started").await;
    let first = s.next_event().await.expect("progress");
    assert_eq!(first["method"], "notifications/progress");
    drop(s);
    f.wait_event("ticker ended cancelled=true").await;

    // A pending response that has sent nothing yet: the client leaves.
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    let block = Modern::call(81, "block", json!({})).header("Connection", "keep-alive");
    tcp.write_all(&block.bytes(addr)).await.expect("write");
    f.wait_event("block started").await;
    drop(tcp);
    f.wait_event("block ended cancelled=true").await;

    // The server is still fine.
    let r = Modern::call(82, "echo", json!({"text": "alive"}))
        .send(addr)
        .await;
    assert_eq!(tool_text(&assert_ok(&r, 82)), "alive");
    f.handle.close().await;
}

/// A legacy `resources/subscribe` POSTed with `Accept: application/json,
/// text/event-stream` (what every real client sends): the updates that
/// follow, long after that POST was answered, go to the session's GET
/// stream, not to the finished POST stream.
#[tokio::test]
async fn legacy_subscription_updates_outlive_the_subscribe_post() {
    let f = Fixture::start(sessions()).await;
    let addr = f.addr();
    let headers = |sid: Option<&str>| {
        let mut h = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            (
                "Accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        if let Some(sid) = sid {
            h.push(("Mcp-Session-Id".to_owned(), sid.to_owned()));
            h.push(("MCP-Protocol-Version".to_owned(), "2025-11-25".to_owned()));
        }
        h
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let r = raw(
        addr,
        &request(addr, "POST", &headers(None), &init.to_string()),
    )
    .await;
    let sid = r.header("mcp-session-id").expect("a session").to_owned();

    let get = [
        ("Accept".to_owned(), "text/event-stream".to_owned()),
        ("Mcp-Session-Id".to_owned(), sid.clone()),
    ];
    let mut stream = Stream::open(addr, &request(addr, "GET", &get, "")).await;
    assert_eq!(stream.status, 200);

    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
        "params": {"uri": "test://static"}});
    let r = raw(
        addr,
        &request(addr, "POST", &headers(Some(&sid)), &subscribe.to_string()),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"], json!({}));

    assert_eq!(f.server.notify_resource_updated("test://static").await, 1);
    let event = stream
        .next_event()
        .await
        .expect("an update on the GET stream");
    assert_eq!(event["method"], "notifications/resources/updated");
    assert_eq!(event["params"]["uri"], "test://static");
    drop(stream);
    f.handle.close().await;
}
