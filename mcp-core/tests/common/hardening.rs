//! The fixture of the hardening tests (`http_hardening.rs`,
//! `http_half_close.rs`): a server with tools that flood, block, step and
//! sleep, and a raw HTTP/1.1 client.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::{serve_http, HttpOptions};

use mcp_core::transport::http::HttpHandle;
use mcp_core::{
    handler::ResourceRequest, protocol::CallToolResult, InvokeContext, McpResourceDef, McpServer,
    McpToolDef,
};
use serde_json::{json, Map, Value};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::mpsc;

use super::raw_http::{self, raw, Resp};
use super::tool_events::{send_event, EndReport, Events};

/// Hang guard for every wait in these tests.
pub const GUARD: Duration = Duration::from_secs(30);

pub async fn guard<F: std::future::Future>(what: &str, fut: F) -> F::Output {
    match tokio::time::timeout(GUARD, fut).await {
        Ok(v) => v,
        Err(_) => panic!("hang guard: {what} did not complete within {GUARD:?}"),
    }
}

/// Reports of `flood`: how many it sent.
pub const FLOOD_STEPS: usize = 2000;
/// Bytes of each `flood` progress message.
pub const FLOOD_MESSAGE: usize = 64 * 1024;

pub struct Fixture {
    pub handle: HttpHandle,
    pub events: mpsc::UnboundedReceiver<String>,
    /// Progress reports `flood` made.
    pub flooded: Arc<AtomicUsize>,
}

pub fn build_server(events: Events, flooded: Arc<AtomicUsize>) -> McpServer {
    let any = json!({"type": "object"});
    let e1 = Arc::clone(&events);
    let e2 = Arc::clone(&events);
    let e3 = Arc::clone(&events);
    let e4 = Arc::clone(&events);
    McpServer::builder()
        // Transport tests send large answers whole: no result size guard.
        .no_result_limit()
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
    pub async fn start(options: HttpOptions) -> Self {
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

    pub fn addr(&self) -> SocketAddr {
        self.handle.local_addr()
    }

    /// Waits for a specific tool event, skipping others.
    pub async fn wait_event(&mut self, wanted: &str) {
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

pub fn request(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
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

pub const JSON: (&str, &str) = ("Content-Type", "application/json");
pub const ACCEPT_BOTH: (&str, &str) = ("Accept", "application/json, text/event-stream");
pub const KEEP_ALIVE: (&str, &str) = ("Connection", "keep-alive");

pub async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Resp {
    let mut h = vec![JSON];
    h.extend_from_slice(headers);
    raw(addr, &request(addr, "POST", &h, &body.to_string())).await
}

pub fn call(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": args, "_meta": {"progressToken": id}}})
}

pub fn init_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hardening-test", "version": "1"}}})
}

/// Initializes a session (with these extra headers) and returns its id.
pub async fn open_session(addr: SocketAddr, extra: &[(&str, &str)]) -> String {
    let r = post(addr, extra, &init_body()).await;
    assert_eq!(r.status, 200, "initialize: {}", r.text());
    r.header("mcp-session-id").expect("session id").to_owned()
}

pub fn tool_text(reply: &Value) -> String {
    reply
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no tool text in {reply}"))
        .to_owned()
}

/// A connection with a small receive buffer (so the kernel holds little
/// of what the server sends a client that does not read).
pub async fn connect_small(addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    guard("connect", socket.connect(addr))
        .await
        .expect("connect")
}

/// Reads until the server closes the connection (EOF or reset); the bytes read.
pub async fn read_until_closed(tcp: &mut TcpStream) -> usize {
    let mut total = 0;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match guard("server closes the connection", tcp.read(&mut buf)).await {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

/// Everything the server sends until it closes, as text.
pub async fn read_all(tcp: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let _ = guard("the answer", tcp.read_to_end(&mut buf)).await;
    String::from_utf8_lossy(&buf).into_owned()
}

/// The final (non-1xx) response of a keep-alive exchange.
pub fn final_response(text: &str) -> Resp {
    let mut rest = text;
    while rest.starts_with("HTTP/1.1 1") {
        let end = rest.find("\r\n\r\n").expect("interim head");
        rest = &rest[end + 4..];
    }
    raw_http::parse_response(rest.as_bytes())
}
