//! The HTTP transport over real loopback TCP: every row of the status table,
//! bad input (malformed JSON, wrong content type, oversized and unfinished
//! bodies, unfinished headers, foreign Host/Origin, foreign or expired
//! sessions), binding (IPv6, EADDRINUSE, non-loopback refusal), and
//! Streamable HTTP (progress over SSE, elicitation round trip, cancellation
//! in and across sessions, disconnect, the GET stream, draining on close).
//!
//! The client is raw HTTP/1.1 over `TcpStream`, so malformed input is really
//! malformed. Timeouts below only guard against hangs.

#![cfg(feature = "http")]

#[path = "common/raw_http.rs"]
mod raw_http;
#[path = "common/tool_events.rs"]
mod tool_events;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::transport::http::{serve_http, HttpHandle, HttpOptions, SessionOptions};
use mcp_core::{CallToolResult, Confirmation, HeaderValue, InvokeContext, McpServer, McpToolDef};
use raw_http::{parse_response, raw, Resp, Stream};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
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

// ---------------------------------------------------------------- fixture

fn header_json(v: &HeaderValue) -> Value {
    match v {
        HeaderValue::One(s) => json!(s),
        HeaderValue::Many(vs) => json!(vs),
    }
}

fn build_server(events: Events) -> McpServer {
    let any = json!({"type": "object"});
    let e1 = Arc::clone(&events);
    let e2 = Arc::clone(&events);
    let e3 = Arc::clone(&events);
    McpServer::builder()
        .server_info("http-test", "1.0.0")
        .tool(McpToolDef::new(
            "echo",
            "echo",
            any.clone(),
            |args: Map<String, Value>, _ctx: InvokeContext| async move {
                CallToolResult::text(args.get("text").and_then(Value::as_str).unwrap_or(""))
            },
        ))
        .tool(McpToolDef::new(
            "headers",
            "the transport metadata this call saw",
            any.clone(),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                let headers: Map<String, Value> = ctx
                    .headers()
                    .iter()
                    .map(|(k, v)| (k.clone(), header_json(v)))
                    .collect();
                CallToolResult::text(
                    json!({"headers": headers, "remote": ctx.remote_addr()}).to_string(),
                )
            },
        ))
        .tool(McpToolDef::new(
            "slow",
            "steps with progress",
            any.clone(),
            |args: Map<String, Value>, ctx: InvokeContext| async move {
                let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
                let delay = args.get("delay_ms").and_then(Value::as_u64).unwrap_or(20);
                for i in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    ctx.report_progress(i as f64, Some(steps as f64), Some("step"))
                        .await;
                }
                CallToolResult::text(format!("done {steps}"))
            },
        ))
        .tool(McpToolDef::new(
            "block",
            "runs until cancelled",
            any.clone(),
            move |_args: Map<String, Value>, ctx: InvokeContext| {
                let events = Arc::clone(&e1);
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
        .tool(McpToolDef::new(
            "finite",
            "runs a while, then answers",
            any.clone(),
            move |_args: Map<String, Value>, ctx: InvokeContext| {
                let events = Arc::clone(&e2);
                async move {
                    let _report = EndReport {
                        name: "finite",
                        ctx: ctx.clone(),
                        events: Arc::clone(&events),
                    };
                    send_event(&events, "finite started".into());
                    tokio::time::sleep(Duration::from_millis(400)).await;
                    CallToolResult::text("finished")
                }
            },
        ))
        .tool(McpToolDef::new(
            "confirm",
            "asks the user",
            any,
            move |_args: Map<String, Value>, ctx: InvokeContext| {
                let events = Arc::clone(&e3);
                async move {
                    send_event(
                        &events,
                        format!("confirm elicitation={}", ctx.elicitation().is_some()),
                    );
                    match ctx.confirm("Proceed?").await {
                        Confirmation::Accepted => CallToolResult::text("confirmed"),
                        Confirmation::CannotAsk(why) => {
                            CallToolResult::error(format!("not confirmed: cannot ask ({why})"))
                        }
                        Confirmation::Declined | Confirmation::Cancelled => {
                            CallToolResult::error("not confirmed")
                        }
                    }
                }
            },
        ))
        .build()
        .expect("valid server")
}

struct Fixture {
    handle: HttpHandle,
    events: mpsc::UnboundedReceiver<String>,
}

impl Fixture {
    async fn start(options: HttpOptions) -> Self {
        let (tx, events) = mpsc::unbounded_channel();
        let server = build_server(Arc::new(Mutex::new(tx)));
        let handle = serve_http(server, options).await.expect("serve_http");
        Self { handle, events }
    }

    fn addr(&self) -> SocketAddr {
        self.handle.local_addr()
    }

    /// The next tool event, skipping none.
    async fn event(&mut self) -> String {
        guard("tool event", self.events.recv())
            .await
            .expect("event channel open")
    }

    /// Waits for a specific tool event, skipping others.
    async fn wait_event(&mut self, wanted: &str) {
        loop {
            if self.event().await == wanted {
                return;
            }
        }
    }
}

fn sessions() -> HttpOptions {
    HttpOptions::new().sessions(SessionOptions::default())
}

// ---------------------------------------------------------------- raw client

/// Builds a request. A `host` header in `headers` replaces the default one.
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Vec<u8> {
    let mut out = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        out.push_str(&format!("Host: {addr}\r\n"));
    }
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

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT_BOTH: (&str, &str) = ("Accept", "application/json, text/event-stream");

async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Resp {
    let mut h = vec![JSON];
    h.extend_from_slice(headers);
    let resp = raw(addr, &request(addr, "POST", "/mcp", &h, &body.to_string())).await;
    trace(headers, body, &resp);
    resp
}

/// Records a JSON reply for schema validation when `MCP_TRACE_DIR` is set,
/// under the revision the request's header (or initialize) names.
fn trace(headers: &[(&str, &str)], body: &Value, resp: &Resp) {
    let is_json = resp
        .header("content-type")
        .is_some_and(|c| c.starts_with("application/json"));
    let Ok(reply) = serde_json::from_slice::<Value>(&resp.body) else {
        return;
    };
    if !is_json {
        return;
    }
    let revision = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("mcp-protocol-version"))
        .map(|(_, v)| (*v).to_owned())
        .or_else(|| {
            body.pointer("/params/protocolVersion")
                .and_then(Value::as_str)
                .map(|v| mcp_core::protocol::negotiate_version(Some(v)).to_owned())
        })
        .unwrap_or_else(|| mcp_core::protocol::LATEST_PROTOCOL_VERSION.to_owned());
    mcp_core::testing::trace::trace_exchange(body, &reply, &revision);
}

fn init_body(capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities,
        "clientInfo": {"name": "raw-test", "version": "1"}}})
}

fn call(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

fn call_with_progress(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": args, "_meta": {"progressToken": format!("p{id}")}}})
}

/// Initializes a session and returns its id.
async fn open_session(addr: SocketAddr, extra: &[(&str, &str)], capabilities: Value) -> String {
    let r = post(addr, extra, &init_body(capabilities)).await;
    assert_eq!(
        r.status,
        200,
        "initialize: {:?}",
        String::from_utf8_lossy(&r.body)
    );
    let id = r.header("mcp-session-id").expect("session id").to_owned();
    let mut h = vec![("Mcp-Session-Id", id.as_str())];
    h.extend_from_slice(extra);
    let note = post(
        addr,
        &h,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(note.status, 202);
    id
}

fn tool_text(reply: &Value) -> String {
    reply
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no tool text in {reply}"))
        .to_owned()
}

/// A POST whose response is read incrementally.
async fn open_post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Stream {
    let mut h = vec![JSON];
    h.extend_from_slice(headers);
    Stream::open(addr, &request(addr, "POST", "/mcp", &h, &body.to_string())).await
}

// ---------------------------------------------------------------- status table

#[tokio::test]
async fn request_gets_200_json_and_notification_202() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let r = post(f.addr(), &[], &init_body(json!({}))).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["result"]["serverInfo"]["name"], "http-test");
    assert_eq!(r.header("mcp-session-id"), None, "stateless by default");

    let r = post(
        f.addr(),
        &[],
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());

    // A response nobody waits for is a message like any other: 202.
    let r = post(
        f.addr(),
        &[],
        &json!({"jsonrpc": "2.0", "id": "srv-9", "result": {}}),
    )
    .await;
    assert_eq!(r.status, 202);

    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": "hi"}))).await;
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()), "hi");
    f.handle.close().await;
}

#[tokio::test]
async fn malformed_json_is_400_parse_error() {
    let f = Fixture::start(HttpOptions::new()).await;
    for body in ["{not json", "", "\u{1}", "[1,"] {
        let r = raw(f.addr(), &request(f.addr(), "POST", "/mcp", &[JSON], body)).await;
        assert_eq!(r.status, 400, "body {body:?}");
        assert_eq!(r.error_code(), -32700);
        assert_eq!(r.json()["id"], Value::Null);
    }
    // Valid JSON that is not a JSON-RPC message: 400 with -32600.
    let r = post(f.addr(), &[], &json!({"jsonrpc": "2.0"})).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), -32600);
    let r = post(f.addr(), &[], &json!([])).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), -32600);
    f.handle.close().await;
}

#[tokio::test]
async fn wrong_content_type_is_415() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = call(1, "echo", json!({"text": "x"})).to_string();
    for ct in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let headers: Vec<(&str, &str)> = ct.map(|c| ("Content-Type", c)).into_iter().collect();
        let r = raw(
            f.addr(),
            &request(f.addr(), "POST", "/mcp", &headers, &body),
        )
        .await;
        assert_eq!(r.status, 415, "content type {ct:?}");
        assert_eq!(r.error_code(), -32600);
    }
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "POST",
            "/mcp",
            &[("Content-Type", "Application/JSON; charset=utf-8")],
            &body,
        ),
    )
    .await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

#[tokio::test]
async fn wrong_path_or_method_is_404_method_not_found() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = call(1, "echo", json!({"text": "x"})).to_string();
    let r = raw(
        f.addr(),
        &request(f.addr(), "POST", "/other?x=1", &[JSON], &body),
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code(), -32601);
    let message = r.json()["error"]["message"]
        .as_str()
        .expect("message")
        .to_owned();
    assert!(
        message.starts_with("Not found: POST /other?x=1"),
        "{message}"
    );
    for method in ["PUT", "PATCH", "OPTIONS"] {
        let r = raw(f.addr(), &request(f.addr(), method, "/mcp", &[JSON], &body)).await;
        assert_eq!(r.status, 404, "{method}");
        assert_eq!(
            r.json()["error"]["message"],
            format!("Not found: {method} /mcp")
        );
    }
    // GET and DELETE exist only with sessions.
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream")],
            "",
        ),
    )
    .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("POST"));
    let r = raw(f.addr(), &request(f.addr(), "DELETE", "/mcp", &[], "")).await;
    assert_eq!(r.status, 405);
    f.handle.close().await;
}

#[tokio::test]
async fn foreign_host_or_origin_is_403_before_routing() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = call(1, "echo", json!({"text": "x"})).to_string();
    let port = f.addr().port().to_string();
    let rebinding = [
        "evil.example.com",
        "localhost.evil.example.com",
        "127.0.0.1.nip.io",
        "0.0.0.0",
        "[::ffff:7f00:1]:80x",
    ];
    for host in rebinding {
        let host = format!("{host}:{port}");
        let r = raw(
            f.addr(),
            &request(f.addr(), "POST", "/mcp", &[("Host", &host), JSON], &body),
        )
        .await;
        assert_eq!(r.status, 403, "host {host}");
        assert_eq!(r.error_code(), -32600);
        assert_eq!(
            r.json()["error"]["message"],
            "Forbidden: host/origin not allowed"
        );
    }
    // Guard before routing: a foreign host on a wrong path is still 403.
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "GET",
            "/nope",
            &[("Host", "evil.example.com")],
            "",
        ),
    )
    .await;
    assert_eq!(r.status, 403);
    for origin in [
        "http://evil.example.com",
        "null",
        "http://localhost.evil.example.com:80",
        "file://",
    ] {
        let r = raw(
            f.addr(),
            &request(f.addr(), "POST", "/mcp", &[("Origin", origin), JSON], &body),
        )
        .await;
        assert_eq!(r.status, 403, "origin {origin}");
    }
    // Loopback names and origins pass.
    for (host, origin) in [
        (format!("localhost:{port}"), "http://localhost:5173"),
        (format!("127.0.0.1:{port}"), "https://127.0.0.1"),
        (format!("[::1]:{port}"), "http://[::1]:3000"),
    ] {
        let r = raw(
            f.addr(),
            &request(
                f.addr(),
                "POST",
                "/mcp",
                &[("Host", &host), ("Origin", origin), JSON],
                &body,
            ),
        )
        .await;
        assert_eq!(r.status, 200, "host {host} origin {origin}");
    }
    f.handle.close().await;

    // Widened deliberately.
    let f = Fixture::start(
        HttpOptions::stateless()
            .allowed_hosts(["mcp.example.com"])
            .allowed_origins(["https://app.example.com"]),
    )
    .await;
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "POST",
            "/mcp",
            &[
                ("Host", "MCP.example.com:443"),
                ("Origin", "https://app.example.com"),
                JSON,
            ],
            &body,
        ),
    )
    .await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

#[tokio::test]
async fn authorize_false_is_401() {
    let f = Fixture::start(HttpOptions::stateless().authorize(|req| {
        req.headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            == Some("Bearer good")
    }))
    .await;
    let body = call(1, "echo", json!({"text": "x"}));
    let r = post(f.addr(), &[], &body).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.error_code(), -32600);
    assert_eq!(r.json()["error"]["message"], "Unauthorized");
    let r = post(f.addr(), &[("Authorization", "Bearer bad")], &body).await;
    assert_eq!(r.status, 401);
    let r = post(f.addr(), &[("Authorization", "Bearer good")], &body).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;

    // Asynchronous; a panicking check counts as a refusal.
    let f = Fixture::start(HttpOptions::stateless().authorize_async(|req| {
        let token = req.headers.get("x-token").map(|v| v.as_bytes().to_vec());
        async move {
            tokio::task::yield_now().await;
            match token.as_deref() {
                Some(b"boom") => panic!("authorize blew up"),
                Some(t) => t == b"ok",
                None => false,
            }
        }
    }))
    .await;
    assert_eq!(
        post(f.addr(), &[("X-Token", "ok")], &body).await.status,
        200
    );
    assert_eq!(
        post(f.addr(), &[("X-Token", "no")], &body).await.status,
        401
    );
    assert_eq!(
        post(f.addr(), &[("X-Token", "boom")], &body).await.status,
        401
    );
    assert_eq!(
        post(f.addr(), &[("X-Token", "ok")], &body).await.status,
        200
    );
    f.handle.close().await;
}

#[tokio::test]
async fn allow_request_replaces_the_guard() {
    let f = Fixture::start(
        HttpOptions::stateless().allow_request(|origin, host, _req| {
            origin.is_none() && host == Some("anything.example")
        }),
    )
    .await;
    let body = call(1, "echo", json!({"text": "x"})).to_string();
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "POST",
            "/mcp",
            &[("Host", "anything.example"), JSON],
            &body,
        ),
    )
    .await;
    assert_eq!(r.status, 200);
    let r = raw(f.addr(), &request(f.addr(), "POST", "/mcp", &[JSON], &body)).await;
    assert_eq!(r.status, 403, "loopback Host no longer suffices");
    f.handle.close().await;
}

/// A panicking hook answers an HTTP error; the connection is not dropped
/// without a response, and the server goes on serving.
#[tokio::test]
async fn panicking_hooks_answer_an_http_error() {
    let body = call(1, "echo", json!({"text": "x"})).to_string();
    let f = Fixture::start(
        HttpOptions::stateless().allow_request(|_origin, host, _req| {
            if host == Some("boom.example") {
                panic!("allow_request blew up");
            }
            true
        }),
    )
    .await;
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "POST",
            "/mcp",
            &[("Host", "boom.example"), JSON],
            &body,
        ),
    )
    .await;
    assert_eq!(r.status, 403, "a panicking allow_request refuses");
    let r = raw(f.addr(), &request(f.addr(), "POST", "/mcp", &[JSON], &body)).await;
    assert_eq!(r.status, 200, "and the server goes on");
    f.handle.close().await;

    let f = Fixture::start(HttpOptions::stateless().principal(|req| {
        if req.headers.contains_key("x-boom") {
            panic!("principal blew up");
        }
        None
    }))
    .await;
    let r = raw(
        f.addr(),
        &request(f.addr(), "POST", "/mcp", &[("X-Boom", "1"), JSON], &body),
    )
    .await;
    assert_eq!(r.status, 500, "a panicking principal hook is a 500");
    assert_eq!(r.json()["error"]["code"], -32603, "{}", r.text());
    let r = raw(f.addr(), &request(f.addr(), "POST", "/mcp", &[JSON], &body)).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

// ---------------------------------------------------------------- bodies and timeouts

#[tokio::test]
async fn declared_body_over_limit_is_413_without_reading_it() {
    let f = Fixture::start(HttpOptions::stateless().max_body_bytes(1024)).await;
    // Announce 10 MB and send none of it: the answer comes anyway.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n",
        f.addr()
    );
    let r = raw(f.addr(), head.as_bytes()).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    assert_eq!(
        r.json()["error"]["message"],
        "Request body exceeds 1024 bytes"
    );
    assert_eq!(r.header("connection"), Some("close"));
    // Exactly the limit is fine.
    let text = "a".repeat(1024 - call(1, "echo", json!({"text": ""})).to_string().len());
    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": text}))).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

#[tokio::test]
async fn chunked_body_over_limit_is_413_and_cut_off() {
    let f = Fixture::start(HttpOptions::stateless().max_body_bytes(4096)).await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        f.addr()
    );
    tcp.write_all(head.as_bytes()).await.expect("head");
    // 64 chunks of 1 KiB: the server stops at 4 KiB. Later writes may fail
    // once it has closed the connection; that is the point.
    let chunk = format!("400\r\n{}\r\n", "x".repeat(1024));
    for _ in 0..64 {
        if tcp.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let mut buf = Vec::new();
    let _ = guard("413 response", tcp.read_to_end(&mut buf)).await;
    let r = parse_response(&buf);
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    // A chunked body under the limit works.
    let body = call(1, "echo", json!({"text": "chunky"})).to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        f.addr(),
        body.len()
    );
    let r = raw(f.addr(), req.as_bytes()).await;
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()), "chunky");
    f.handle.close().await;
}

/// Sends `head`, then `body` in 64 KiB pieces with a pause between them,
/// reading nothing until all is sent (as Node's `fetch` does), then reads
/// the whole response. Any write failure (the server reset the connection
/// while the client was still sending) fails the test.
async fn send_slowly_then_read(addr: SocketAddr, head: &str, body: &[u8]) -> Resp {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(head.as_bytes()).await.expect("head");
    for (i, piece) in body.chunks(64 * 1024).enumerate() {
        tokio::time::sleep(Duration::from_millis(2)).await;
        if let Err(e) = guard("body piece", tcp.write_all(piece)).await {
            panic!("the server broke the connection at piece {i} of the body: {e}");
        }
    }
    let mut buf = Vec::new();
    guard("413 response", tcp.read_to_end(&mut buf))
        .await
        .expect("the response, not a reset");
    parse_response(&buf)
}

#[tokio::test]
async fn a_refused_body_still_sent_gets_its_413() {
    // The default limit (1 MiB) and a 3 MiB body, declared and then chunked.
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = vec![b'x'; 3 * 1024 * 1024];
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        f.addr(),
        body.len()
    );
    let r = send_slowly_then_read(f.addr(), &head, &body).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    assert_eq!(
        r.json()["error"]["message"],
        "Request body exceeds 1048576 bytes"
    );
    assert_eq!(r.header("connection"), Some("close"));

    let mut chunked = Vec::new();
    for piece in body.chunks(16 * 1024) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        f.addr()
    );
    let r = send_slowly_then_read(f.addr(), &head, &chunked).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    // The server is still fine.
    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": "alive"}))).await;
    assert_eq!(tool_text(&r.json()), "alive");
    f.handle.close().await;
}

#[tokio::test]
async fn a_client_waiting_for_100_continue_is_refused_without_sending_its_body() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    // No `100 Continue` ever comes: the refusal is the answer, at once.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 3145728\r\nExpect: 100-continue\r\n\r\n",
        f.addr()
    );
    let r = raw(f.addr(), head.as_bytes()).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    f.handle.close().await;
}

#[tokio::test]
async fn body_that_never_finishes_times_out_and_others_are_served() {
    let f = Fixture::start(HttpOptions::stateless().body_read_timeout(Duration::from_millis(300)))
        .await;
    let mut stuck = TcpStream::connect(f.addr()).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        f.addr()
    );
    stuck
        .write_all(head.as_bytes())
        .await
        .expect("partial body");
    // Meanwhile another client is served.
    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": "other"}))).await;
    assert_eq!(tool_text(&r.json()), "other");
    // The stuck one gets 408 and its connection is closed (read_to_end ends).
    let mut buf = Vec::new();
    guard("408 and close", stuck.read_to_end(&mut buf))
        .await
        .expect("read");
    let r = parse_response(&buf);
    assert_eq!(r.status, 408);
    assert_eq!(r.header("connection"), Some("close"));
    f.handle.close().await;
}

#[tokio::test]
async fn headers_that_never_finish_are_dropped() {
    let f =
        Fixture::start(HttpOptions::stateless().header_read_timeout(Duration::from_millis(300)))
            .await;
    let mut loris = TcpStream::connect(f.addr()).await.expect("connect");
    loris
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
        .await
        .expect("partial head");
    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": "served"}))).await;
    assert_eq!(tool_text(&r.json()), "served");
    // The slow client is disconnected (EOF or reset), not kept forever.
    let mut buf = Vec::new();
    let _ = guard("slow-loris close", loris.read_to_end(&mut buf)).await;
    assert!(
        buf.is_empty() || buf.starts_with(b"HTTP/1.1 408"),
        "unexpected bytes: {:?}",
        String::from_utf8_lossy(&buf)
    );
    f.handle.close().await;
}

#[tokio::test]
async fn a_head_trickled_forever_is_dropped_even_with_a_long_keep_alive() {
    // Keep-alive far beyond the hang guard: only the header-read limit can
    // end this connection, and the client keeps sending bytes all along.
    let f = Fixture::start(
        HttpOptions::stateless()
            .keep_alive_timeout(Duration::from_secs(600))
            .header_read_timeout(Duration::from_millis(300)),
    )
    .await;
    let loris = TcpStream::connect(f.addr()).await.expect("connect");
    let (mut rd, mut wr) = loris.into_split();
    let trickle = tokio::spawn(async move {
        wr.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .expect("head start");
        let mut sent = 0usize;
        while wr.write_all(b"X-Slow: 1\r\n").await.is_ok() {
            sent += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        sent
    });
    let mut buf = Vec::new();
    let _ = guard("trickled head dropped", rd.read_to_end(&mut buf)).await;
    assert!(
        buf.is_empty() || buf.starts_with(b"HTTP/1.1 408"),
        "unexpected bytes: {:?}",
        String::from_utf8_lossy(&buf)
    );
    // Its writes then fail: the server closed the socket, not just stopped reading.
    let sent = guard("trickle ends", trickle).await.expect("trickle task");
    assert!(
        sent > 0,
        "the client sent header lines before it was dropped"
    );
    // Other clients are served all along.
    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": "served"}))).await;
    assert_eq!(tool_text(&r.json()), "served");
    f.handle.close().await;
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed() {
    let f = Fixture::start(HttpOptions::stateless().keep_alive_timeout(Duration::from_millis(200)))
        .await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(1, "echo", json!({"text": "k"})).to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        f.addr(),
        body.len()
    );
    tcp.write_all(req.as_bytes()).await.expect("request");
    // One keep-alive response, then the server closes the idle connection.
    let mut buf = Vec::new();
    guard("idle close", tcp.read_to_end(&mut buf))
        .await
        .expect("read");
    let r = parse_response(&buf);
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

#[tokio::test]
async fn connections_over_the_limit_are_closed() {
    let mut f = Fixture::start(
        HttpOptions::stateless()
            .max_connections(1)
            .keep_alive_timeout(Duration::from_secs(30)),
    )
    .await;
    // The first connection is busy (its call runs): not idle, so not reaped.
    let first = open_post_no_wait(f.addr(), &[], &call(1, "block", json!({}))).await;
    f.wait_event("block started").await;
    let body = call(2, "echo", json!({"text": "2"})).to_string();
    // A second one is closed at once.
    let mut second = TcpStream::connect(f.addr()).await.expect("connect");
    let _ = second
        .write_all(&request(f.addr(), "POST", "/mcp", &[JSON], &body))
        .await;
    let mut buf = Vec::new();
    let _ = guard("refused connection", second.read_to_end(&mut buf)).await;
    assert!(buf.is_empty(), "got {:?}", String::from_utf8_lossy(&buf));
    drop(first);
    f.handle.close().await;
}

#[tokio::test]
async fn over_the_concurrency_limit_is_503_busy() {
    let mut f = Fixture::start(HttpOptions::stateless().max_concurrent_requests(1)).await;
    let addr = f.addr();
    let blocked = open_post_no_wait(addr, &[], &call(1, "block", json!({}))).await;
    f.wait_event("block started").await;
    let r = post(addr, &[], &call(2, "echo", json!({"text": "x"}))).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.error_code(), -32000);
    assert_eq!(r.json()["id"], 2);
    assert_eq!(r.header("retry-after"), Some("1"));
    // Notifications are never refused.
    let r = post(
        addr,
        &[],
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(r.status, 202);
    drop(blocked);
    f.wait_event("block ended cancelled=true").await;
    // The slot is free again.
    let r = post(addr, &[], &call(3, "echo", json!({"text": "y"}))).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

#[tokio::test]
async fn batch_entries_over_the_per_connection_limit_are_refused_inline() {
    let f = Fixture::start(HttpOptions::stateless().max_requests_per_connection(2)).await;
    let batch = json!([
        call(1, "slow", json!({"steps": 2})),
        call(2, "slow", json!({"steps": 2})),
        call(3, "echo", json!({"text": "third"})),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]);
    let r = post(f.addr(), &[], &batch).await;
    assert_eq!(r.status, 200);
    let replies = r.json();
    let replies = replies.as_array().expect("batch reply");
    assert_eq!(replies.len(), 3);
    assert_eq!(tool_text(&replies[0]), "done 2");
    assert_eq!(tool_text(&replies[1]), "done 2");
    assert_eq!(replies[2]["error"]["code"], -32000);
    f.handle.close().await;
}

#[tokio::test]
async fn requests_over_the_per_principal_limit_are_refused_for_that_principal_only() {
    let f = Fixture::start(
        HttpOptions::stateless()
            .max_requests_per_principal(2)
            .principal(|req| {
                req.headers
                    .get("x-user")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            }),
    )
    .await;
    let batch = json!([
        call(1, "slow", json!({"steps": 2})),
        call(2, "slow", json!({"steps": 2})),
        call(3, "echo", json!({"text": "third"})),
    ]);
    let r = post(f.addr(), &[("X-User", "alice")], &batch).await;
    let replies = r.json();
    let replies = replies.as_array().expect("batch reply");
    assert_eq!(tool_text(&replies[0]), "done 2");
    assert_eq!(tool_text(&replies[1]), "done 2");
    assert_eq!(replies[2]["error"]["code"], -32000, "{}", replies[2]);
    assert!(
        replies[2]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("for this principal")),
        "{}",
        replies[2]
    );
    // Without a principal only the other limits apply: all three run.
    let r = post(f.addr(), &[], &batch).await;
    let replies = r.json();
    let replies = replies.as_array().expect("batch reply");
    assert_eq!(tool_text(&replies[2]), "third");
    f.handle.close().await;
}

// ---------------------------------------------------------------- metadata

#[tokio::test]
async fn headers_and_peer_address_reach_the_tool() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = call(1, "headers", json!({})).to_string();
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "POST",
            "/mcp",
            &[
                JSON,
                ("X-Tenant", "acme"),
                ("X-Role", "a"),
                ("x-role", "b"),
                ("Authorization", "Bearer t"),
            ],
            &body,
        ),
    )
    .await;
    let seen: Value = serde_json::from_str(&tool_text(&r.json())).expect("tool JSON");
    assert_eq!(seen["headers"]["x-tenant"], "acme");
    assert_eq!(seen["headers"]["x-role"], json!(["a", "b"]));
    assert_eq!(seen["headers"]["authorization"], "Bearer t");
    assert_eq!(seen["headers"]["content-type"], "application/json");
    let remote = seen["remote"].as_str().expect("remote address");
    let remote: SocketAddr = remote.parse().expect("a socket address");
    assert!(remote.ip().is_loopback());
    f.handle.close().await;
}

#[tokio::test]
async fn unsupported_protocol_version_is_400() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = call(1, "echo", json!({"text": "v"}));
    let r = post(f.addr(), &[("MCP-Protocol-Version", "1999-01-01")], &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), -32600);
    let r = post(f.addr(), &[("MCP-Protocol-Version", "2025-06-18")], &body).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

// ---------------------------------------------------------------- binding

#[tokio::test]
async fn address_in_use_is_an_error_value() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port();
    let (tx, _rx) = mpsc::unbounded_channel();
    let err = serve_http(
        build_server(Arc::new(Mutex::new(tx))),
        HttpOptions::new().port(port),
    )
    .await
    .expect_err("the port is taken");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
}

#[tokio::test]
async fn non_loopback_bind_needs_authorize_or_allow_request() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let server = build_server(Arc::new(Mutex::new(tx)));
    let err = serve_http(server.clone(), HttpOptions::new().host("0.0.0.0"))
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        err.to_string()
            .contains("refusing to bind non-loopback host"),
        "{err}"
    );
    let handle = serve_http(
        server,
        HttpOptions::new().host("0.0.0.0").authorize(|_| false),
    )
    .await
    .expect("allowed with authorize");
    handle.close().await;
}

#[tokio::test]
async fn ipv6_loopback_bind() {
    // Skip only when this machine has no IPv6 loopback at all.
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback here; skipping");
        return;
    }
    for host in ["::1", "[::1]"] {
        let (tx, _rx) = mpsc::unbounded_channel();
        let handle = serve_http(
            build_server(Arc::new(Mutex::new(tx))),
            HttpOptions::stateless().host(host),
        )
        .await
        .expect("bind ::1");
        assert_eq!(handle.url(), format!("http://[::1]:{}/mcp", handle.port()));
        let addr = handle.local_addr();
        let r = post(addr, &[], &call(1, "echo", json!({"text": "v6"}))).await;
        assert_eq!(r.status, 200);
        assert_eq!(tool_text(&r.json()), "v6");
        handle.close().await;
    }
}

#[tokio::test]
async fn url_and_port_of_an_ephemeral_bind() {
    let f = Fixture::start(HttpOptions::stateless().path("api/mcp")).await;
    assert_ne!(f.handle.port(), 0);
    assert_eq!(
        f.handle.url(),
        format!("http://127.0.0.1:{}/api/mcp", f.handle.port())
    );
    let body = call(1, "echo", json!({"text": "p"})).to_string();
    let r = raw(
        f.addr(),
        &request(f.addr(), "POST", "/api/mcp", &[JSON], &body),
    )
    .await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

// ---------------------------------------------------------------- sessions

#[tokio::test]
async fn session_lifecycle() {
    let f = Fixture::start(sessions()).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    assert_eq!(sid.len(), 64);
    assert!(sid.bytes().all(|b| b.is_ascii_hexdigit()));
    let other = open_session(f.addr(), &[], json!({})).await;
    assert_ne!(sid, other);

    let body = call(1, "echo", json!({"text": "s"}));
    // Missing id: 400.
    let r = post(f.addr(), &[], &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), -32600);
    assert!(r.json()["error"]["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("Bad Request: Mcp-Session-Id header required")));
    // Guessed id: 404.
    let guessed = "0".repeat(64);
    for bad in [guessed.as_str(), "x", &sid[..63]] {
        let r = post(f.addr(), &[("Mcp-Session-Id", bad)], &body).await;
        assert_eq!(r.status, 404, "id {bad}");
        assert!(r.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Session not found")));
    }
    let r = post(f.addr(), &[("Mcp-Session-Id", &sid)], &body).await;
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()), "s");

    // DELETE: 204, then the session is gone; DELETE again or of a guess: 404.
    let del = |id: &str| request(f.addr(), "DELETE", "/mcp", &[("Mcp-Session-Id", id)], "");
    assert_eq!(raw(f.addr(), &del(&sid)).await.status, 204);
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &sid)], &body)
            .await
            .status,
        404
    );
    assert_eq!(raw(f.addr(), &del(&sid)).await.status, 404);
    assert_eq!(raw(f.addr(), &del(&guessed)).await.status, 404);
    assert_eq!(
        raw(f.addr(), &request(f.addr(), "DELETE", "/mcp", &[], ""))
            .await
            .status,
        400
    );
    // The other session is untouched.
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &other)], &body)
            .await
            .status,
        200
    );
    f.handle.close().await;
}

#[tokio::test]
async fn session_of_another_principal_is_404() {
    let f = Fixture::start(sessions()).await;
    let alice = [("Authorization", "Bearer alice")];
    let sid = open_session(f.addr(), &alice, json!({})).await;
    let body = call(1, "echo", json!({"text": "mine"}));
    let r = post(
        f.addr(),
        &[
            ("Mcp-Session-Id", &sid),
            ("Authorization", "Bearer mallory"),
        ],
        &body,
    )
    .await;
    assert_eq!(r.status, 404);
    let r = post(f.addr(), &[("Mcp-Session-Id", &sid)], &body).await;
    assert_eq!(r.status, 404, "no credentials is another principal too");
    let del = request(
        f.addr(),
        "DELETE",
        "/mcp",
        &[
            ("Mcp-Session-Id", &sid),
            ("Authorization", "Bearer mallory"),
        ],
        "",
    );
    assert_eq!(
        raw(f.addr(), &del).await.status,
        404,
        "nor can another principal end it"
    );
    let r = post(f.addr(), &[("Mcp-Session-Id", &sid), alice[0]], &body).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;

    // A custom principal function.
    let f = Fixture::start(sessions().principal(|req| {
        req.headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }))
    .await;
    let sid = open_session(f.addr(), &[("X-User", "ann")], json!({})).await;
    assert_eq!(
        post(
            f.addr(),
            &[("Mcp-Session-Id", &sid), ("X-User", "bob")],
            &body
        )
        .await
        .status,
        404
    );
    assert_eq!(
        post(
            f.addr(),
            &[("Mcp-Session-Id", &sid), ("X-User", "ann")],
            &body
        )
        .await
        .status,
        200
    );
    f.handle.close().await;
}

#[tokio::test]
async fn expired_session_is_404() {
    let f = Fixture::start(
        HttpOptions::new().sessions(SessionOptions::default().ttl(Duration::from_millis(100))),
    )
    .await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let r = post(
        f.addr(),
        &[("Mcp-Session-Id", &sid)],
        &call(1, "echo", json!({"text": "late"})),
    )
    .await;
    assert_eq!(r.status, 404);
    f.handle.close().await;
}

#[tokio::test]
async fn least_recently_used_session_is_evicted() {
    let f = Fixture::start(HttpOptions::new().sessions(SessionOptions::default().max(2))).await;
    let a = open_session(f.addr(), &[], json!({})).await;
    let b = open_session(f.addr(), &[], json!({})).await;
    let body = call(1, "echo", json!({"text": "x"}));
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &a)], &body)
            .await
            .status,
        200
    ); // a is fresher
    let c = open_session(f.addr(), &[], json!({})).await;
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &b)], &body)
            .await
            .status,
        404
    );
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &a)], &body)
            .await
            .status,
        200
    );
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &c)], &body)
            .await
            .status,
        200
    );
    f.handle.close().await;
}

#[tokio::test]
async fn get_stream_needs_sse_accept_and_a_session() {
    let f = Fixture::start(sessions()).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    let r = raw(
        f.addr(),
        &request(f.addr(), "GET", "/mcp", &[("Mcp-Session-Id", &sid)], ""),
    )
    .await;
    assert_eq!(r.status, 406);
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream")],
            "",
        ),
    )
    .await;
    assert_eq!(r.status, 400);
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream"), ("Mcp-Session-Id", "nope")],
            "",
        ),
    )
    .await;
    assert_eq!(r.status, 404);
    f.handle.close().await;
}

// ---------------------------------------------------------------- streamable HTTP

#[tokio::test]
async fn progress_streams_over_sse_then_the_result() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let mut s = open_post(
        f.addr(),
        &[ACCEPT_BOTH],
        &call_with_progress(7, "slow", json!({"steps": 3})),
    )
    .await;
    assert_eq!(s.status, 200);
    assert!(s.is_sse(), "headers: {:?}", s.headers);
    let mut progress = Vec::new();
    let result = loop {
        let event = s.next_event().await.expect("an event before the end");
        if event["method"] == "notifications/progress" {
            assert_eq!(event["params"]["progressToken"], "p7");
            progress.push(event["params"]["progress"].as_f64().expect("progress"));
        } else {
            break event;
        }
    };
    assert_eq!(progress, vec![1.0, 2.0, 3.0]);
    assert_eq!(result["id"], 7);
    assert_eq!(tool_text(&result), "done 3");
    assert_eq!(
        s.next_event().await,
        None,
        "the stream ends after the response"
    );
    f.handle.close().await;
}

#[tokio::test]
async fn a_client_without_sse_gets_plain_json() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let mut s = open_post(
        f.addr(),
        &[("Accept", "application/json")],
        &call_with_progress(8, "slow", json!({"steps": 2})),
    )
    .await;
    assert_eq!(s.status, 200);
    assert_eq!(s.header("content-type"), Some("application/json"));
    assert_eq!(tool_text(&s.body_json().await), "done 2");
    // A call that sends nothing first is plain JSON even when SSE is accepted.
    let mut s = open_post(
        f.addr(),
        &[ACCEPT_BOTH],
        &call(9, "echo", json!({"text": "plain"})),
    )
    .await;
    assert_eq!(s.header("content-type"), Some("application/json"));
    assert_eq!(tool_text(&s.body_json().await), "plain");
    f.handle.close().await;
}

#[tokio::test]
async fn elicitation_round_trip_over_sse_and_post() {
    let mut f = Fixture::start(sessions()).await;
    let caps = json!({"elicitation": {}});
    let sid = open_session(f.addr(), &[], caps.clone()).await;
    for (answer, expected) in [
        (
            json!({"action": "accept", "content": {"confirm": true}}),
            "confirmed",
        ),
        (json!({"action": "decline"}), "not confirmed"),
    ] {
        let mut s = open_post(
            f.addr(),
            &[ACCEPT_BOTH, ("Mcp-Session-Id", &sid)],
            &call(11, "confirm", json!({})),
        )
        .await;
        assert!(s.is_sse());
        let ask = s.next_event().await.expect("elicitation request");
        assert_eq!(ask["method"], "elicitation/create");
        assert_eq!(ask["params"]["message"], "Proceed?");
        let id = ask["id"].clone();
        // Another session cannot answer it.
        let other = open_session(f.addr(), &[], caps.clone()).await;
        let forged = json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"confirm": true}}});
        let r = post(f.addr(), &[("Mcp-Session-Id", &other)], &forged).await;
        assert_eq!(r.status, 202);
        // The real answer arrives as its own POST.
        let reply = json!({"jsonrpc": "2.0", "id": id, "result": answer});
        let r = post(f.addr(), &[("Mcp-Session-Id", &sid)], &reply).await;
        assert_eq!(r.status, 202);
        let result = s.next_event().await.expect("the tool result");
        assert_eq!(result["id"], 11);
        assert_eq!(tool_text(&result), expected);
        assert_eq!(s.next_event().await, None);
    }
    assert_eq!(f.event().await, "confirm elicitation=true");
    f.handle.close().await;
}

/// The default options keep legacy sessions: a 2025-era client that
/// declared elicitation in `initialize` is really asked, over the POST's
/// event stream, and its answer (its own POST) reaches the tool.
#[tokio::test]
async fn default_options_ask_a_legacy_client_that_declared_elicitation() {
    let mut f = Fixture::start(HttpOptions::new()).await;
    let sid = open_session(f.addr(), &[], json!({"elicitation": {}})).await;
    let mut s = open_post(
        f.addr(),
        &[ACCEPT_BOTH, ("Mcp-Session-Id", &sid)],
        &call(12, "confirm", json!({})),
    )
    .await;
    assert!(s.is_sse());
    let ask = s.next_event().await.expect("elicitation request");
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "Proceed?");
    let reply = json!({"jsonrpc": "2.0", "id": ask["id"].clone(),
        "result": {"action": "accept", "content": {"confirm": true}}});
    let r = post(f.addr(), &[("Mcp-Session-Id", &sid)], &reply).await;
    assert_eq!(r.status, 202);
    let result = s.next_event().await.expect("the tool result");
    assert_eq!(result["id"], 12);
    assert_eq!(tool_text(&result), "confirmed");
    assert_eq!(s.next_event().await, None);
    assert_eq!(f.event().await, "confirm elicitation=true");
    f.handle.close().await;
}

/// Explicitly stateless legacy serving forgets `initialize`: a question
/// cannot reach the client. `confirm` once ended the whole call with a
/// `-32603` from inside the tool, so clients got an internal error where
/// the tool's own fail-closed answer was due; now it says
/// `CannotAsk(SessionlessHttp)` and the tool answers, saying why.
#[tokio::test]
async fn without_sessions_confirm_lets_the_tool_answer_why_it_cannot_ask() {
    let mut f = Fixture::start(HttpOptions::stateless()).await;
    let init = post(f.addr(), &[], &init_body(json!({"elicitation": {}}))).await;
    assert_eq!(init.status, 200);
    assert_eq!(init.header("mcp-session-id"), None);
    let r = post(
        f.addr(),
        &[ACCEPT_BOTH, ("MCP-Protocol-Version", "2025-06-18")],
        &call(1, "confirm", json!({})),
    )
    .await;
    assert_eq!(r.status, 200);
    let reply = r.json();
    assert_eq!(reply["id"], 1);
    assert!(
        reply.get("error").is_none(),
        "the tool's own answer: {reply}"
    );
    assert_eq!(reply["result"]["isError"], true, "fails closed: {reply}");
    let text = tool_text(&reply);
    assert!(text.starts_with("not confirmed: cannot ask"), "{text}");
    assert!(text.contains("without sessions"), "{text}");
    assert_eq!(f.event().await, "confirm elicitation=false");
    f.handle.close().await;
}

#[tokio::test]
async fn cancel_in_the_same_session_stops_the_call() {
    let mut f = Fixture::start(sessions().cancelled_linger(Duration::from_millis(300))).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    // The call sends nothing, so the response head only comes once it ends.
    let addr = f.addr();
    let sid2 = sid.clone();
    let stream = tokio::spawn(async move {
        open_post(
            addr,
            &[ACCEPT_BOTH, ("Mcp-Session-Id", &sid2)],
            &call(21, "block", json!({})),
        )
        .await
    });
    f.wait_event("block started").await;
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 21}});
    let r = post(f.addr(), &[("Mcp-Session-Id", &sid)], &cancel).await;
    assert_eq!(r.status, 202);
    f.wait_event("block ended cancelled=true").await;
    let mut s = guard("cancelled call's response", stream)
        .await
        .expect("task");
    // No response ever follows: the stream carries nothing and ends.
    assert!(s.is_sse());
    assert_eq!(s.next_event().await, None);
    f.handle.close().await;
}

#[tokio::test]
async fn cancel_from_another_session_is_ignored() {
    let mut f = Fixture::start(sessions()).await;
    let a = open_session(f.addr(), &[], json!({})).await;
    let b = open_session(f.addr(), &[], json!({})).await;
    let addr = f.addr();
    let a2 = a.clone();
    let call_a = tokio::spawn(async move {
        post(
            addr,
            &[("Mcp-Session-Id", &a2)],
            &call(31, "finite", json!({})),
        )
        .await
    });
    f.wait_event("finite started").await;
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 31}});
    assert_eq!(
        post(addr, &[("Mcp-Session-Id", &b)], &cancel).await.status,
        202
    );
    let r = guard("call in session a", call_a).await.expect("task");
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()), "finished");
    assert_eq!(f.event().await, "finite ended cancelled=false");
    // The same request id in another session is a different request.
    let r = post(
        addr,
        &[("Mcp-Session-Id", &b)],
        &call(31, "echo", json!({"text": "b"})),
    )
    .await;
    assert_eq!(tool_text(&r.json()), "b");
    f.handle.close().await;
}

#[tokio::test]
async fn client_disconnect_cancels_the_call() {
    let mut f = Fixture::start(HttpOptions::stateless()).await;
    // Plain JSON: the response future is pending when the client leaves.
    let s = open_post_no_wait(f.addr(), &[], &call(41, "block", json!({}))).await;
    f.wait_event("block started").await;
    drop(s);
    f.wait_event("block ended cancelled=true").await;

    // SSE: the stream is open (a progress event went out) when the client leaves.
    let mut s = open_post(
        f.addr(),
        &[ACCEPT_BOTH],
        &call_with_progress(42, "slow", json!({"steps": 1000, "delay_ms": 5})),
    )
    .await;
    assert!(s.is_sse());
    assert!(s.next_event().await.is_some());
    drop(s);
    // The server is still fine.
    let r = post(f.addr(), &[], &call(43, "echo", json!({"text": "alive"}))).await;
    assert_eq!(tool_text(&r.json()), "alive");
    f.handle.close().await;
}

/// Sends a POST on a keep-alive connection (as real clients do: hyper stops
/// watching a `Connection: close` request for EOF once its body is read)
/// and returns the open connection without reading anything.
async fn open_post_no_wait(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> TcpStream {
    let mut h = vec![JSON, ("Connection", "keep-alive")];
    h.extend_from_slice(headers);
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(&request(addr, "POST", "/mcp", &h, &body.to_string()))
        .await
        .expect("write");
    tcp
}

#[tokio::test]
async fn deleting_a_session_cancels_its_calls() {
    let mut f = Fixture::start(sessions()).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    let addr = f.addr();
    let s2 = sid.clone();
    let pending = tokio::spawn(async move {
        post(
            addr,
            &[("Mcp-Session-Id", &s2)],
            &call(51, "block", json!({})),
        )
        .await
    });
    f.wait_event("block started").await;
    let r = raw(
        addr,
        &request(addr, "DELETE", "/mcp", &[("Mcp-Session-Id", &sid)], ""),
    )
    .await;
    assert_eq!(r.status, 204);
    f.wait_event("block ended cancelled=true").await;
    let r = guard("cancelled call", pending).await.expect("task");
    assert_eq!(r.status, 503);
    f.handle.close().await;
}

/// Opens an event-stream call of `slow` (progress every 20 ms, for far
/// longer than any test runs) and waits until the stream has started.
async fn open_streaming_call(addr: SocketAddr, sid: Option<&str>, id: i64) -> Stream {
    let mut h = vec![ACCEPT_BOTH];
    if let Some(sid) = sid {
        h.push(("Mcp-Session-Id", sid));
    }
    let mut s = open_post(
        addr,
        &h,
        &call_with_progress(id, "slow", json!({"steps": 100_000, "delay_ms": 20})),
    )
    .await;
    assert_eq!(s.status, 200);
    assert!(s.is_sse());
    let first = s.next_event().await.expect("a progress event");
    assert_eq!(first["method"], "notifications/progress");
    s
}

/// Reads a stream to its end and returns its last event, which must be the
/// JSON-RPC error of a call the server stopped, carrying the call's id.
async fn assert_stream_ends_with_stopped_error(s: &mut Stream, id: i64) {
    let mut last = None;
    while let Some(event) = guard("the stream's end", s.next_event()).await {
        last = Some(event);
    }
    let last = last.expect("events");
    assert_eq!(last["id"], id, "the last event answers the call: {last}");
    assert_eq!(last["error"]["code"], -32000, "{last}");
    assert_eq!(
        last["error"]["message"],
        "The session ended or the server is closing; the call was cancelled"
    );
    assert!(last.get("result").is_none(), "{last}");
}

#[tokio::test]
async fn deleting_a_session_answers_its_event_stream_calls() {
    let f = Fixture::start(sessions()).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    let mut s = open_streaming_call(f.addr(), Some(&sid), 52).await;
    let r = raw(
        f.addr(),
        &request(f.addr(), "DELETE", "/mcp", &[("Mcp-Session-Id", &sid)], ""),
    )
    .await;
    assert_eq!(r.status, 204);
    assert_stream_ends_with_stopped_error(&mut s, 52).await;
    f.handle.close().await;
}

#[tokio::test]
async fn an_evicted_session_answers_its_event_stream_calls() {
    let f = Fixture::start(HttpOptions::new().sessions(SessionOptions::default().max(1))).await;
    let a = open_session(f.addr(), &[], json!({})).await;
    let mut s = open_streaming_call(f.addr(), Some(&a), 53).await;
    // A second session evicts the first (the table holds one).
    let _b = open_session(f.addr(), &[], json!({})).await;
    assert_stream_ends_with_stopped_error(&mut s, 53).await;
    f.handle.close().await;
}

#[tokio::test]
async fn close_answers_event_stream_calls_past_the_drain_deadline() {
    for (options, with_session) in [(HttpOptions::stateless(), false), (sessions(), true)] {
        let f = Fixture::start(options.drain_timeout(Duration::from_millis(200))).await;
        let sid = if with_session {
            Some(open_session(f.addr(), &[], json!({})).await)
        } else {
            None
        };
        let mut s = open_streaming_call(f.addr(), sid.as_deref(), 54).await;
        let closing = tokio::spawn(f.handle.close());
        assert_stream_ends_with_stopped_error(&mut s, 54).await;
        guard("close", closing).await.expect("close task");
    }
}

#[tokio::test]
async fn close_answers_json_calls_past_the_drain_deadline_503() {
    let mut f =
        Fixture::start(HttpOptions::stateless().drain_timeout(Duration::from_millis(200))).await;
    let addr = f.addr();
    let pending = tokio::spawn(async move { post(addr, &[], &call(55, "block", json!({}))).await });
    f.wait_event("block started").await;
    guard("close", f.handle.close()).await;
    let r = guard("cancelled call", pending).await.expect("task");
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["id"], 55);
    assert_eq!(r.error_code(), -32000);
}

#[tokio::test]
async fn get_stream_carries_messages_of_calls_that_cannot_stream() {
    let f = Fixture::start(sessions()).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    let mut get = Stream::open(
        f.addr(),
        &request(
            f.addr(),
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &sid)],
            "",
        ),
    )
    .await;
    assert_eq!(get.status, 200);
    assert!(get.is_sse());
    // A POST that only accepts JSON: its progress goes to the GET stream.
    let r = post(
        f.addr(),
        &[("Accept", "application/json"), ("Mcp-Session-Id", &sid)],
        &call_with_progress(61, "slow", json!({"steps": 2})),
    )
    .await;
    assert_eq!(tool_text(&r.json()), "done 2");
    for expected in [1.0, 2.0] {
        let note = get.next_event().await.expect("progress on the GET stream");
        assert_eq!(note["method"], "notifications/progress");
        assert_eq!(note["params"]["progress"], expected);
    }
    // Ending the session ends the stream.
    let r = raw(
        f.addr(),
        &request(f.addr(), "DELETE", "/mcp", &[("Mcp-Session-Id", &sid)], ""),
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(get.next_event().await, None);
    f.handle.close().await;
}

#[tokio::test]
async fn close_drains_in_flight_calls_then_stops_accepting() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let addr = f.addr();
    let mut s = open_post(
        addr,
        &[ACCEPT_BOTH],
        &call_with_progress(71, "slow", json!({"steps": 5, "delay_ms": 50})),
    )
    .await;
    assert!(s.next_event().await.is_some(), "the call is running");
    let closing = tokio::spawn(f.handle.close());
    let mut last = None;
    while let Some(event) = s.next_event().await {
        last = Some(event);
    }
    assert_eq!(tool_text(&last.expect("events")), "done 5");
    guard("close", closing).await.expect("close task");
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no longer accepting"
    );
}

#[tokio::test]
async fn close_cancels_calls_past_the_drain_deadline() {
    let mut f =
        Fixture::start(HttpOptions::stateless().drain_timeout(Duration::from_millis(200))).await;
    let addr = f.addr();
    let _s = open_post_no_wait(addr, &[], &call(81, "block", json!({}))).await;
    f.wait_event("block started").await;
    let Fixture { handle, mut events } = f;
    guard("close", handle.close()).await;
    let ended = guard("block end", events.recv()).await;
    assert_eq!(ended.as_deref(), Some("block ended cancelled=true"));
}

#[tokio::test]
async fn stateless_2026_requests_need_no_session() {
    let f = Fixture::start(sessions()).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let list =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}});
    let r = post(
        f.addr(),
        &[
            ACCEPT_BOTH,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
        &list,
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
    assert!(r.json()["result"]["tools"].is_array());
    assert_eq!(r.header("mcp-session-id"), None);
    // A method 2026-07-28 removed is 404 with the JSON-RPC error in the body.
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": meta}});
    let r = post(
        f.addr(),
        &[
            ACCEPT_BOTH,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "ping"),
        ],
        &ping,
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code(), -32601);
    f.handle.close().await;
}

// ---------------------------------------------------------------- embedding

#[tokio::test]
async fn mounts_in_your_own_hyper_server() {
    use hyper::server::conn::http1;
    use hyper_util::rt::TokioIo;
    use mcp_core::McpHttpService;

    let (tx, _rx) = mpsc::unbounded_channel();
    let service = McpHttpService::new(
        build_server(Arc::new(Mutex::new(tx))),
        HttpOptions::stateless().path("/rpc"),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        // Serve two connections, then stop.
        for _ in 0..2 {
            let Ok((stream, peer)) = listener.accept().await else {
                return;
            };
            let per_conn = service.for_connection(Some(peer));
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), per_conn)
                    .await;
            });
        }
    });
    let body = call(1, "headers", json!({})).to_string();
    let r = raw(addr, &request(addr, "POST", "/rpc", &[JSON], &body)).await;
    assert_eq!(r.status, 200);
    let seen: Value = serde_json::from_str(&tool_text(&r.json())).expect("tool JSON");
    assert!(
        seen["remote"].as_str().is_some(),
        "peer address from for_connection"
    );
    let r = raw(addr, &request(addr, "POST", "/mcp", &[JSON], &body)).await;
    assert_eq!(r.status, 404, "only the configured path");
    guard("embedded server", server).await.expect("server task");
}

#[tokio::test]
async fn handle_answers_a_request_value_directly() {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use mcp_core::McpHttpService;

    let (tx, _rx) = mpsc::unbounded_channel();
    let service = McpHttpService::new(build_server(Arc::new(Mutex::new(tx))), sessions());
    let init = hyper::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(init_body(json!({})).to_string())))
        .expect("request");
    let response = service.handle(init).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("mcp-session-id"));
    assert_eq!(service.session_count(), 1);
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("infallible")
        .to_bytes();
    let reply: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(reply["result"]["serverInfo"]["name"], "http-test");
}

/// A service mounted under another path than its configured one (no
/// `.path(...)`) answers a 404 whose JSON-RPC error names both paths and
/// the fix, not a bare "not found".
#[tokio::test]
async fn mounted_under_another_path_the_404_names_both_paths_and_the_fix() {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use mcp_core::McpHttpService;

    let (tx, _rx) = mpsc::unbounded_channel();
    let service = McpHttpService::new(build_server(Arc::new(Mutex::new(tx))), HttpOptions::new());
    let req = hyper::Request::post("/api/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(init_body(json!({})).to_string())))
        .expect("request");
    let response = service.handle(req).await;
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.headers()["content-type"],
        "application/json",
        "a JSON-RPC body"
    );
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("infallible")
        .to_bytes();
    let reply: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(reply["jsonrpc"], "2.0");
    assert_eq!(reply["error"]["code"], -32601);
    let message = reply["error"]["message"].as_str().expect("message");
    assert!(message.contains("`/mcp`"), "configured path: {message}");
    assert!(message.contains("`/api/mcp`"), "requested path: {message}");
    assert!(
        message.contains("HttpOptions::new().path(\"/api/mcp\")"),
        "the fix: {message}"
    );
    assert_eq!(reply["error"]["data"]["configuredPath"], "/mcp");
    assert_eq!(reply["error"]["data"]["requestedPath"], "/api/mcp");

    // With the fix, the same request is served.
    let (tx, _rx) = mpsc::unbounded_channel();
    let fixed = McpHttpService::new(
        build_server(Arc::new(Mutex::new(tx))),
        HttpOptions::new().path("/api/mcp"),
    );
    let req = hyper::Request::post("/api/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(init_body(json!({})).to_string())))
        .expect("request");
    assert_eq!(fixed.handle(req).await.status(), 200);
}

#[cfg(feature = "tower")]
#[tokio::test]
async fn is_a_tower_service() {
    use bytes::Bytes;
    use http_body_util::Full;
    use mcp_core::McpHttpService;

    fn assert_tower<S: tower_service::Service<hyper::Request<Full<Bytes>>>>(_: &S) {}
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut service = McpHttpService::new(
        build_server(Arc::new(Mutex::new(tx))),
        HttpOptions::stateless(),
    );
    assert_tower(&service);
    let req = hyper::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            call(1, "echo", json!({"text": "t"})).to_string(),
        )))
        .expect("request");
    let response = tower_service::Service::call(&mut service, req)
        .await
        .expect("infallible");
    assert_eq!(response.status(), 200);
}
