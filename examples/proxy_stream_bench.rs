//! A proxied call answered as an event stream, against the same call made
//! directly: a backend tool `steps` reports two progress notifications
//! and returns, so each call with a progress token comes back over HTTP
//! as a `text/event-stream` (two progress events, then the result).
//!
//! Three single-threaded runtimes, each on its own thread, so each one's
//! CPU time is read apart (`/proc/self/task/TID/schedstat`): the backend
//! (our server over HTTP), the proxy (our server over HTTP mounting the
//! backend through `mcp_core::client::proxy`), and the caller (our client,
//! on the main thread). Sequential calls, direct (caller → backend) then
//! proxied (caller → proxy → backend); every call's progress and result
//! are checked. Printed: p50 per call, and server CPU per call (the
//! backend's for direct calls, the proxy's for proxied ones).
//!
//! ```sh
//! cargo build --release --example proxy_stream_bench --features client
//! target/release/examples/proxy_stream_bench --protocol 2026-07-28 --calls 5000
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use mcp_core::client::proxy::{ProxyOptions, Remote, Target};
use mcp_core::client::{Client, ClientBuilder, Protocol, RequestOptions};
use mcp_core::{
    protocol::CallToolResult, serve_http, HttpOptions, InvokeContext, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};

/// CPU time of thread `tid` of this process, from its schedstat.
fn cpu(tid: &str) -> Duration {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|n| n.parse().ok()))
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// The calling thread's id (the last part of `/proc/thread-self`).
fn tid() -> String {
    std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

fn backend() -> McpServer {
    let steps = McpToolDef::new(
        "steps",
        "Reports two progress steps, then answers `done`",
        json!({"type": "object"}),
        |_args: Map<String, Value>, ctx: InvokeContext| async move {
            ctx.report_progress(1.0, Some(2.0), None).await;
            ctx.report_progress(2.0, Some(2.0), None).await;
            CallToolResult::text("done")
        },
    )
    .never_asks();
    McpServer::builder()
        .server_info("stream-backend", "1")
        .tool(steps)
        .build()
        .unwrap_or_else(|e| panic!("backend: {e}"))
}

/// Runs `serve` on a single-threaded runtime on its own thread; returns
/// the URL it serves and the thread's id.
fn serve_on_thread<F>(serve: F) -> (String, String)
where
    F: FnOnce() -> std::pin::Pin<
            Box<dyn std::future::Future<Output = mcp_core::transport::http::HttpHandle>>,
        > + Send
        + 'static,
{
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        runtime.block_on(async move {
            let handle = serve().await;
            let _ = tx.send((handle.url().to_owned(), tid()));
            std::future::pending::<()>().await;
        });
    });
    rx.recv().unwrap_or_else(|e| panic!("server thread: {e}"))
}

/// `calls` sequential calls of `tool`, each checked: two progress steps
/// and the text `done`. Returns the p50 and the server thread's CPU per call.
async fn measure(client: &Client, tool: &str, calls: usize, server: &str) -> (Duration, Duration) {
    let seen = Arc::new(AtomicUsize::new(0));
    let sink = Arc::clone(&seen);
    let options = RequestOptions::new().progress(move |_| {
        sink.fetch_add(1, Ordering::Relaxed);
    });
    let call = |i: usize| {
        let options = &options;
        let seen = &seen;
        async move {
            let before = seen.load(Ordering::Relaxed);
            let r = client
                .call_tool_with(tool, json!({}), options)
                .await
                .unwrap_or_else(|e| panic!("{tool} call {i}: {e}"));
            assert_eq!(r.text_content(), "done", "{tool} call {i}");
            assert_eq!(
                seen.load(Ordering::Relaxed) - before,
                2,
                "{tool} call {i}: two progress notifications"
            );
        }
    };
    for i in 0..calls / 10 {
        call(i).await;
    }
    let mut times = Vec::with_capacity(calls);
    let cpu_before = cpu(server);
    for i in 0..calls {
        let start = Instant::now();
        call(i).await;
        times.push(start.elapsed());
    }
    let spent = cpu(server).saturating_sub(cpu_before);
    times.sort_unstable();
    let calls32 = u32::try_from(calls.max(1)).unwrap_or(u32::MAX);
    (times[times.len() / 2], spent / calls32)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut protocol, mut calls) = ("2026-07-28".to_owned(), 5000usize);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--protocol" => protocol = value,
            "--calls" => calls = value.parse().unwrap_or_else(|e| panic!("--calls: {e}")),
            other => panic!("unknown flag {other} (--protocol V, --calls N)"),
        }
    }
    let (backend_url, backend_tid) = serve_on_thread(|| {
        Box::pin(async {
            serve_http(backend(), HttpOptions::new().port(0))
                .await
                .unwrap_or_else(|e| panic!("backend: {e}"))
        })
    });
    let target = backend_url.clone();
    let (proxy_url, proxy_tid) = serve_on_thread(move || {
        Box::pin(async move {
            let remote = Remote::connect(
                "backend",
                Target::Url(target),
                ClientBuilder::new("proxy", "0").timeout(None),
                ProxyOptions::new(),
            )
            .await
            .unwrap_or_else(|e| panic!("proxy connect: {e}"));
            let front = remote
                .builder()
                .await
                .unwrap_or_else(|e| panic!("proxy listing: {e}"))
                .build()
                .unwrap_or_else(|e| panic!("proxy: {e}"));
            serve_http(front, HttpOptions::new().port(0))
                .await
                .unwrap_or_else(|e| panic!("proxy: {e}"))
        })
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    runtime.block_on(async {
        let connect = |url: String| {
            let protocol = protocol.clone();
            async move {
                ClientBuilder::new("stream-bench", "0")
                    .protocol(Protocol::pinned(&protocol))
                    .connect_http(&url)
                    .await
                    .unwrap_or_else(|e| panic!("connect {url}: {e}"))
            }
        };
        let direct = connect(backend_url).await;
        let proxied = connect(proxy_url).await;
        let (direct_p50, direct_cpu) = measure(&direct, "steps", calls, &backend_tid).await;
        let (proxied_p50, proxied_cpu) = measure(&proxied, "steps", calls, &proxy_tid).await;
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!("protocol {protocol}, {calls} sequential calls, 2 progress events each");
        println!("| | direct | proxied | proxied ÷ direct |");
        println!("|---|---:|---:|---:|");
        println!(
            "| server CPU per call | {:.1} µs | {:.1} µs | {:.2}× |",
            us(direct_cpu),
            us(proxied_cpu),
            us(proxied_cpu) / us(direct_cpu).max(f64::MIN_POSITIVE)
        );
        println!(
            "| p50 per call | {:.1} µs | {:.1} µs | +{:.1} µs |",
            us(direct_p50),
            us(proxied_p50),
            us(proxied_p50) - us(direct_p50)
        );
        direct.close().await;
        proxied.close().await;
    });
}
