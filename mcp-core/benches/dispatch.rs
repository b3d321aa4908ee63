//! Micro-benchmarks of the dispatcher hot path, without a transport:
//! bytes in, bytes out, as a transport sees it.
//!
//! Run: `cargo bench -p mcp-core --bench dispatch` (add a case name to run
//! one). Each case prints the median time per operation over several
//! batches. These numbers are for finding regressions on one machine; CI only
//! builds this file (`cargo bench --no-run`), it never times anything.
//! For instruction counts, see `measure` (`DISPATCH_BENCH_OPS`).

#[path = "support/echo_request.rs"]
mod echo_request;

use std::hint::black_box;
use std::time::{Duration, Instant};

use mcp_core::{
    mcp_tool,
    transport::{CallContext, Session},
    InvokeContext, McpServer, McpToolDef,
};
use serde_json::{json, Value};

/// Echo the input back.
#[mcp_tool]
async fn echo(text: String) -> String {
    text
}

/// Measures `op` in batches for about `budget`, printing the median per op.
///
/// With `DISPATCH_BENCH_OPS=N` in the environment, runs `op` exactly N
/// times and prints no timing instead: for instruction counts under
/// `valgrind --tool=callgrind`, where two runs with different N give the
/// instructions per op by difference, free of machine noise.
fn measure(name: &str, budget: Duration, mut op: impl FnMut()) {
    if let Some(n) = std::env::var("DISPATCH_BENCH_OPS")
        .ok()
        .and_then(|n| n.parse::<u32>().ok())
    {
        for _ in 0..n {
            op();
        }
        println!("{name:<40} ran {n} times");
        return;
    }
    for _ in 0..100 {
        op(); // warm up
    }
    let mut per_op = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget || per_op.len() < 5 {
        let batch = 200;
        let t = Instant::now();
        for _ in 0..batch {
            op();
        }
        per_op.push(t.elapsed() / batch);
    }
    per_op.sort();
    println!(
        "{name:<40} {:>12?} / op (median of {} batches)",
        per_op[per_op.len() / 2],
        per_op.len()
    );
}

#[cfg(feature = "otel")]
fn otel_cases(
    rt: &tokio::runtime::Runtime,
    ctx: &CallContext,
    budget: Duration,
    wants: &dyn Fn(&str) -> bool,
) {
    use mcp_core::intercept::Otel;
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt as _;

    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}).to_string();
    let line = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},
        "_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}).to_string();
    // The same call without the interceptor: the baseline of the two below.
    let name = "tools/call legacy, traceparent, no otel interceptor";
    if wants(name) {
        let server = McpServer::builder()
            .tool(echo::tool())
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        round_trip(rt, &server, ctx, init.as_bytes());
        measure(name, budget, || {
            black_box(round_trip(rt, &server, ctx, line.as_bytes()));
        });
    }
    let name = "tools/call legacy, otel interceptor, no subscriber";
    if wants(name) {
        let server = McpServer::builder()
            .interceptor(Otel::new())
            .tool(echo::tool())
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        round_trip(rt, &server, ctx, init.as_bytes());
        measure(name, budget, || {
            black_box(round_trip(rt, &server, ctx, line.as_bytes()));
        });
    }
    let name = "tools/call legacy, otel interceptor, SDK";
    if wants(name) {
        let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
            .with_reader(opentelemetry_sdk::metrics::ManualReader::builder().build())
            .build();
        let server = McpServer::builder()
            .interceptor(Otel::with_meter(meters.meter("bench")))
            .tool(echo::tool())
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let tracer = opentelemetry_sdk::trace::SdkTracerProvider::builder()
            .build()
            .tracer("bench");
        let subscriber =
            tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer));
        // This thread runs the current-thread runtime: its default subscriber
        // sees every span.
        tracing::subscriber::with_default(subscriber, || {
            round_trip(rt, &server, ctx, init.as_bytes());
            measure(name, budget, || {
                black_box(round_trip(rt, &server, ctx, line.as_bytes()));
            });
        });
    }
}

fn round_trip(
    rt: &tokio::runtime::Runtime,
    server: &McpServer,
    ctx: &CallContext,
    line: &[u8],
) -> Vec<u8> {
    rt.block_on(server.handle_frame(line, ctx))
        .unwrap_or_default()
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let budget = Duration::from_millis(700);
    let server = McpServer::builder()
        .tool(echo::tool())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let ctx = CallContext::new().with_session(Session::new());
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}});
    round_trip(&rt, &server, &ctx, init.to_string().as_bytes());

    if wants("tools/call legacy") {
        let line = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"}}}).to_string();
        measure("tools/call legacy (bytes to bytes)", budget, || {
            black_box(round_trip(&rt, &server, &ctx, line.as_bytes()));
        });
    }
    if wants("tools/call 2026") {
        let line = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},
            "_meta": echo_request::modern_meta()}}).to_string();
        measure("tools/call 2026-07-28 (bytes to bytes)", budget, || {
            black_box(round_trip(&rt, &server, &ctx, line.as_bytes()));
        });
    }
    // `interceptors` runs every interceptor case; a case's name, that one.
    let one_case = filter
        .as_deref()
        .is_some_and(|f| f.contains("interceptor("));
    if wants("interceptors") || one_case {
        use mcp_core::intercept::{Hook, Interceptor, Next, Operation, Operations, Request};
        // A no-op interceptor (it passes every request on), and one that
        // wraps the rest of the chain (one boxed future per call).
        struct NoOp;
        impl Interceptor for NoOp {
            fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
                next.pass(req)
            }
        }
        struct Wrapping;
        impl Interceptor for Wrapping {
            fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
                Hook::wrap(next.run(req))
            }
        }
        // One that only looks at `tools/list`: a call never meets it.
        struct ListsOnly;
        impl Interceptor for ListsOnly {
            fn operations(&self) -> Operations {
                Operations::only(Operation::ListTools)
            }
            fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
                next.pass(req)
            }
        }
        let line = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"}}}).to_string();
        for (n, kind) in [
            (1usize, "no-op"),
            (4, "no-op"),
            (1, "wrapping"),
            (1, "tools/list-only"),
        ] {
            let name = format!("tools/call legacy, {n} {kind} interceptor(s)");
            if !wants(&name) && !wants("interceptors") {
                continue;
            }
            let mut builder = McpServer::builder().tool(echo::tool());
            for _ in 0..n {
                builder = match kind {
                    "wrapping" => builder.interceptor(Wrapping),
                    "no-op" => builder.interceptor(NoOp),
                    _ => builder.interceptor(ListsOnly),
                };
            }
            let server = builder.build().unwrap_or_else(|e| panic!("{e}"));
            round_trip(&rt, &server, &ctx, init.to_string().as_bytes());
            measure(&name, budget, || {
                black_box(round_trip(&rt, &server, &ctx, line.as_bytes()));
            });
        }
    }
    // `otel` (with the feature): the `Otel` interceptor with no subscriber,
    // then with the SDK's tracer (spans sampled, then dropped: no
    // exporter) and meter (aggregated in memory) installed.
    #[cfg(feature = "otel")]
    if filter.as_deref().is_none_or(|f| f.contains("otel")) {
        otel_cases(&rt, &ctx, budget, &wants);
    }
    if wants("tools/list") {
        for n in [10usize, 100, 1000] {
            let many = McpServer::builder()
                .tools((0..n).map(|i| {
                    McpToolDef::new(
                        format!("tool_{i}"),
                        "A tool among many",
                        json!({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}),
                        |_args, _ctx: InvokeContext| async { "ok" },
                    )
                }))
                .build()
                .unwrap_or_else(|e| panic!("{e}"));
            let line = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}).to_string();
            measure(&format!("tools/list with {n} tools"), budget, || {
                black_box(round_trip(&rt, &many, &ctx, line.as_bytes()));
            });
        }
    }
    if wants("1 MiB") {
        // The 1 MiB echo measures arguments and encoding: its result is
        // sent whole (the result size guard would cut it).
        let whole = McpServer::builder()
            .no_result_limit()
            .tool(echo::tool())
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let ctx = CallContext::new().with_session(Session::new());
        round_trip(&rt, &whole, &ctx, init.to_string().as_bytes());
        let big = "x".repeat(1 << 20);
        let line = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":big}}}).to_string();
        measure("tools/call with a 1 MiB argument", budget, || {
            black_box(round_trip(&rt, &whole, &ctx, line.as_bytes()));
        });
    }
    // `http` runs both HTTP cases; `http service tools/call 2026` one of them.
    if wants("http") || filter.as_deref().is_some_and(|f| f.starts_with("http")) {
        http_cases(&rt, &server, budget, &wants);
    }
    if wants("batch") {
        let batch: Vec<Value> = (0..16)
            .map(|i| json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}))
            .collect();
        let line = Value::Array(batch).to_string();
        measure("batch of 16 tools/call", budget, || {
            black_box(round_trip(&rt, &server, &ctx, line.as_bytes()));
        });
    }
}

/// The HTTP service without sockets: a POST built in memory through
/// `McpHttpService::handle` to the collected response body. What this costs
/// beyond the matching bytes-to-bytes case is the HTTP layer's own work.
fn http_cases(
    rt: &tokio::runtime::Runtime,
    server: &McpServer,
    budget: Duration,
    wants: &dyn Fn(&str) -> bool,
) {
    use http_body_util::BodyExt;
    use mcp_core::{transport::http::McpHttpService, HttpOptions};

    let service = McpHttpService::new(server.clone(), HttpOptions::stateless())
        .for_connection(Some(([127, 0, 0, 1], 40000).into()));
    for (name, is_modern) in [("legacy", false), ("2026-07-28", true)] {
        let case = format!("http service tools/call {name}");
        if !wants(&case) && !wants("http") {
            continue;
        }
        let body = echo_request::echo_body(is_modern);
        measure(&case, budget, || {
            let req = echo_request::echo_post(&body, is_modern);
            let bytes = rt.block_on(async {
                let response = service.handle(req).await;
                assert_eq!(response.status(), 200);
                response.into_body().collect().await.map(|b| b.to_bytes())
            });
            black_box(bytes.unwrap_or_default());
        });
    }
}
