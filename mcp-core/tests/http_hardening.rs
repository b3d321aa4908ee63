//! The HTTP transport under misbehaving clients (issue 16): byte budgets of
//! event streams, per-session subscription and per-principal session caps,
//! the stateless subscribe leak, the connection cap that reaps idle
//! connections, and half-closed sockets.
//!
//! Raw HTTP/1.1 over loopback TCP. Timeouts only guard against hangs; every
//! assertion is on what the client or the tool observes.

#![cfg(feature = "http")]

#[path = "common/raw_http.rs"]
mod raw_http;
#[path = "common/tool_events.rs"]
mod tool_events;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::transport::http::{serve_http, HttpHandle, HttpOptions, SessionOptions};
use mcp_core::{
    CallToolResult, InvokeContext, McpResourceDef, McpServer, McpToolDef, ResourceRequest,
};
use raw_http::{raw, Resp, Stream};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::mpsc;
use tool_events::{send_event, EndReport, Events};

/// Hang guard for every wait in these tests.
const GUARD: Duration = Duration::from_secs(30);

async fn guard<F: std::future::Future>(what: &str, fut: F) -> F::Output {
    match tokio::time::timeout(GUARD, fut).await {
        Ok(v) => v,
        Err(_) => panic!("hang guard: {what} did not complete within {GUARD:?}"),
    }
}

/// Reports of `flood`: how many it sent.
const FLOOD_STEPS: usize = 2000;
/// Bytes of each `flood` progress message.
const FLOOD_MESSAGE: usize = 64 * 1024;

struct Fixture {
    handle: HttpHandle,
    events: mpsc::UnboundedReceiver<String>,
    /// Progress reports `flood` made.
    flooded: Arc<AtomicUsize>,
}

fn build_server(events: Events, flooded: Arc<AtomicUsize>) -> McpServer {
    let any = json!({"type": "object"});
    let e1 = Arc::clone(&events);
    let e2 = Arc::clone(&events);
    let e3 = Arc::clone(&events);
    let e4 = Arc::clone(&events);
    McpServer::builder()
        .server_info("http-hardening", "1.0.0")
        .resource_subscriptions()
        .resource(McpResourceDef::new(
            "file:///a",
            "a",
            |_r: ResourceRequest, _ctx: InvokeContext| async { "a" },
        ))
        .tool(McpToolDef::new(
            "echo",
            "echo",
            any.clone(),
            |args: Map<String, Value>, _ctx: InvokeContext| async move {
                CallToolResult::text(args.get("text").and_then(Value::as_str).unwrap_or(""))
            },
        ))
        .tool(McpToolDef::new(
            "flood",
            "large progress reports, many of them",
            any.clone(),
            move |_args: Map<String, Value>, ctx: InvokeContext| {
                let events = Arc::clone(&e1);
                let flooded = Arc::clone(&flooded);
                async move {
                    let _report = EndReport {
                        name: "flood",
                        ctx: ctx.clone(),
                        events: Arc::clone(&events),
                    };
                    send_event(&events, "flood started".into());
                    let message = "m".repeat(FLOOD_MESSAGE);
                    for i in 0..FLOOD_STEPS {
                        ctx.report_progress(i as f64, None, Some(&message)).await;
                        flooded.fetch_add(1, Ordering::AcqRel);
                    }
                    CallToolResult::text("flooded")
                }
            },
        ))
        .tool(McpToolDef::new(
            "block",
            "runs until cancelled",
            any.clone(),
            move |_args: Map<String, Value>, ctx: InvokeContext| {
                let events = Arc::clone(&e3);
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
            "talk_then_block",
            "one progress report, then runs until cancelled",
            any.clone(),
            move |_args: Map<String, Value>, ctx: InvokeContext| {
                let events = Arc::clone(&e4);
                async move {
                    let _report = EndReport {
                        name: "talk_then_block",
                        ctx: ctx.clone(),
                        events: Arc::clone(&events),
                    };
                    ctx.report_progress(1.0, None, None).await;
                    ctx.cancelled().await;
                    CallToolResult::error("cancelled")
                }
            },
        ))
        .tool(McpToolDef::new(
            "steps",
            "three progress reports 100 ms apart, then an answer",
            any.clone(),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                for i in 1..=3 {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    ctx.report_progress(f64::from(i), Some(3.0), None).await;
                }
                CallToolResult::text("stepped")
            },
        ))
        .tool(McpToolDef::new(
            "finite",
            "runs a while, then answers",
            any,
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
        .build()
        .expect("valid server")
}

impl Fixture {
    async fn start(options: HttpOptions) -> Self {
        let (tx, events) = mpsc::unbounded_channel();
        let flooded = Arc::new(AtomicUsize::new(0));
        let server = build_server(Arc::new(Mutex::new(tx)), Arc::clone(&flooded));
        let handle = serve_http(server, options).await.expect("serve_http");
        Self {
            handle,
            events,
            flooded,
        }
    }

    fn addr(&self) -> SocketAddr {
        self.handle.local_addr()
    }

    /// Waits for a specific tool event, skipping others.
    async fn wait_event(&mut self, wanted: &str) {
        loop {
            let got = guard(wanted, self.events.recv())
                .await
                .expect("event channel open");
            if got == wanted {
                return;
            }
        }
    }
}

fn request(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
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
    if method == "POST" {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    out.push_str(body);
    out.into_bytes()
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT_BOTH: (&str, &str) = ("Accept", "application/json, text/event-stream");
const KEEP_ALIVE: (&str, &str) = ("Connection", "keep-alive");

async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Resp {
    let mut h = vec![JSON];
    h.extend_from_slice(headers);
    raw(addr, &request(addr, "POST", &h, &body.to_string())).await
}

fn call(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": args, "_meta": {"progressToken": id}}})
}

fn init_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hardening-test", "version": "1"}}})
}

/// Initializes a session (with these extra headers) and returns its id.
async fn open_session(addr: SocketAddr, extra: &[(&str, &str)]) -> String {
    let r = post(addr, extra, &init_body()).await;
    assert_eq!(r.status, 200, "initialize: {}", r.text());
    r.header("mcp-session-id").expect("session id").to_owned()
}

fn tool_text(reply: &Value) -> String {
    reply
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no tool text in {reply}"))
        .to_owned()
}

/// A connection with a small receive buffer (so the kernel holds little
/// of what the server sends a client that does not read).
async fn connect_small(addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    guard("connect", socket.connect(addr))
        .await
        .expect("connect")
}

/// Reads until the server closes the connection (EOF or reset); the bytes read.
async fn read_until_closed(tcp: &mut TcpStream) -> usize {
    let mut total = 0;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match guard("server closes the connection", tcp.read(&mut buf)).await {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

// ---------------------------------------------------------------- byte budgets

#[tokio::test]
async fn a_post_stream_not_read_past_its_byte_budget_is_closed_and_its_call_cancelled() {
    // The message count alone would let the whole flood (128 MiB) queue up.
    let mut f = Fixture::start(
        HttpOptions::stateless()
            .stream_queue(100_000)
            .stream_budget_bytes(256 * 1024)
            .sse_keep_alive(None),
    )
    .await;
    let mut tcp = connect_small(f.addr()).await;
    let body = call(1, "flood", json!({})).to_string();
    tcp.write_all(&request(
        f.addr(),
        "POST",
        &[JSON, ACCEPT_BOTH, KEEP_ALIVE],
        &body,
    ))
    .await
    .expect("write");
    // Never reading: the stream's budget runs out, the call is cancelled.
    f.wait_event("flood started").await;
    f.wait_event("flood ended cancelled=true").await;
    let reports = f.flooded.load(Ordering::Acquire);
    assert!(
        reports < FLOOD_STEPS,
        "the flood ran to its end ({reports})"
    );
    // The connection is closed: reading now ends, short of the flood.
    let read = read_until_closed(&mut tcp).await;
    assert!(
        read < FLOOD_STEPS * FLOOD_MESSAGE / 2,
        "{read} bytes reached the client"
    );
    // Others are still served.
    let r = post(f.addr(), &[], &call(2, "echo", json!({"text": "alive"}))).await;
    assert_eq!(tool_text(&r.json()), "alive");
    f.handle.close().await;
}

#[tokio::test]
async fn a_get_stream_not_read_past_its_byte_budget_is_closed() {
    let mut f = Fixture::start(
        HttpOptions::new()
            .stream_queue(100_000)
            .stream_budget_bytes(256 * 1024)
            .sse_keep_alive(None),
    )
    .await;
    let addr = f.addr();
    let sid = open_session(addr, &[]).await;
    let mut get = connect_small(addr).await;
    get.write_all(&request(
        addr,
        "GET",
        &[
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &sid),
            KEEP_ALIVE,
        ],
        "",
    ))
    .await
    .expect("write GET");
    // Wait for the GET stream to be open (its head is sent at once).
    let mut head = [0u8; 12];
    guard("GET head", get.read_exact(&mut head))
        .await
        .expect("read head");
    assert_eq!(&head, b"HTTP/1.1 200");
    // A JSON-only call: its progress goes to the GET stream, never read.
    let r = post(
        addr,
        &[("Mcp-Session-Id", &sid)],
        &call(3, "flood", json!({})),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()), "flooded");
    f.wait_event("flood ended cancelled=false").await;
    // The GET stream overran its budget: its connection is closed.
    let read = read_until_closed(&mut get).await;
    assert!(
        read < FLOOD_STEPS * FLOOD_MESSAGE / 2,
        "{read} bytes reached the client"
    );
    f.handle.close().await;
}

// ---------------------------------------------------------------- subscriptions and sessions

fn subscribe(id: i64, uri: &str, on: bool) -> Value {
    let method = if on {
        "resources/subscribe"
    } else {
        "resources/unsubscribe"
    };
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"uri": uri}})
}

#[tokio::test]
async fn subscriptions_past_the_per_session_cap_are_refused_with_a_clear_error() {
    // The builder's cap (default 1,000) set low.
    let server = McpServer::builder()
        .server_info("caps", "1")
        .resource_subscriptions()
        .resource(McpResourceDef::new(
            "file:///a",
            "a",
            |_r: ResourceRequest, _ctx: InvokeContext| async { "a" },
        ))
        .max_subscriptions_per_session(3)
        .build()
        .expect("valid server");
    let handle = serve_http(server, HttpOptions::new())
        .await
        .expect("serve_http");
    let addr = handle.local_addr();
    let sid = open_session(addr, &[]).await;
    let h = [("Mcp-Session-Id", sid.as_str())];
    for i in 0..3 {
        let r = post(addr, &h, &subscribe(i, &format!("file:///{i}"), true)).await;
        assert_eq!(r.json()["result"], json!({}), "{}", r.text());
    }
    let r = post(addr, &h, &subscribe(9, "file:///9", true)).await;
    let reply = r.json();
    assert_eq!(reply["id"], 9);
    assert_eq!(reply["error"]["code"], -32600);
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("max 3"), "{message}");
    // Subscribing again to a URI it holds is fine; unsubscribing makes room.
    let r = post(addr, &h, &subscribe(10, "file:///1", true)).await;
    assert_eq!(r.json()["result"], json!({}));
    let r = post(addr, &h, &subscribe(11, "file:///1", false)).await;
    assert_eq!(r.json()["result"], json!({}));
    let r = post(addr, &h, &subscribe(12, "file:///9", true)).await;
    assert_eq!(r.json()["result"], json!({}), "{}", r.text());
    // Another session has its own allowance.
    let other = open_session(addr, &[]).await;
    let r = post(
        addr,
        &[("Mcp-Session-Id", other.as_str())],
        &subscribe(13, "file:///x", true),
    )
    .await;
    assert_eq!(r.json()["result"], json!({}));
    handle.close().await;
}

#[tokio::test]
async fn a_principal_at_its_session_cap_is_refused_and_evicts_nobody() {
    let f = Fixture::start(
        HttpOptions::new().sessions(SessionOptions::default().max(10).max_per_principal(2)),
    )
    .await;
    let addr = f.addr();
    let alice = [("Authorization", "Bearer alice")];
    let mallory = [("Authorization", "Bearer mallory")];
    let alice_sid = open_session(addr, &alice).await;
    open_session(addr, &mallory).await;
    open_session(addr, &mallory).await;
    let r = post(addr, &mallory, &init_body()).await;
    assert_eq!(r.status, 503);
    assert!(r.header("mcp-session-id").is_none());
    let reply = r.json();
    assert_eq!(reply["id"], 0);
    assert_eq!(reply["error"]["code"], -32000);
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("Too many sessions"), "{message}");
    // Alice's session is untouched and she may still open another.
    let mut h = alice.to_vec();
    h.push(("Mcp-Session-Id", &alice_sid));
    let r = post(addr, &h, &call(5, "echo", json!({"text": "hers"}))).await;
    assert_eq!(tool_text(&r.json()), "hers");
    open_session(addr, &alice).await;
    f.handle.close().await;
}

#[tokio::test]
async fn stateless_subscribes_answered_as_event_streams_are_released() {
    let (tx, _events) = mpsc::unbounded_channel();
    let server = build_server(Arc::new(Mutex::new(tx)), Arc::default());
    let probe = server.clone();
    let handle = serve_http(server, HttpOptions::stateless())
        .await
        .expect("serve_http");
    let addr = handle.local_addr();
    for i in 0..50 {
        let r = post(addr, &[ACCEPT_BOTH], &subscribe(i, "file:///a", true)).await;
        assert_eq!(r.status, 200);
    }
    // Each request's subscription ended with its request.
    assert_eq!(probe.subscriber_count(), 0);
    handle.close().await;
}

// ---------------------------------------------------------------- connections

/// Opens a keep-alive connection, has one request answered on it, and
/// returns it idle.
async fn idle_keep_alive(addr: SocketAddr) -> TcpStream {
    let mut tcp = guard("connect", TcpStream::connect(addr))
        .await
        .expect("connect");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    tcp.write_all(&request(addr, "POST", &[JSON, KEEP_ALIVE], &body))
        .await
        .expect("write");
    let mut buf = vec![0u8; 4096];
    let n = guard("ping answer", tcp.read(&mut buf))
        .await
        .expect("read");
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{:?}", &buf[..n]);
    tcp
}

#[tokio::test]
async fn at_the_connection_cap_idle_connections_make_room_for_new_clients() {
    let f = Fixture::start(
        HttpOptions::stateless()
            .max_connections(64)
            .keep_alive_timeout(Duration::from_secs(60))
            .header_read_timeout(Duration::from_secs(60)),
    )
    .await;
    let addr = f.addr();
    // 200 idle keep-alive connections, and 20 that never send a request.
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(idle_keep_alive(addr).await);
    }
    let mut silent = Vec::new();
    for _ in 0..20 {
        silent.push(TcpStream::connect(addr).await.expect("connect"));
    }
    // A legitimate client is still served.
    for i in 0..5 {
        let r = post(addr, &[], &call(100 + i, "echo", json!({"text": "served"}))).await;
        assert_eq!(tool_text(&r.json()), "served");
    }
    // The oldest idle connection was closed to make room.
    let mut first = idle.swap_remove(0);
    let mut buf = [0u8; 16];
    let n = guard("oldest idle closed", first.read(&mut buf))
        .await
        .unwrap_or(0);
    assert_eq!(n, 0, "the oldest idle connection is still served");
    f.handle.close().await;
}

#[tokio::test]
async fn held_event_streams_do_not_lock_new_connections_out() {
    let f = Fixture::start(
        HttpOptions::new()
            .max_connections(2)
            .max_event_streams(6)
            .sse_keep_alive(Some(Duration::from_millis(50))),
    )
    .await;
    let addr = f.addr();
    let mut streams = Vec::new();
    for _ in 0..6 {
        let sid = open_session(addr, &[]).await;
        let s = Stream::open(
            addr,
            &request(
                addr,
                "GET",
                &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &sid)],
                "",
            ),
        )
        .await;
        assert_eq!(s.status, 200);
        streams.push(s);
    }
    // Six held streams, a connection cap of two: others are still served.
    for i in 0..3 {
        let r = post(addr, &[], &init_body()).await;
        assert_eq!(r.status, 200, "initialize {i}: {}", r.text());
    }
    // A seventh stream is past its own cap: 503, not a closed connection.
    let sid = open_session(addr, &[]).await;
    let r = raw(
        addr,
        &request(
            addr,
            "GET",
            &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &sid)],
            "",
        ),
    )
    .await;
    assert_eq!(r.status, 503);
    assert_eq!(r.error_code(), -32000);
    // The held streams are alive (keep-alive comments still arrive).
    for s in &mut streams {
        assert!(s.fill().await, "a held stream ended");
    }
    drop(streams);
    f.handle.close().await;
}

// ---------------------------------------------------------------- half-closed sockets

/// Everything the server sends until it closes, as text.
async fn read_all(tcp: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let _ = guard("the answer", tcp.read_to_end(&mut buf)).await;
    String::from_utf8_lossy(&buf).into_owned()
}

/// The final (non-1xx) response of a keep-alive exchange.
fn final_response(text: &str) -> Resp {
    let mut rest = text;
    while rest.starts_with("HTTP/1.1 1") {
        let end = rest.find("\r\n\r\n").expect("interim head");
        rest = &rest[end + 4..];
    }
    raw_http::parse_response(rest.as_bytes())
}

#[tokio::test]
async fn a_client_that_half_closes_right_after_its_post_gets_the_answer() {
    let mut f = Fixture::start(HttpOptions::stateless()).await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(6, "finite", json!({})).to_string();
    // Request and FIN back to back, as `printf ... | nc -N` sends them.
    tcp.write_all(&request(f.addr(), "POST", &[JSON, KEEP_ALIVE], &body))
        .await
        .expect("write");
    tcp.shutdown().await.expect("shutdown write");
    let text = read_all(&mut tcp).await;
    let r = final_response(&text);
    assert_eq!(r.status, 200, "{text:?}");
    assert_eq!(tool_text(&r.json()), "finished");
    f.wait_event("finite ended cancelled=false").await;
    f.handle.close().await;
}

#[tokio::test]
async fn a_half_closed_client_gets_a_large_answer_whole() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let text = "z".repeat(900_000);
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(7, "echo", json!({"text": text})).to_string();
    tcp.write_all(&request(f.addr(), "POST", &[JSON, KEEP_ALIVE], &body))
        .await
        .expect("write");
    tcp.shutdown().await.expect("shutdown write");
    let r = final_response(&read_all(&mut tcp).await);
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()).len(), text.len());
    f.handle.close().await;
}

#[tokio::test]
async fn a_client_that_half_closes_before_its_body_is_complete_gets_408() {
    let f = Fixture::start(HttpOptions::stateless().body_read_timeout(Duration::from_millis(300)))
        .await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        f.addr()
    );
    tcp.write_all(head.as_bytes()).await.expect("partial body");
    tcp.shutdown().await.expect("shutdown write");
    let r = final_response(&read_all(&mut tcp).await);
    assert_eq!(r.status, 408);
    f.handle.close().await;
}

#[tokio::test]
async fn a_half_closed_client_gets_the_answer_of_a_slow_call() {
    let mut f = Fixture::start(HttpOptions::stateless()).await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(1, "finite", json!({})).to_string();
    tcp.write_all(&request(f.addr(), "POST", &[JSON, KEEP_ALIVE], &body))
        .await
        .expect("write");
    f.wait_event("finite started").await;
    // shutdown(SHUT_WR): nothing more to send, still reading.
    tcp.shutdown().await.expect("shutdown write");
    let text = read_all(&mut tcp).await;
    let r = final_response(&text);
    assert_eq!(r.status, 200, "{text:?}");
    assert_eq!(tool_text(&r.json()), "finished");
    f.wait_event("finite ended cancelled=false").await;
    f.handle.close().await;
}

#[tokio::test]
async fn a_half_closed_client_gets_its_event_stream_to_the_end() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(2, "steps", json!({})).to_string();
    tcp.write_all(&request(
        f.addr(),
        "POST",
        &[JSON, ACCEPT_BOTH, KEEP_ALIVE],
        &body,
    ))
    .await
    .expect("write");
    tcp.shutdown().await.expect("shutdown write");
    let text = read_all(&mut tcp).await;
    let r = final_response(&text);
    assert_eq!(r.status, 200, "{text:?}");
    let events: Vec<Value> = r
        .text()
        .split("\n\n")
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).expect("event JSON"))
        .collect();
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[2]["params"]["progress"], 3.0);
    assert_eq!(tool_text(&events[3]), "stepped");
    f.handle.close().await;
}

#[tokio::test]
async fn a_client_that_closes_its_socket_still_has_its_call_cancelled() {
    let mut f = Fixture::start(HttpOptions::stateless()).await;
    // Keep-alive, then gone (close(): FIN, like the half-closed client).
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(3, "block", json!({})).to_string();
    tcp.write_all(&request(f.addr(), "POST", &[JSON, KEEP_ALIVE], &body))
        .await
        .expect("write");
    f.wait_event("block started").await;
    drop(tcp);
    f.wait_event("block ended cancelled=true").await;
    // And over an event stream that has not sent anything yet.
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(4, "block", json!({})).to_string();
    tcp.write_all(&request(
        f.addr(),
        "POST",
        &[JSON, ACCEPT_BOTH, KEEP_ALIVE],
        &body,
    ))
    .await
    .expect("write");
    f.wait_event("block started").await;
    drop(tcp);
    f.wait_event("block ended cancelled=true").await;
    f.handle.close().await;
}

#[tokio::test]
async fn a_client_that_closes_a_quiet_event_stream_has_its_call_cancelled() {
    // No keep-alive comments: nothing else would ever be written.
    let mut f = Fixture::start(HttpOptions::stateless().sse_keep_alive(None)).await;
    let body = call(5, "talk_then_block", json!({}));
    let h = [JSON, ACCEPT_BOTH, KEEP_ALIVE];
    let mut s = Stream::open(f.addr(), &request(f.addr(), "POST", &h, &body.to_string())).await;
    assert!(s.is_sse());
    let first = s.next_event().await.expect("the progress report");
    assert_eq!(first["method"], "notifications/progress");
    // Gone: the stream is quiet, its call blocked.
    drop(s);
    f.wait_event("talk_then_block ended cancelled=true").await;
    f.handle.close().await;
}
