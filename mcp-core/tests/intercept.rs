//! Interceptors (issue 12): onion order across server and tool
//! interceptors, short-circuit before the arguments are parsed, argument
//! rewriting, outcome replacement, extensions reaching the handler, the
//! lifecycle hooks, the same chain for both eras, every round of a
//! 2026-07-28 multi round-trip call (final-round flag), and the same chain
//! over HTTP. Requests go in as bytes, the way transports hand them over.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use common::guard;
use mcp_core::intercept::{
    Answer, Hook, Interceptor, Next, Operation, Operations, Outcome, Request,
};
use mcp_core::{
    mcp_tool,
    protocol::{CallToolResult, ErrorObject},
    transport::CallContext,
    InvokeContext, McpServer, McpServerBuilder, McpToolDef,
};
use serde_json::{json, Value};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, line: impl Into<String>) {
    log.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(line.into());
}

fn lines(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Logs `name:request` and `name:<op>` on the way in and `name:done` on
/// the way out.
struct Tracer {
    name: &'static str,
    log: Log,
}

impl Interceptor for Tracer {
    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        push(&self.log, format!("{}:request {}", self.name, req.method()));
        match req.operation() {
            Operation::CallTool => push(
                &self.log,
                format!("{}:tool {}", self.name, req.tool_name().unwrap_or("?")),
            ),
            Operation::Initialize => push(&self.log, format!("{}:initialize", self.name)),
            Operation::Discover => push(&self.log, format!("{}:discover", self.name)),
            _ => {}
        }
        Hook::wrap(async move {
            let outcome = next.run(req).await;
            push(&self.log, format!("{}:done", self.name));
            outcome
        })
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Count {
    n: u32,
}

static HANDLER_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Needs an integer `n`.
#[mcp_tool(description = "Counts")]
async fn count(#[args] args: Count) -> String {
    HANDLER_RUNS.fetch_add(1, Ordering::SeqCst);
    format!("n={}", args.n)
}

#[derive(Debug, PartialEq)]
struct Tenant(&'static str);

/// Says which tenant the request belongs to.
#[mcp_tool(description = "Reports the tenant")]
async fn tenant(ctx: InvokeContext) -> String {
    match ctx.extension::<Tenant>() {
        Some(Tenant(t)) => format!("tenant={t}"),
        None => "no tenant".into(),
    }
}

/// Asks before deleting.
#[mcp_tool(description = "Asks first")]
async fn careful(ctx: InvokeContext) -> String {
    if ctx.confirm("Delete?").await.is_accepted() {
        "deleted".into()
    } else {
        "kept".into()
    }
}

fn echo_tool(log: &Log) -> McpToolDef {
    let log = Arc::clone(log);
    McpToolDef::new(
        "echo",
        "Echoes `text`",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        move |args, _ctx: InvokeContext| {
            let log = Arc::clone(&log);
            async move {
                push(&log, "handler");
                args.get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            }
        },
    )
}

fn base(log: &Log) -> McpServerBuilder {
    McpServer::builder()
        .tool(echo_tool(log))
        .tool_interceptor(
            "echo",
            Tracer {
                name: "tool",
                log: Arc::clone(log),
            },
        )
        .tool(count::tool())
        .tool(tenant::tool())
        .tool(careful::tool())
}

const MODERN_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

/// One request as bytes (2026-07-28 when `modern`), its reply parsed.
async fn send(
    server: &McpServer,
    ctx: &CallContext,
    method: &str,
    params: Value,
    modern: bool,
) -> Value {
    let mut params = params;
    if modern {
        params["_meta"] = serde_json::from_str(MODERN_META).expect("meta");
    }
    let request =
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let reply = guard(&request, server.handle_frame(request.as_bytes(), ctx))
        .await
        .unwrap_or_else(|| panic!("no reply to {request}"));
    serde_json::from_slice(&reply).expect("JSON reply")
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {reply}"))
}

#[tokio::test]
async fn onion_order_server_then_tool_interceptors_for_both_eras() {
    let log: Log = Arc::default();
    let server = base(&log)
        .interceptor(Tracer {
            name: "a",
            log: Arc::clone(&log),
        })
        .interceptor(Tracer {
            name: "b",
            log: Arc::clone(&log),
        })
        .build()
        .expect("builds");
    let ctx = CallContext::new().with_session(mcp_core::transport::Session::new());
    for modern in [false, true] {
        let reply = send(
            &server,
            &ctx,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
            modern,
        )
        .await;
        assert_eq!(text(&reply), "hi", "{reply}");
        assert_eq!(
            lines(&log),
            [
                "a:request tools/call",
                "a:tool echo",
                "b:request tools/call",
                "b:tool echo",
                "tool:request tools/call",
                "tool:tool echo",
                "handler",
                "tool:done",
                "b:done",
                "a:done",
            ],
            "modern: {modern}"
        );
    }
    // The lifecycle methods reach the interceptors; ping never does.
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let reply = send(&server, &ctx, "initialize", init, false).await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    let reply = send(&server, &ctx, "server/discover", json!({}), true).await;
    assert!(reply["result"]["supportedVersions"].is_array(), "{reply}");
    let reply = send(&server, &ctx, "ping", json!({}), false).await;
    assert!(reply["result"].is_object(), "{reply}");
    assert_eq!(
        lines(&log),
        [
            "a:request initialize",
            "a:initialize",
            "b:request initialize",
            "b:initialize",
            "b:done",
            "a:done",
            "a:request server/discover",
            "a:discover",
            "b:request server/discover",
            "b:discover",
            "b:done",
            "a:done",
        ]
    );
}

/// Denies `count` before its arguments are parsed.
struct Deny;

impl Interceptor for Deny {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        if req.tool_name() == Some("count") {
            return Hook::done(Outcome::tool(CallToolResult::error("access denied")));
        }
        if req.tool_name() == Some("echo")
            && req.arguments().is_some_and(|a| a.contains_key("secret"))
        {
            return Hook::done(Outcome::error(ErrorObject::invalid_params("no secrets")));
        }
        next.pass(req)
    }
}

#[test]
fn an_interceptor_for_a_tool_that_does_not_exist_is_a_build_error() {
    let err = McpServer::builder()
        .tool(count::tool())
        .tool_interceptor("cuont", Deny)
        .build()
        .expect_err("no such tool");
    assert!(
        matches!(err, mcp_core::BuildError::UnknownTool(ref n) if n == "cuont"),
        "{err}"
    );
}

#[tokio::test]
async fn a_denied_call_never_reaches_the_parser_or_the_handler() {
    let log: Log = Arc::default();
    let ctx = CallContext::new();
    // Without the interceptor, arguments that do not parse are refused by
    // the parser…
    let plain = base(&log).build().expect("builds");
    let reply = send(
        &plain,
        &ctx,
        "tools/call",
        json!({"name": "count", "arguments": {"n": "x"}}),
        false,
    )
    .await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(text(&reply).contains('n'), "the parser's message: {reply}");
    // …with it, the denial comes first: the parser never ran.
    let guarded = base(&log).interceptor(Deny).build().expect("builds");
    let before = HANDLER_RUNS.load(Ordering::SeqCst);
    for args in [json!({"n": "x"}), json!({"n": 3})] {
        let reply = send(
            &guarded,
            &ctx,
            "tools/call",
            json!({"name": "count", "arguments": args}),
            true,
        )
        .await;
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        assert_eq!(text(&reply), "access denied", "{reply}");
    }
    assert_eq!(
        HANDLER_RUNS.load(Ordering::SeqCst),
        before,
        "the handler never ran"
    );
    // A JSON-RPC error short-circuits the same way.
    let reply = send(
        &guarded,
        &ctx,
        "tools/call",
        json!({"name": "echo", "arguments": {"secret": 1}}),
        false,
    )
    .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(
        lines(&log).iter().all(|l| l != "handler"),
        "the handler never ran"
    );
}

/// Rewrites arguments, attaches an extension, and seals every tool result
/// into an envelope.
struct Rewrite;

impl Interceptor for Rewrite {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, mut req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        assert_eq!(req.operation(), Operation::CallTool);
        if let Some(args) = req.arguments_mut() {
            if args.contains_key("text") {
                args.insert("text".into(), json!("rewritten"));
            }
        }
        if req.extensions().get::<Tenant>().is_none() {
            req.extensions_mut().insert(Tenant("from-interceptor"));
        }
        let tool = req.tool_name().unwrap_or_default().to_owned();
        Hook::wrap(async move {
            match next.run(req).await {
                Outcome::Answer(Answer::Tool(result)) => {
                    let data = result
                        .content
                        .first()
                        .map(|c| json!(c))
                        .unwrap_or(Value::Null);
                    let envelope = json!({"ok": result.is_error != Some(true), "data": data, "meta": {"tool": tool}});
                    Outcome::tool(CallToolResult::text(envelope.to_string()))
                }
                other => other,
            }
        })
    }
}

#[tokio::test]
async fn arguments_are_rewritten_outcomes_replaced_and_extensions_reach_the_handler() {
    let log: Log = Arc::default();
    let server = base(&log).interceptor(Rewrite).build().expect("builds");
    let ctx = CallContext::new();
    let reply = send(
        &server,
        &ctx,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
        false,
    )
    .await;
    let envelope: Value = serde_json::from_str(text(&reply)).expect("an envelope");
    assert_eq!(envelope["ok"], true, "{envelope}");
    assert_eq!(envelope["data"]["text"], "rewritten", "{envelope}");
    assert_eq!(envelope["meta"]["tool"], "echo", "{envelope}");

    let reply = send(&server, &ctx, "tools/call", json!({"name": "tenant"}), true).await;
    let envelope: Value = serde_json::from_str(text(&reply)).expect("an envelope");
    assert_eq!(
        envelope["data"]["text"], "tenant=from-interceptor",
        "{envelope}"
    );
    // The transport's caller attaches one first: the interceptor sees it.
    let ctx = CallContext::new().with_extension(Tenant("from-caller"));
    let reply = send(
        &server,
        &ctx,
        "tools/call",
        json!({"name": "tenant"}),
        false,
    )
    .await;
    let envelope: Value = serde_json::from_str(text(&reply)).expect("an envelope");
    assert_eq!(envelope["data"]["text"], "tenant=from-caller", "{envelope}");
}

/// Counts rounds and final rounds of calls.
#[derive(Default)]
struct Audit {
    rounds: AtomicUsize,
    retries: AtomicUsize,
    finals: AtomicUsize,
}

impl Interceptor for Audit {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        self.rounds.fetch_add(1, Ordering::SeqCst);
        if req.is_retry() {
            self.retries.fetch_add(1, Ordering::SeqCst);
        }
        Hook::wrap(async move {
            let outcome = next.run(req).await;
            if !matches!(outcome, Outcome::InputRequired(_)) {
                self.finals.fetch_add(1, Ordering::SeqCst);
            }
            outcome
        })
    }
}

#[tokio::test]
async fn every_round_of_a_multi_round_trip_call_runs_the_chain_and_one_is_final() {
    let log: Log = Arc::default();
    let audit = Arc::new(Audit::default());
    let server = base(&log)
        .interceptor(Arc::clone(&audit))
        .build()
        .expect("builds");
    let ctx = CallContext::new();
    let first = send(
        &server,
        &ctx,
        "tools/call",
        json!({"name": "careful"}),
        true,
    )
    .await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let key = first["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("one question");
    let retry = json!({
        "name": "careful",
        "requestState": first["result"]["requestState"],
        "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}},
    });
    let second = send(&server, &ctx, "tools/call", retry, true).await;
    assert_eq!(second["result"]["resultType"], "complete", "{second}");
    assert_eq!(text(&second), "deleted", "{second}");
    assert_eq!(audit.rounds.load(Ordering::SeqCst), 2);
    assert_eq!(audit.retries.load(Ordering::SeqCst), 1);
    assert_eq!(
        audit.finals.load(Ordering::SeqCst),
        1,
        "the audit fires once"
    );
}

#[cfg(feature = "http")]
#[tokio::test]
async fn the_same_chain_runs_over_http() {
    use http_body_util::BodyExt;
    let log: Log = Arc::default();
    let server = base(&log)
        .interceptor(Tracer {
            name: "a",
            log: Arc::clone(&log),
        })
        .build()
        .expect("builds");
    let service =
        mcp_core::transport::http::McpHttpService::new(server, mcp_core::HttpOptions::stateless())
            .for_connection(Some(([127, 0, 0, 1], 40000).into()));
    for modern in [false, true] {
        let mut body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "over http"}}});
        let mut req = hyper::Request::builder()
            .method("POST")
            .uri("/mcp")
            .header("host", "127.0.0.1:40000")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if modern {
            body["params"]["_meta"] = serde_json::from_str(MODERN_META).expect("meta");
            req = req
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "echo");
        }
        let req = req
            .body(http_body_util::Full::new(bytes::Bytes::from(
                body.to_string(),
            )))
            .expect("request");
        let response = guard("POST", service.handle(req)).await;
        assert_eq!(response.status(), 200);
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        let reply: Value = serde_json::from_slice(&bytes).expect("JSON");
        assert_eq!(text(&reply), "over http", "{reply}");
        assert_eq!(
            lines(&log),
            [
                "a:request tools/call",
                "a:tool echo",
                "tool:request tools/call",
                "tool:tool echo",
                "handler",
                "tool:done",
                "a:done"
            ],
            "modern: {modern}"
        );
    }
    // A layer in front of the service attaches extensions to the hyper
    // request: the handler sees them.
    let mut ext = mcp_core::context::Extensions::new();
    ext.insert(Tenant("from-a-layer"));
    let body =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "tenant"}});
    let mut req = hyper::Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", "127.0.0.1:40000")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(http_body_util::Full::new(bytes::Bytes::from(
            body.to_string(),
        )))
        .expect("request");
    req.extensions_mut().insert(ext);
    let response = guard("POST", service.handle(req)).await;
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let reply: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(text(&reply), "tenant=from-a-layer", "{reply}");
}

/// Logs `name method` for each request it sees, and sees only `ops`.
struct Only {
    name: &'static str,
    ops: Operations,
    log: Log,
}

impl Interceptor for Only {
    fn operations(&self) -> Operations {
        self.ops
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        push(&self.log, format!("{} {}", self.name, req.method()));
        next.pass(req)
    }
}

/// An interceptor is skipped for the operations it leaves out (the others
/// keep their order), a server whose interceptors all leave out a method
/// runs it as without interceptors (the lifecycle answered as usual), and
/// a tool's own interceptor that leaves out `tools/call` never runs.
#[tokio::test]
async fn interceptors_see_only_the_operations_they_declare() {
    let log: Log = Arc::default();
    let only = |name, ops| Only {
        name,
        ops,
        log: Arc::clone(&log),
    };
    let server = McpServer::builder()
        .tool(echo_tool(&log))
        .tool_interceptor("echo", only("tool-lists", Operation::ListTools.into()))
        .interceptor(only("lists", Operation::ListTools | Operation::ListPrompts))
        .interceptor(only("all", Operations::ALL))
        .interceptor(only("none", Operations::NONE))
        .interceptor(only("calls", Operations::only(Operation::CallTool)))
        .build()
        .expect("builds");
    let ctx = CallContext::new().with_session(mcp_core::transport::Session::new());
    for modern in [false, true] {
        let args = json!({"name": "echo", "arguments": {"text": "hi"}});
        let reply = send(&server, &ctx, "tools/call", args, modern).await;
        assert_eq!(text(&reply), "hi", "{reply}");
        assert_eq!(
            lines(&log),
            ["all tools/call", "calls tools/call", "handler"],
            "modern: {modern}"
        );
        let reply = send(&server, &ctx, "tools/list", json!({}), modern).await;
        assert_eq!(reply["result"]["tools"][0]["name"], "echo", "{reply}");
        assert_eq!(lines(&log), ["lists tools/list", "all tools/list"]);
    }
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let reply = send(&server, &ctx, "initialize", init.clone(), false).await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    assert_eq!(lines(&log), ["all initialize"]);

    // Nobody sees the lifecycle: it is answered before registration, the
    // same as on a server without interceptors.
    let calls_only = McpServer::builder()
        .tool(echo_tool(&log))
        .interceptor(only("calls", Operation::CallTool.into()))
        .build()
        .expect("builds");
    let reply = send(&calls_only, &ctx, "initialize", init, false).await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    let reply = send(&calls_only, &ctx, "server/discover", json!({}), true).await;
    assert!(reply["result"]["supportedVersions"].is_array(), "{reply}");
    let reply = send(&calls_only, &ctx, "tools/list", json!({}), false).await;
    assert_eq!(reply["result"]["tools"][0]["name"], "echo", "{reply}");
    assert!(lines(&log).is_empty());
}
