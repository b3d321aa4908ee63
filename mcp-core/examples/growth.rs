//! Growth measurements for the "Growth" targets of issue 6:
//!
//! 1. memory per idle HTTP session (10,000 legacy sessions, target ≤ 4 KiB);
//! 2. `tools/list` cost with 10/100/1000/10000 tools (target: linear);
//! 3. peak extra memory of a `tools/call` with a 1 MiB string argument
//!    (target: at most two copies of it);
//! 4. allocations per `tools/call` over the stdio transport (the hot path:
//!    what the server allocates per call, bytes in to bytes out).
//!
//! Memory is counted exactly by a counting global allocator wrapped around
//! [`System`]: live bytes, peak live bytes, cumulative bytes and allocation
//! count. `VmRSS` is printed alongside for reference.
//!
//! Run: `cargo run --release -p mcp-core --example growth`

#[path = "../benches/support/counting_alloc.rs"]
mod counting_alloc;
#[path = "../benches/support/echo_request.rs"]
mod echo_request;

use std::hint::black_box;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mcp_core::{serve_http, HttpOptions};

use mcp_core::transport::http::SessionOptions;
use mcp_core::{
    protocol::CallToolResult,
    transport::{CallContext, Session},
    InvokeContext, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use counting_alloc::{live, reset_peak, COUNT, PEAK, TOTAL};

/// `VmRSS` of this process in KiB (0 when unavailable).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// One MiB, the unit of part 3.
const MIB: usize = 1 << 20;

/// The legacy `initialize` request every session starts with.
fn initialize_request() -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"growth","version":"0"}}})
}

/// A minimal HTTP/1.1 client over one keep-alive connection.
struct Client {
    /// The connection.
    stream: TcpStream,
    /// The `Host` header value.
    host: String,
    /// Bytes read but not yet consumed.
    buf: Vec<u8>,
}

impl Client {
    /// Connects to `addr`.
    async fn connect(addr: std::net::SocketAddr) -> std::io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            host: addr.to_string(),
            buf: Vec::new(),
        })
    }

    /// Reads until `buf` holds at least `n` bytes.
    async fn fill(&mut self, n: usize) -> std::io::Result<()> {
        let mut chunk = [0u8; 8192];
        while self.buf.len() < n {
            let got = self.stream.read(&mut chunk).await?;
            if got == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..got]);
        }
        Ok(())
    }

    /// Reads up to and including the next CRLF; returns the line without it.
    async fn line(&mut self) -> std::io::Result<String> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..i]).into_owned();
                self.buf.drain(..i + 2);
                return Ok(line);
            }
            let want = self.buf.len() + 1;
            self.fill(want).await?;
        }
    }

    /// Takes exactly `n` bytes.
    async fn take(&mut self, n: usize) -> std::io::Result<Vec<u8>> {
        self.fill(n).await?;
        Ok(self.buf.drain(..n).collect())
    }

    /// POSTs `body` to `/mcp`; returns the status, the `Mcp-Session-Id`
    /// header (if any) and the body.
    async fn post(&mut self, body: &[u8]) -> std::io::Result<(u16, Option<String>, Vec<u8>)> {
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
            self.host,
            body.len()
        );
        // One write: head and body in separate segments would meet Nagle's
        // algorithm and delayed ACKs (40 ms per request).
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        self.stream.write_all(&request).await?;
        let status_line = self.line().await?;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let (mut session, mut length, mut chunked) = (None, None, false);
        loop {
            let line = self.line().await?;
            if line.is_empty() {
                break;
            }
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match name.trim().to_ascii_lowercase().as_str() {
                "mcp-session-id" => session = Some(value.to_owned()),
                "content-length" => length = value.parse().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                _ => {}
            }
        }
        let body = if chunked {
            let mut body = Vec::new();
            loop {
                let size = self.line().await?;
                let size = usize::from_str_radix(size.split(';').next().unwrap_or("0").trim(), 16)
                    .map_err(std::io::Error::other)?;
                if size == 0 {
                    while !self.line().await?.is_empty() {}
                    break;
                }
                body.extend(self.take(size).await?);
                self.line().await?;
            }
            body
        } else {
            self.take(length.unwrap_or(0)).await?
        };
        Ok((status, session, body))
    }
}

/// Part 1: bytes per idle legacy HTTP session.
fn sessions_part() -> std::io::Result<()> {
    const SESSIONS: usize = 10_000;
    println!("== 1. memory per idle HTTP session ({SESSIONS} legacy sessions) ==");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let server = McpServer::builder()
            .server_info("growth", "0")
            .tool(len_tool())
            .build()
            .map_err(std::io::Error::other)?;
        let options = HttpOptions::new()
            .sessions(SessionOptions::default().max(SESSIONS * 2))
            .max_body_bytes(4 * MIB);
        let handle = serve_http(server, options).await?;
        let mut client = Client::connect(handle.local_addr()).await?;
        let init = initialize_request().to_string();
        let mut ids = Vec::with_capacity(SESSIONS);
        // Warm up: one session (lazy statics, connection buffers, table).
        let (status, id, _) = client.post(init.as_bytes()).await?;
        assert_eq!(status, 200, "initialize failed");
        ids.push(id.expect("no Mcp-Session-Id on initialize"));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (before, rss_before) = (live(), rss_kib());
        let started = Instant::now();
        for _ in 0..SESSIONS {
            let (status, id, _) = client.post(init.as_bytes()).await?;
            assert_eq!(status, 200, "initialize failed");
            ids.push(id.expect("no Mcp-Session-Id on initialize"));
        }
        let elapsed = started.elapsed();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (after, rss_after) = (live(), rss_kib());
        // The ids held by this client: 64 hex digits each, preallocated above.
        let client_side: usize = ids.iter().skip(1).map(String::capacity).sum();
        let server_side = after.saturating_sub(before).saturating_sub(client_side);
        println!("opened {SESSIONS} sessions in {elapsed:?}");
        println!(
            "allocated (live) bytes: before {before}, after {after}, delta {} (client-held ids {client_side})",
            after.saturating_sub(before)
        );
        println!(
            "VmRSS: before {rss_before} KiB, after {rss_after} KiB, delta {} KiB = {:.0} B/session",
            rss_after.saturating_sub(rss_before),
            (rss_after.saturating_sub(rss_before) * 1024) as f64 / SESSIONS as f64
        );
        let per = server_side as f64 / SESSIONS as f64;
        println!(
            "server bytes per idle session (allocator): {per:.0} B = {:.2} KiB (target <= 4 KiB: {})",
            per / 1024.0,
            if per <= 4096.0 { "MET" } else { "MISSED" }
        );
        drop(client);
        handle.close().await;
        Ok::<(), std::io::Error>(())
    })?;
    drop(rt);
    session_breakdown();
    Ok(())
}

/// Where a session's bytes go, measured in-process without a transport.
fn session_breakdown() {
    const N: usize = 1000;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = McpServer::builder()
        .server_info("growth", "0")
        .build()
        .expect("server");
    let before = live();
    let sessions: Vec<Session> = (0..N).map(|_| Session::new()).collect();
    let bare = live() - before - sessions.capacity() * std::mem::size_of::<Session>();
    let before = live();
    for s in &sessions {
        let ctx = CallContext::new().with_session(s.clone());
        black_box(rt.block_on(server.handle_message(initialize_request(), &ctx)));
    }
    let init = live() - before;
    println!(
        "breakdown: Session::new() {} B; initialize on it (stores the client info) +{} B per session",
        bare / N,
        init / N
    );
    drop(sessions);
}

/// A tool among many, for `tools/list`.
fn listed_tool(i: usize) -> McpToolDef {
    McpToolDef::new(
        format!("tool_{i}"),
        "A tool among many",
        json!({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}),
        |_args: Map<String, Value>, _ctx: InvokeContext| async { "ok" },
    )
}

/// Part 2: allocation and time of `tools/list`, bytes to bytes.
fn tools_list_part() {
    println!("== 2. tools/list cost by number of tools (bytes in, bytes out) ==");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let line = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}).to_string();
    println!(
        "{:>6} {:>12} {:>10} {:>12} {:>10} {:>10} {:>12} {:>10}",
        "tools",
        "bytes/call",
        "B/tool",
        "allocs/call",
        "allocs/t",
        "out B/t",
        "time/call",
        "ns/tool"
    );
    for n in [10usize, 100, 1000, 10_000] {
        let server = McpServer::builder()
            .tools((0..n).map(listed_tool))
            .build()
            .expect("server");
        let ctx = CallContext::new().with_session(Session::new());
        let init = initialize_request().to_string();
        round_trip(&rt, &server, &ctx, init.as_bytes());
        let call = || round_trip(&rt, &server, &ctx, line.as_bytes());
        let out_len = call().len();
        for _ in 0..3 {
            black_box(call());
        }
        let iters = (200_000 / n).clamp(5, 2000);
        let (t0, c0) = (TOTAL.load(Ordering::Relaxed), COUNT.load(Ordering::Relaxed));
        for _ in 0..iters {
            black_box(call());
        }
        let bytes = (TOTAL.load(Ordering::Relaxed) - t0) / iters as u64;
        let allocs = (COUNT.load(Ordering::Relaxed) - c0) / iters as u64;
        let mut times = Vec::new();
        let budget = Instant::now();
        while times.len() < 7
            || (budget.elapsed() < Duration::from_millis(500) && times.len() < 101)
        {
            let t = Instant::now();
            for _ in 0..iters.min(50) {
                black_box(call());
            }
            times.push(t.elapsed() / iters.min(50) as u32);
        }
        times.sort();
        let median = times[times.len() / 2];
        println!(
            "{n:>6} {bytes:>12} {:>10.1} {allocs:>12} {:>10.2} {:>10.1} {:>12?} {:>10.1}",
            bytes as f64 / n as f64,
            allocs as f64 / n as f64,
            out_len as f64 / n as f64,
            median,
            median.as_nanos() as f64 / n as f64
        );
    }
}

/// What a transport does: parse, dispatch, serialize.
fn round_trip(
    rt: &tokio::runtime::Runtime,
    server: &McpServer,
    ctx: &CallContext,
    bytes: &[u8],
) -> Vec<u8> {
    rt.block_on(server.handle_frame(bytes, ctx))
        .unwrap_or_default()
}

/// Returns the length of `text` (argument cost only, small result).
fn len_tool() -> McpToolDef {
    McpToolDef::new(
        "len",
        "Length of the text",
        json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}),
        |args: Map<String, Value>, _ctx: InvokeContext| async move {
            match args.get("text").and_then(Value::as_str) {
                Some(text) => CallToolResult::text(text.len().to_string()),
                None => CallToolResult::error("`text` must be a string"),
            }
        },
    )
}

/// Echoes `text` back (argument plus a result of the same size).
fn echo_tool() -> McpToolDef {
    McpToolDef::new(
        "echo",
        "Echo the text",
        json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}),
        |args: Map<String, Value>, _ctx: InvokeContext| async move {
            match args.get("text").and_then(Value::as_str) {
                Some(text) => CallToolResult::text(text),
                None => CallToolResult::error("`text` must be a string"),
            }
        },
    )
}

/// Prints one peak figure in bytes and MiB. The target counts copies of
/// the argument; the envelope, ids and allocator rounding around them
/// (a few KiB) are not copies, so they get a fixed allowance.
fn report(label: &str, peak_extra: usize, target_mib: f64) {
    const ALLOWANCE: f64 = 64.0 * 1024.0;
    let mib = peak_extra as f64 / MIB as f64;
    let met = peak_extra as f64 <= target_mib * MIB as f64 + ALLOWANCE;
    println!(
        "{label:<58} peak extra {peak_extra:>9} B = {mib:.2} x 1 MiB \
         (target <= {target_mib:.0} copies + 64 KiB: {})",
        if met { "MET" } else { "MISSED" }
    );
}

/// Part 3: peak extra bytes of a `tools/call` with a 1 MiB string argument.
fn big_argument_part() {
    println!("== 3. tools/call with a 1 MiB string argument: peak extra allocated bytes ==");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = McpServer::builder()
        .tool(len_tool())
        .tool(echo_tool())
        .build()
        .expect("server");
    let ctx = CallContext::new().with_session(Session::new());
    black_box(rt.block_on(server.handle_message(initialize_request(), &ctx)));
    let big = "x".repeat(MIB);
    let message = |tool: &str, modern: bool| {
        let mut m = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
               "params":{"name":tool,"arguments":{"text":big}}});
        if modern {
            m["params"]["_meta"] = echo_request::modern_meta();
        }
        m
    };
    for (era, modern) in [("2025-11-25", false), ("2026-07-28", true)] {
        for tool in ["len", "echo"] {
            // Warm-up, so lazy one-time allocations are not counted.
            black_box(rt.block_on(server.handle_message(message(tool, modern), &ctx)));

            // (a) A parsed Value in (already counted before the window).
            let value = message(tool, modern);
            let base = reset_peak();
            let reply = rt.block_on(server.handle_message(value, &ctx));
            let peak = PEAK.load(Ordering::Relaxed) - base;
            let ok = reply
                .as_ref()
                .is_some_and(|r| r.get("result").is_some_and(|r| r["isError"] != json!(true)));
            assert!(ok, "call failed: {reply:?}");
            drop(reply);
            report(&format!("{era} {tool}: handle_message(Value)"), peak, 2.0);

            // (b) Raw bytes in: parse_payload + handle_message (+ serialize).
            let bytes = message(tool, modern).to_string().into_bytes();
            let base = reset_peak();
            let parsed = mcp_core::transport::parse_payload(&bytes).expect("parse");
            let reply = rt.block_on(server.handle_message(parsed, &ctx));
            let peak_dispatch = PEAK.load(Ordering::Relaxed) - base;
            let out = serde_json::to_vec(&reply).unwrap_or_default();
            let peak_all = PEAK.load(Ordering::Relaxed) - base;
            drop(reply);
            black_box(out);
            report(
                &format!("{era} {tool}: parse_payload + handle_message"),
                peak_dispatch,
                2.0,
            );
            report(
                &format!("{era} {tool}: parse + handle_message + to_vec"),
                peak_all,
                2.0,
            );

            // (c) handle_frame: bytes in, bytes out, as the transports do
            // (the reply is written from its parts, never a Value).
            let base = reset_peak();
            let out = rt.block_on(server.handle_frame(&bytes, &ctx));
            let peak_frame = PEAK.load(Ordering::Relaxed) - base;
            assert!(out.is_some_and(|o| !o.is_empty()), "no reply");
            report(
                &format!("{era} {tool}: handle_frame (bytes to bytes)"),
                peak_frame,
                2.0,
            );
        }
    }
}

/// Part 4: allocations per echo `tools/call` served by `serve_io` over an
/// in-memory pipe. The client side writes prepared lines and counts reply
/// lines in a fixed buffer, so what is counted is the server's work.
fn allocations_part() {
    use mcp_core::{transport::stdio::serve_io, StdioOptions};
    const CALLS: u64 = 20_000;
    println!("== 4. allocations per tools/call over stdio (serve_io, in-memory pipe) ==");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for (era, modern) in [("2025-11-25", false), ("2026-07-28", true)] {
        let server = McpServer::builder()
            .tool(macro_echo::tool())
            .build()
            .expect("server");
        let line = |id: u64| {
            let mut m = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                   "params":{"name":"echo","arguments":{"text":"hello world"}}});
            if modern {
                m["params"]["_meta"] = echo_request::modern_meta();
            }
            let mut bytes = m.to_string().into_bytes();
            bytes.push(b'\n');
            bytes
        };
        // Prepared up front (ids 1..=CALLS), outside the counted window.
        let mut input = Vec::new();
        if !modern {
            input.extend_from_slice(&initialize_request().to_string().into_bytes());
            input.push(b'\n');
        }
        let warmup: Vec<u8> = (1..=100).flat_map(line).collect();
        let calls: Vec<u8> = (1000..1000 + CALLS).flat_map(line).collect();
        let (count, per_call_bytes) = rt.block_on(async move {
            let (client, server_side) = tokio::io::duplex(1 << 20);
            let (server_read, server_write) = tokio::io::split(server_side);
            let handle = serve_io(
                server,
                server_read,
                server_write,
                StdioOptions::default().max_concurrent_requests(256),
            );
            let (mut rx, mut tx) = tokio::io::split(client);
            let mut buf = vec![0u8; 1 << 16];
            tx.write_all(&input).await.expect("write");
            tx.write_all(&warmup).await.expect("write");
            read_lines(&mut rx, &mut buf, 100 + u64::from(!modern)).await;
            let count0 = COUNT.load(Ordering::Relaxed);
            let total0 = TOTAL.load(Ordering::Relaxed);
            let writer = tokio::spawn(async move {
                tx.write_all(&calls).await.expect("write");
                tx
            });
            read_lines(&mut rx, &mut buf, CALLS).await;
            let count = COUNT.load(Ordering::Relaxed) - count0;
            let bytes = TOTAL.load(Ordering::Relaxed) - total0;
            drop(writer.await.expect("writer"));
            handle.close();
            (count, bytes / CALLS)
        });
        #[allow(clippy::cast_precision_loss)]
        let per_call = count as f64 / CALLS as f64;
        println!(
            "{era}: {per_call:.1} allocations per call, {per_call_bytes} bytes allocated per call"
        );
    }
}

/// Part 4b: allocations per echo `tools/call` through
/// `McpHttpService::handle` (no sockets: a request built in memory, the
/// response body collected). Building the request is counted too, so this
/// is an upper bound on what the HTTP layer adds to the dispatcher's work.
fn http_allocations_part() {
    use http_body_util::BodyExt;
    use mcp_core::transport::http::McpHttpService;
    const CALLS: u64 = 20_000;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = McpServer::builder()
        .tool(macro_echo::tool())
        .build()
        .expect("server");
    let service = McpHttpService::new(server, HttpOptions::stateless())
        .for_connection(Some(([127, 0, 0, 1], 40000).into()));
    for (era, modern) in [("2025-11-25 (stateless)", false), ("2026-07-28", true)] {
        let body = echo_request::echo_body(modern);
        let request = || echo_request::echo_post(&body, modern);
        let call = || {
            let bytes = rt.block_on(async {
                let response = service.handle(request()).await;
                assert_eq!(response.status(), 200);
                response.into_body().collect().await.map(|b| b.to_bytes())
            });
            black_box(bytes.expect("body"));
        };
        for _ in 0..100 {
            call();
        }
        let count0 = COUNT.load(Ordering::Relaxed);
        let mut build_only = 0;
        for _ in 0..CALLS {
            call();
        }
        let count = COUNT.load(Ordering::Relaxed) - count0;
        let before = COUNT.load(Ordering::Relaxed);
        for _ in 0..CALLS {
            black_box(request());
        }
        build_only += COUNT.load(Ordering::Relaxed) - before;
        #[allow(clippy::cast_precision_loss)]
        let (per_call, per_build) = (
            count as f64 / CALLS as f64,
            build_only as f64 / CALLS as f64,
        );
        println!(
            "{era} over McpHttpService::handle: {per_call:.1} allocations per call \
             ({per_build:.1} of them build the request)"
        );
    }
}

/// Reads from `rx` until `want` lines have arrived.
async fn read_lines<R: tokio::io::AsyncRead + Unpin>(rx: &mut R, buf: &mut [u8], want: u64) {
    let mut seen = 0;
    while seen < want {
        let n = rx.read(buf).await.expect("read");
        assert!(n > 0, "server closed early");
        seen += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

/// Echo the text back (the benchmark's tool, declared with the macro).
#[mcp_core::mcp_tool(name = "echo")]
async fn macro_echo(text: String) -> String {
    text
}

/// Runs the measurements in turn.
fn main() -> std::io::Result<()> {
    sessions_part()?;
    println!();
    tools_list_part();
    println!();
    big_argument_part();
    println!();
    allocations_part();
    http_allocations_part();
    Ok(())
}
