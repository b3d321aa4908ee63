// The imports, constants and helpers shared by the http test files (http.rs,
// http_bodies_sessions.rs, http_streaming.rs), brought into each with
// `include!`: they were one file, split by what the tests exercise.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::{serve_http, HttpOptions};

use mcp_core::transport::http::{HttpHandle, SessionOptions};
use mcp_core::{Confirmation, InvokeContext, McpServer, McpToolDef, protocol::CallToolResult, context::HeaderValue};
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
