//! The built-in interceptors (issue 12): `Timeout` ends a call with a tool
//! error and drops its work, `ConcurrencyLimit` caps calls per tool and per
//! principal, `Trace` emits one span and one ending event per request.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use common::guard;
use mcp_core::intercept::{ConcurrencyLimit, Timeout, Trace};
use mcp_core::{transport::CallContext, InvokeContext, McpServer, McpServerBuilder, McpToolDef};
use serde_json::{json, Value};
use tokio::sync::Notify;

/// Sets its flag when dropped: tells that a handler's future was dropped.
struct OnDrop(Arc<AtomicBool>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// `sleep` sleeps an hour (and records being dropped); `hold` waits for
/// `release` when `{"hold": true}`; `quick` answers at once.
struct Tools {
    dropped: Arc<AtomicBool>,
    started: Arc<Notify>,
    release: Arc<Notify>,
}

impl Tools {
    fn new() -> Self {
        Self {
            dropped: Arc::default(),
            started: Arc::default(),
            release: Arc::default(),
        }
    }

    fn builder(&self) -> McpServerBuilder {
        let dropped = Arc::clone(&self.dropped);
        let (started, release) = (Arc::clone(&self.started), Arc::clone(&self.release));
        McpServer::builder()
            .tool(McpToolDef::new(
                "sleep",
                "Sleeps an hour",
                json!({"type": "object"}),
                move |_args, _ctx: InvokeContext| {
                    let guard = OnDrop(Arc::clone(&dropped));
                    async move {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        drop(guard);
                        "woke up"
                    }
                },
            ))
            .tool(McpToolDef::new(
                "hold",
                "Waits for release when asked to",
                json!({"type": "object"}),
                move |args, _ctx: InvokeContext| {
                    let (started, release) = (Arc::clone(&started), Arc::clone(&release));
                    async move {
                        if args.get("hold") == Some(&Value::Bool(true)) {
                            started.notify_one();
                            release.notified().await;
                        }
                        "done"
                    }
                },
            ))
            .tool(McpToolDef::new(
                "quick",
                "Answers at once",
                json!({"type": "object"}),
                |_args, _ctx: InvokeContext| async { "quick" },
            ))
    }
}

async fn call(server: &McpServer, ctx: &CallContext, name: &str, args: Value) -> Value {
    // Distinct ids: calls without a session share the server's id scope.
    static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": args}})
    .to_string();
    let reply = server
        .handle_frame(request.as_bytes(), ctx)
        .await
        .unwrap_or_else(|| panic!("no reply to {request}"));
    serde_json::from_slice(&reply).expect("JSON reply")
}

fn text(reply: &Value) -> String {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {reply}"))
        .to_owned()
}

#[tokio::test(start_paused = true)]
async fn a_call_over_its_time_limit_is_a_tool_error_and_its_work_is_dropped() {
    let tools = Tools::new();
    let server = tools
        .builder()
        .interceptor(Timeout::new(Duration::from_secs(5)).tool("quick", Duration::from_millis(1)))
        .build()
        .expect("builds");
    let ctx = CallContext::new();
    // Paused time: the runtime jumps to the deadline, nothing really waits.
    let reply = call(&server, &ctx, "sleep", json!({})).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(text(&reply), "`sleep` timed out after 5s");
    assert!(
        tools.dropped.load(Ordering::SeqCst),
        "the handler was dropped"
    );
    // A call within its limit answers as usual.
    let reply = call(&server, &ctx, "quick", json!({})).await;
    assert_eq!(text(&reply), "quick", "{reply}");
}

#[tokio::test]
async fn calls_over_a_cap_are_refused_at_once_per_tool_and_per_principal() {
    let tools = Tools::new();
    let server = tools
        .builder()
        .interceptor(ConcurrencyLimit::new().tool("hold", 1).per_principal(2))
        .build()
        .expect("builds");
    let alice = CallContext::new().with_principal("alice");
    let bob = CallContext::new().with_principal("bob");

    let first = tokio::spawn({
        let (server, alice) = (server.clone(), alice.clone());
        async move { call(&server, &alice, "hold", json!({"hold": true})).await }
    });
    guard("the first call starts", tools.started.notified()).await;
    // The tool's cap (1) is full, for everyone.
    for ctx in [&alice, &bob] {
        let reply = call(&server, ctx, "hold", json!({})).await;
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        assert!(text(&reply).contains("too many calls of `hold`"), "{reply}");
    }
    // Other tools still run.
    assert_eq!(
        text(&call(&server, &bob, "quick", json!({})).await),
        "quick"
    );
    tools.release.notify_one();
    let reply = guard("the first call ends", first).await.expect("no panic");
    assert_eq!(text(&reply), "done", "{reply}");
    // Its slot is free again.
    assert_eq!(
        text(&call(&server, &alice, "hold", json!({})).await),
        "done"
    );

    // One call per principal: alice's second is refused, bob is served.
    let server = tools
        .builder()
        .interceptor(ConcurrencyLimit::new().per_principal(1))
        .build()
        .expect("builds");
    let first = tokio::spawn({
        let (server, alice) = (server.clone(), alice.clone());
        async move { call(&server, &alice, "hold", json!({"hold": true})).await }
    });
    guard("alice's call starts", tools.started.notified()).await;
    let reply = call(&server, &alice, "quick", json!({})).await;
    assert_eq!(
        text(&reply),
        "too many calls of yours at once; try again when one has finished"
    );
    assert_eq!(
        text(&call(&server, &bob, "quick", json!({})).await),
        "quick"
    );
    tools.release.notify_one();
    assert_eq!(
        text(&guard("alice's call ends", first).await.expect("no panic")),
        "done"
    );
    assert_eq!(
        text(&call(&server, &alice, "quick", json!({})).await),
        "quick"
    );
}

/// Records span names and each event's `outcome` field.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<String>>,
    next_id: std::sync::atomic::AtomicU64,
}

struct OutcomeField(Option<String>);

impl tracing::field::Visit for OutcomeField {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "outcome" {
            self.0 = Some(value.to_owned());
        }
    }
    fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        self.push(format!("span {}", span.metadata().name()));
        tracing::span::Id::from_u64(self.next_id.fetch_add(1, Ordering::SeqCst) + 1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut outcome = OutcomeField(None);
        event.record(&mut outcome);
        if let Some(outcome) = outcome.0 {
            self.push(format!("event {outcome}"));
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

impl Recorder {
    fn push(&self, line: String) {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line);
    }
}

#[test]
fn trace_emits_a_span_and_an_outcome_per_request() {
    let recorder = Arc::new(Recorder::default());
    let tools = Tools::new();
    let server = tools.builder().interceptor(Trace).build().expect("builds");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    tracing::subscriber::with_default(Arc::clone(&recorder), || {
        rt.block_on(async {
            let ctx = CallContext::new();
            assert_eq!(
                text(&call(&server, &ctx, "quick", json!({})).await),
                "quick"
            );
            let reply = call(&server, &ctx, "nope", json!({})).await;
            assert_eq!(reply["error"]["code"], -32602, "{reply}");
        });
    });
    let seen = recorder
        .seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    assert_eq!(
        seen,
        [
            "span mcp.request",
            "event ok",
            "span mcp.request",
            "event error"
        ]
    );
}

/// `RateLimit` counts calls started per window: past a principal's or a
/// tool's budget a call is a tool error saying when to retry, other
/// principals and tools keep theirs, and the budget comes back with time
/// (the clock is tokio's, paused here).
#[tokio::test(start_paused = true)]
async fn rate_limit_caps_calls_per_window_per_principal_and_per_tool() {
    use mcp_core::intercept::RateLimit;
    let tools = Tools::new();
    let minute = Duration::from_secs(60);
    let server = tools
        .builder()
        .interceptor(
            RateLimit::new()
                .per_principal(2, minute)
                .tool("quick", 3, minute),
        )
        .build()
        .expect("builds");
    let alice = CallContext::new().with_principal("alice");
    let bob = CallContext::new().with_principal("bob");
    for _ in 0..2 {
        assert_eq!(
            text(&call(&server, &alice, "quick", json!({})).await),
            "quick"
        );
    }
    let refused = call(&server, &alice, "quick", json!({})).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        text(&refused).contains("too many calls of yours; try again in 30 s"),
        "{refused}"
    );
    // Bob has his own budget; the tool's (3 a minute) is then spent.
    assert_eq!(
        text(&call(&server, &bob, "quick", json!({})).await),
        "quick"
    );
    let refused = call(&server, &bob, "quick", json!({})).await;
    assert!(
        text(&refused).contains("too many calls of `quick`"),
        "{refused}"
    );
    // A third of the minute gives the tool one call back, and Alice one.
    tokio::time::advance(Duration::from_secs(30)).await;
    assert_eq!(
        text(&call(&server, &alice, "quick", json!({})).await),
        "quick"
    );
    let refused = call(&server, &alice, "quick", json!({})).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
}
