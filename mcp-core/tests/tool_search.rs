//! Tool search (`McpServerBuilder::tool_search`): the listing of the two
//! search tools and the pinned ones, the ranking, the visibility and
//! scope filtering shared with `tools/list`, `call_tool` behaving as a
//! direct `tools/call` (scopes, interceptors, argument errors, unknown
//! tools, progress, cancellation, time limits, tasks, state handles),
//! both eras (in process and over 2026-07-28 HTTP, where the transport's
//! early scope check sees the named tool), the reserved names and live
//! catalog changes.

mod common;
#[cfg(feature = "http")]
#[path = "common/raw_http.rs"]
mod raw_http;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use common::guard;
use mcp_core::context::AuthInfo;
use mcp_core::intercept::{Hook, Interceptor, Next, Operation, Outcome, Request};
use mcp_core::protocol::{CallToolResult, ErrorObject};
use mcp_core::testing::TestClient;
use mcp_core::tool_search::ToolSearch;
use mcp_core::{
    mcp_tool, transport::CallContext, BuildError, InvokeContext, McpServer, McpServerBuilder,
    McpToolDef,
};
use serde_json::{json, Value};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, line: String) {
    log.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(line);
}

fn lines(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Logs `<name> <tool> <arguments>` for every tool call it sees.
struct Tracer {
    name: &'static str,
    log: Log,
}

impl Interceptor for Tracer {
    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        if req.operation() == Operation::CallTool {
            let args = req.params().get("arguments").cloned().unwrap_or_default();
            let line = format!("{} {} {args}", self.name, req.tool_name().unwrap_or("?"));
            push(&self.log, line);
        }
        next.pass(req)
    }
}

/// Refuses every call of the tool `denied`.
struct Deny(&'static str);

impl Interceptor for Deny {
    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        if req.tool_name() == Some(self.0) {
            return Hook::done(Outcome::error(ErrorObject::invalid_request("denied here")));
        }
        next.pass(req)
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Count {
    n: u32,
}

/// Counts to `n`.
#[mcp_tool(description = "Counts up to a number")]
async fn count(#[args] args: Count) -> String {
    format!("n={}", args.n)
}

/// Told when `slow` sees its call cancelled.
static SAW_CANCEL: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Reports progress, then waits until cancelled when `wait` is set.
#[mcp_tool(description = "Reports progress on slow work")]
async fn slow(wait: Option<bool>, ctx: InvokeContext) -> String {
    for step in 1..=3 {
        ctx.report_progress(f64::from(step), Some(3.0), None).await;
    }
    if wait.unwrap_or(false) {
        ctx.cancelled().await;
        SAW_CANCEL.notify_one();
        return "cancelled".into();
    }
    "done".into()
}

fn tool(name: &str, description: &str, schema: Value) -> McpToolDef {
    let answer = format!("{name} ran");
    McpToolDef::new(
        name,
        description,
        schema,
        move |args, _ctx: InvokeContext| {
            let answer = format!("{answer} with {}", Value::Object(args));
            async move { answer }
        },
    )
}

/// A caller who may see `staff_report`.
struct Staff;

fn builder(log: &Log) -> McpServerBuilder {
    let city = json!({"type": "object", "properties": {
        "city": {"type": "string", "description": "City name"},
        "days": {"type": "integer", "description": "How many days ahead"}
    }});
    McpServer::builder()
        .tool(tool(
            "echo",
            "Echo the input back",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        ))
        .tool(
            tool("get_weather", "Current conditions in a city", city.clone())
                .with_title("Weather now"),
        )
        .tool(tool("forecast", "The weather of the next days", city))
        .tool(
            tool(
                "admin_secret",
                "Read the weather station secret",
                json!({"type": "object"}),
            )
            .with_scopes(["admin"]),
        )
        .tool(
            tool(
                "staff_report",
                "The weather staff report",
                json!({"type": "object"}),
            )
            .with_visible(|ctx| ctx.caller::<Staff>().is_some()),
        )
        .tool(
            McpToolDef::new(
                "sleepy",
                "Sleeps past its limit",
                json!({"type": "object"}),
                |_, _| async {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    "woke"
                },
            )
            .with_timeout(Duration::from_millis(20)),
        )
        .tool(count::tool())
        .tool(slow::tool())
        .interceptor(Tracer {
            name: "server",
            log: Arc::clone(log),
        })
        .tool_interceptor(
            "echo",
            Tracer {
                name: "echo-chain",
                log: Arc::clone(log),
            },
        )
        .tool_interceptor("count", Deny("count"))
}

fn server(log: &Log) -> McpServer {
    builder(log)
        .tool_search(ToolSearch::new().pin(["echo", "staff_report"]))
        .build()
        .expect("server")
}

const MODERN_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

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
        json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
    let reply = guard(&request, server.handle_frame(request.as_bytes(), ctx))
        .await
        .unwrap_or_else(|| panic!("no reply to {request}"));
    serde_json::from_slice(&reply).expect("JSON reply")
}

fn via_call_tool(name: &str, arguments: Value) -> Value {
    json!({"name": "call_tool", "arguments": {"name": name, "arguments": arguments}})
}

fn listed_names(reply: &Value) -> Vec<String> {
    reply["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {reply}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn found_names(reply: &Value) -> Vec<String> {
    let structured = &reply["result"]["structuredContent"]["tools"];
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let from_text: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {reply}"));
    assert_eq!(
        &from_text["tools"], structured,
        "the text renders the structured content"
    );
    structured
        .as_array()
        .unwrap_or_else(|| panic!("no structured tools in {reply}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn search(server: &McpServer, ctx: &CallContext, args: Value, modern: bool) -> Value {
    send(
        server,
        ctx,
        "tools/call",
        json!({"name": "search_tools", "arguments": args}),
        modern,
    )
    .await
}

/// The reply without what differs between two calls of the same thing.
fn comparable(mut reply: Value) -> Value {
    reply["id"] = Value::Null;
    reply
}

#[tokio::test]
async fn the_listing_is_the_two_search_tools_and_the_visible_pinned_ones() {
    let log = Log::default();
    let server = server(&log);
    for modern in [false, true] {
        let plain = send(
            &server,
            &CallContext::new(),
            "tools/list",
            json!({}),
            modern,
        )
        .await;
        assert_eq!(
            listed_names(&plain),
            ["search_tools", "call_tool", "echo"],
            "{plain}"
        );
        let search = &plain["result"]["tools"][0];
        assert_eq!(search["inputSchema"]["required"], json!(["query"]));
        assert_eq!(search["outputSchema"]["required"], json!(["tools"]));
        assert_eq!(
            plain["result"]["tools"][1]["inputSchema"]["required"],
            json!(["name"])
        );
        // A pinned tool the caller may not see stays hidden.
        let staff = CallContext::new().with_caller(Arc::new(Staff));
        let listed = send(&server, &staff, "tools/list", json!({}), modern).await;
        assert_eq!(
            listed_names(&listed),
            ["search_tools", "call_tool", "echo", "staff_report"]
        );
    }
    // Off, the whole catalog is listed as before.
    let off = builder(&log).build().expect("server");
    let all = send(&off, &CallContext::new(), "tools/list", json!({}), false).await;
    assert!(listed_names(&all).contains(&"forecast".to_owned()), "{all}");
    assert!(
        !listed_names(&all).contains(&"search_tools".to_owned()),
        "{all}"
    );
}

#[tokio::test]
async fn search_ranks_names_above_descriptions_and_honours_the_limit() {
    let log = Log::default();
    let server = server(&log);
    let ctx = CallContext::new();
    for modern in [false, true] {
        let reply = search(&server, &ctx, json!({"query": "weather"}), modern).await;
        // `get_weather` by name and title; `forecast` by description only.
        assert_eq!(found_names(&reply), ["get_weather", "forecast"], "{reply}");
        let first = &reply["result"]["structuredContent"]["tools"][0];
        assert_eq!(first["title"], "Weather now");
        assert_eq!(first["description"], "Current conditions in a city");
        assert_eq!(first["inputSchema"]["properties"]["city"]["type"], "string");
        assert_eq!(reply["result"].get("isError"), None, "{reply}");
    }
    // Parameter names and prefixes count; camel and snake case split.
    // `forecast` has `days` in its description too.
    let reply = search(&server, &ctx, json!({"query": "days"}), false).await;
    assert_eq!(found_names(&reply), ["forecast", "get_weather"], "{reply}");
    let reply = search(&server, &ctx, json!({"query": "forecastDays"}), false).await;
    assert_eq!(found_names(&reply)[0], "forecast", "{reply}");
    let reply = search(
        &server,
        &ctx,
        json!({"query": "weather", "limit": 1}),
        false,
    )
    .await;
    assert_eq!(found_names(&reply), ["get_weather"]);
    let reply = search(
        &server,
        &ctx,
        json!({"query": "nothing matches xyzzy"}),
        false,
    )
    .await;
    assert!(found_names(&reply).is_empty(), "{reply}");
    // Bad arguments are a tool error the model can read, as for any tool.
    let reply = search(&server, &ctx, json!({"limit": "many"}), false).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("Invalid arguments"), "{text}");
    assert!(text.contains("query"), "{text}");
}

#[tokio::test]
async fn search_shows_only_what_the_caller_may_see() {
    let log = Log::default();
    let server = server(&log);
    let query = json!({"query": "weather", "limit": 20});
    let anyone = search(&server, &CallContext::new(), query.clone(), false).await;
    let names = found_names(&anyone);
    assert!(!names.contains(&"admin_secret".to_owned()), "{anyone}");
    assert!(!names.contains(&"staff_report".to_owned()), "{anyone}");
    let admin = CallContext::new().with_extension(AuthInfo::new("root").with_scopes(["admin"]));
    let names = found_names(&search(&server, &admin, query.clone(), true).await);
    assert!(names.contains(&"admin_secret".to_owned()), "{names:?}");
    assert!(!names.contains(&"staff_report".to_owned()), "{names:?}");
    let staff = CallContext::new().with_caller(Arc::new(Staff));
    let names = found_names(&search(&server, &staff, query, false).await);
    assert!(names.contains(&"staff_report".to_owned()), "{names:?}");
    assert!(!names.contains(&"admin_secret".to_owned()), "{names:?}");
}

#[tokio::test]
async fn call_tool_is_a_direct_call_for_results_scopes_and_errors() {
    let log = Log::default();
    let server = server(&log);
    let ctx = CallContext::new();
    let cases = [
        ("echo", json!({"text": "hi"})),
        // The inner tool's argument check.
        ("slow", json!({"wait": "soon"})),
        // A scope the caller lacks: -32003, the same refusal.
        ("admin_secret", json!({})),
        // The tool's own interceptor refuses it.
        ("count", json!({"n": 1})),
        // An unknown tool: -32602 Unknown tool.
        ("no_such_tool", json!({})),
        // The tool's time limit.
        ("sleepy", json!({})),
    ];
    for modern in [false, true] {
        for (name, args) in &cases {
            let direct = json!({"name": name, "arguments": args});
            let direct = send(&server, &ctx, "tools/call", direct, modern).await;
            let wrapped = send(
                &server,
                &ctx,
                "tools/call",
                via_call_tool(name, args.clone()),
                modern,
            )
            .await;
            assert_eq!(
                comparable(wrapped),
                comparable(direct.clone()),
                "{name} (modern: {modern})"
            );
            match *name {
                "admin_secret" => assert_eq!(direct["error"]["code"], -32003, "{direct}"),
                "no_such_tool" => {
                    assert_eq!(direct["error"]["message"], "Unknown tool: no_such_tool")
                }
                "count" => assert_eq!(direct["error"]["message"], "denied here"),
                "slow" => {
                    let text = direct["result"]["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default();
                    assert!(text.starts_with("Invalid arguments"), "{direct}");
                }
                "sleepy" => {
                    let text = direct["result"]["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default();
                    assert!(text.contains("timed out"), "{direct}");
                }
                _ => assert_eq!(
                    direct["result"]["content"][0]["text"],
                    r#"echo ran with {"text":"hi"}"#
                ),
            }
        }
    }
    // A caller with the scope gets through either way.
    let admin = CallContext::new().with_extension(AuthInfo::new("root").with_scopes(["admin"]));
    let wrapped = send(
        &server,
        &admin,
        "tools/call",
        via_call_tool("admin_secret", json!({})),
        false,
    )
    .await;
    assert_eq!(
        wrapped["result"]["content"][0]["text"], "admin_secret ran with {}",
        "{wrapped}"
    );
    // `call_tool` without a tool name is refused.
    for bad in [json!({}), json!({"name": 3}), json!({"arguments": {}})] {
        let reply = send(
            &server,
            &ctx,
            "tools/call",
            json!({"name": "call_tool", "arguments": bad}),
            false,
        )
        .await;
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
    }
    let reply = send(
        &server,
        &ctx,
        "tools/call",
        json!({"name": "call_tool"}),
        false,
    )
    .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
}

#[tokio::test]
async fn interceptors_see_the_inner_call_as_a_direct_one() {
    let log = Log::default();
    let server = server(&log);
    let ctx = CallContext::new();
    for modern in [false, true] {
        send(
            &server,
            &ctx,
            "tools/call",
            via_call_tool("echo", json!({"text": "a"})),
            modern,
        )
        .await;
        let wrapped = lines(&log);
        send(
            &server,
            &ctx,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "a"}}),
            modern,
        )
        .await;
        let direct = lines(&log);
        assert_eq!(wrapped, direct);
        assert_eq!(
            direct,
            [
                r#"server echo {"text":"a"}"#,
                r#"echo-chain echo {"text":"a"}"#
            ]
        );
    }
    // `search_tools` is a tool call the server's interceptors see too.
    search(&server, &ctx, json!({"query": "echo"}), false).await;
    assert_eq!(lines(&log), [r#"server search_tools {"query":"echo"}"#]);
}

#[tokio::test]
async fn progress_and_cancellation_reach_the_inner_call() {
    let log = Log::default();
    let server = server(&log);
    let client = guard("connect", TestClient::connect(server))
        .await
        .expect("client");
    let (result, progress) = guard(
        "progress",
        client.call_tool_with_progress("call_tool", json!({"name": "slow", "arguments": {}})),
    )
    .await
    .expect("call");
    assert_eq!(result.text_content(), "done");
    let steps: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert_eq!(steps, [1.0, 2.0, 3.0], "{progress:?}");

    let mut params = via_call_tool("slow", json!({"wait": true}));
    params["_meta"] = json!({"progressToken": "waiting"});
    let pending = client.start_request("tools/call", params).await;
    // The call is running once its progress arrives; then it is cancelled
    // and the tool sees it.
    let first = guard(
        "progress",
        client.next_notification(Duration::from_secs(10)),
    )
    .await;
    let first = first.expect("a progress notification");
    assert_eq!(first["params"]["progressToken"], "waiting", "{first}");
    let saw_cancel = SAW_CANCEL.notified();
    assert!(client.cancel(&pending.id).await);
    guard("the tool sees the cancellation", saw_cancel).await;
    // A cancelled call gets no reply; the server still answers others.
    let echo = guard("echo", client.call_tool("echo", json!({"text": "after"})))
        .await
        .expect("echo");
    assert_eq!(echo.text_content(), r#"echo ran with {"text":"after"}"#);
}

#[tokio::test]
async fn the_search_tools_names_are_reserved_and_pins_are_checked() {
    let log = Log::default();
    for name in ["search_tools", "call_tool"] {
        let taken = builder(&log)
            .tool(tool(name, "mine", json!({"type": "object"})))
            .tool_search(ToolSearch::new())
            .build()
            .err();
        assert_eq!(
            taken,
            Some(BuildError::ToolSearchNameTaken(name.to_owned()))
        );
        // Without tool search, the name is free.
        builder(&log)
            .tool(tool(name, "mine", json!({"type": "object"})))
            .build()
            .expect("free name");
    }
    let unknown = builder(&log)
        .tool_search(ToolSearch::new().pin(["ecco"]))
        .build()
        .err();
    assert_eq!(
        unknown,
        Some(BuildError::ToolSearchPinUnknown("ecco".into()))
    );
    // A live catalog may get the pinned tool later.
    let live = builder(&log)
        .live_tools()
        .tool_search(ToolSearch::new().pin(["later"]))
        .build();
    let live = live.expect("a live catalog lists a pinned tool once it exists");
    let added = live
        .add_tool(tool("call_tool", "mine", json!({"type": "object"})))
        .await;
    assert_eq!(
        added.err(),
        Some(BuildError::ToolSearchNameTaken("call_tool".into()))
    );
}

#[tokio::test]
async fn search_and_listing_follow_live_changes() {
    let log = Log::default();
    let server = builder(&log)
        .live_tools()
        .tool_search(ToolSearch::new().pin(["translate"]))
        .build()
        .expect("server");
    let ctx = CallContext::new();
    let query = json!({"query": "translate"});
    assert!(found_names(&search(&server, &ctx, query.clone(), false).await).is_empty());
    let listed = send(&server, &ctx, "tools/list", json!({}), true).await;
    assert_eq!(listed_names(&listed), ["search_tools", "call_tool"]);

    server
        .add_tool(tool(
            "translate",
            "Translate text",
            json!({"type": "object"}),
        ))
        .await
        .expect("added");
    assert_eq!(
        found_names(&search(&server, &ctx, query.clone(), true).await),
        ["translate"]
    );
    let listed = send(&server, &ctx, "tools/list", json!({}), false).await;
    assert_eq!(
        listed_names(&listed),
        ["search_tools", "call_tool", "translate"]
    );
    let called = send(
        &server,
        &ctx,
        "tools/call",
        via_call_tool("translate", json!({})),
        false,
    )
    .await;
    assert_eq!(
        called["result"]["content"][0]["text"],
        "translate ran with {}"
    );

    server.remove_tool("translate").await.expect("removed");
    assert!(found_names(&search(&server, &ctx, query, false).await).is_empty());
    let gone = send(
        &server,
        &ctx,
        "tools/call",
        via_call_tool("translate", json!({})),
        false,
    )
    .await;
    assert_eq!(gone["error"]["message"], "Unknown tool: translate");
}

#[tokio::test]
async fn mcp_server_call_tool_takes_the_same_path() {
    let log = Log::default();
    let server = server(&log);
    let result: CallToolResult = server
        .call_tool(
            "call_tool",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        )
        .await
        .expect("call");
    assert_eq!(result.text_content(), r#"echo ran with {"text":"x"}"#);
}

/// Over 2026-07-28 HTTP a `call_tool` request names `call_tool` in
/// `Mcp-Name` (its body's name); a header naming the inner tool does not
/// match the body and is refused like any mismatch.
#[cfg(feature = "http")]
#[tokio::test]
async fn over_modern_http_mcp_name_is_call_tool() {
    let log = Log::default();
    let handle = mcp_core::serve_http(server(&log), mcp_core::HttpOptions::stateless())
        .await
        .expect("serve");
    let addr = handle.local_addr();
    let post = |name: &'static str, body: Value| async move {
        let mut body = body;
        body["params"]["_meta"] = serde_json::from_str(MODERN_META).expect("meta");
        let body = body.to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\n\
             MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {name}\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        raw_http::raw(addr, request.as_bytes()).await
    };
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": via_call_tool("echo", json!({"text": "over http"}))});
    let ok = post("call_tool", call.clone()).await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(
        ok.json()["result"]["content"][0]["text"],
        r#"echo ran with {"text":"over http"}"#
    );
    let mismatch = post("echo", call).await;
    assert_eq!(mismatch.status, 400, "{}", mismatch.text());
    let search = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "search_tools", "arguments": {"query": "weather"}}});
    let found = post("search_tools", search).await;
    assert_eq!(found.status, 200, "{}", found.text());
    assert_eq!(
        found.json()["result"]["structuredContent"]["tools"][0]["name"],
        "get_weather"
    );
    // The transport's early scope check (403 with a challenge) looks at
    // the tool `call_tool` names: no way around it through `call_tool`.
    let secret = |name: &str| json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, "arguments": {}}});
    let direct = post("admin_secret", secret("admin_secret")).await;
    let mut wrapped = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                             "params": via_call_tool("admin_secret", json!({}))});
    wrapped["params"]["arguments"]["arguments"] = json!({});
    let wrapped = post("call_tool", wrapped).await;
    for refused in [&direct, &wrapped] {
        assert_eq!(refused.status, 403, "{}", refused.text());
        let challenge = refused.header("www-authenticate").unwrap_or_default();
        assert!(challenge.contains("insufficient_scope"), "{challenge}");
    }
    assert_eq!(direct.json()["error"], wrapped.json()["error"]);
}

/// A tool that always runs as a task does so through `call_tool` too.
#[tokio::test]
async fn call_tool_runs_a_task_tool_as_a_task() {
    use common::tasks::{call, get, wait_until};
    use mcp_core::storage::Storage;
    use mcp_core::tasks::{InMemoryTaskStore, TaskSupport};

    let job = McpToolDef::new(
        "job",
        "Always a task",
        json!({"type": "object"}),
        |_args, _ctx: InvokeContext| async move { "job done" },
    )
    .with_task_support(TaskSupport::Required);
    let server = McpServer::builder()
        .storage(Storage::memory().with_tasks(InMemoryTaskStore::new(100)))
        .tool(job)
        .tool_search(ToolSearch::new())
        .build()
        .expect("server");
    let ctx = CallContext::new();
    let reply = call(&server, &ctx, "call_tool", json!({"name": "job"})).await;
    let created = &reply["result"];
    assert_eq!(created["resultType"], "task", "{reply}");
    let task_id = created["taskId"].as_str().expect("taskId").to_owned();
    let done = wait_until(&server, &ctx, &task_id, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "job done", "{done}");
    assert_eq!(get(&server, &ctx, &task_id).await["status"], "completed");
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Cart {
    items: Vec<String>,
}

impl mcp_core::state::Stateful for Cart {
    const KIND: &'static str = "cart";
    const MINTED_BY: &'static str = "open_cart";
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Opened {
    cart: mcp_core::state::Handle<Cart>,
}

/// Opens an empty cart.
#[mcp_tool]
async fn open_cart(ctx: &InvokeContext) -> Result<mcp_core::Json<Opened>, mcp_core::ToolError> {
    let cart = mcp_core::state::Handle::mint(ctx, Cart::default()).await?;
    Ok(mcp_core::Json(Opened { cart }))
}

/// Adds an item; returns the new count.
#[mcp_tool]
async fn add_item(
    ctx: &InvokeContext,
    cart: mcp_core::state::Handle<Cart>,
    item: String,
) -> Result<String, mcp_core::ToolError> {
    let n = cart
        .update(ctx, |c| {
            c.items.push(item.clone());
            c.items.len()
        })
        .await?;
    Ok(format!("{n} items"))
}

/// State handles are checked for the tool `call_tool` names, as for a
/// direct call: a handle minted through `call_tool` works directly, and
/// an altered one is refused with the same result either way.
#[tokio::test]
async fn state_handles_are_checked_for_the_named_tool() {
    let server = McpServer::builder()
        .tool(open_cart::tool())
        .tool(add_item::tool())
        .tool_search(ToolSearch::new())
        .build()
        .expect("server");
    let ctx = CallContext::new();
    let opened = send(
        &server,
        &ctx,
        "tools/call",
        via_call_tool("open_cart", json!({})),
        false,
    )
    .await;
    let cart = opened["result"]["structuredContent"]["cart"]
        .as_str()
        .unwrap_or_else(|| panic!("a handle in {opened}"))
        .to_owned();
    let args = json!({"cart": cart, "item": "tea"});
    let direct = json!({"name": "add_item", "arguments": args});
    let direct = send(&server, &ctx, "tools/call", direct, true).await;
    assert_eq!(
        direct["result"]["content"][0]["text"], "1 items",
        "{direct}"
    );
    let wrapped = send(
        &server,
        &ctx,
        "tools/call",
        via_call_tool("add_item", args),
        true,
    )
    .await;
    assert_eq!(
        wrapped["result"]["content"][0]["text"], "2 items",
        "{wrapped}"
    );

    let forged = json!({"cart": format!("{cart}x"), "item": "tea"});
    let direct = json!({"name": "add_item", "arguments": forged});
    let direct = send(&server, &ctx, "tools/call", direct, false).await;
    let wrapped = send(
        &server,
        &ctx,
        "tools/call",
        via_call_tool("add_item", forged),
        false,
    )
    .await;
    assert_eq!(
        direct["result"]["structuredContent"]["code"], "HANDLE_FORGED",
        "{direct}"
    );
    // The same refusal (each carries its own error id).
    for reply in [&direct, &wrapped] {
        let refusal = &reply["result"]["structuredContent"];
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        assert_eq!(refusal["code"], "HANDLE_FORGED", "{reply}");
        assert_eq!(
            refusal["hint"],
            direct["result"]["structuredContent"]["hint"]
        );
    }
}

/// A search result goes to the model: a tool the model may not see (MCP
/// Apps, `_meta.ui.visibility: ["app"]`, called only by its view through
/// the host) is never one, and a match carries the tool's annotations
/// and `_meta` (a destructive hint, a view link) as `tools/list` would.
#[tokio::test]
async fn search_leaves_out_app_only_tools_and_describes_hints() {
    use mcp_core::apps::{AppView, ToolUi, Visibility};
    use mcp_core::protocol::ToolAnnotations;
    let view = || ToolUi::new("ui://cart/view.html");
    let server = McpServer::builder()
        .app_view(AppView::new(
            "ui://cart/view.html",
            "Cart",
            "<!doctype html>",
        ))
        .tool(
            tool("cart_wipe", "Empty the cart", json!({"type": "object"}))
                .with_ui(view().visibility([Visibility::App])),
        )
        .tool(
            tool("cart_show", "Show the cart", json!({"type": "object"}))
                .with_ui(view().visibility([Visibility::Model, Visibility::App]))
                .with_annotations(ToolAnnotations {
                    destructive_hint: Some(false),
                    ..ToolAnnotations::default()
                }),
        )
        .tool(tool("cart_total", "Total of the cart", json!({"type": "object"})).with_ui(view()))
        .tool_search(ToolSearch::new())
        .build()
        .expect("server");
    let ctx = CallContext::new();
    for modern in [false, true] {
        let found = search(&server, &ctx, json!({"query": "cart"}), modern).await;
        assert_eq!(found_names(&found), ["cart_show", "cart_total"], "{found}");
        let show = &found["result"]["structuredContent"]["tools"][0];
        assert_eq!(show["annotations"]["destructiveHint"], false, "{show}");
        assert_eq!(show["_meta"]["ui"]["resourceUri"], "ui://cart/view.html");
        let wipe = search(&server, &ctx, json!({"query": "cart_wipe"}), modern).await;
        let names = found_names(&wipe);
        assert!(!names.contains(&"cart_wipe".to_owned()), "{wipe}");
    }
}

/// A query is the client's: past 1,024 characters it is refused (an
/// `isError` result naming the limit, which the listed schema declares)
/// before it is cut into terms.
#[tokio::test]
async fn a_long_query_is_refused_before_it_is_read() {
    let log = Log::default();
    let server = server(&log);
    let ctx = CallContext::new();
    let listed = send(&server, &ctx, "tools/list", json!({}), false).await;
    let schema = &listed["result"]["tools"][0]["inputSchema"];
    assert_eq!(schema["properties"]["query"]["maxLength"], 1024, "{schema}");
    let at_limit = "weather ".repeat(128);
    let fits = search(&server, &ctx, json!({"query": &at_limit[..1024]}), false).await;
    assert!(
        found_names(&fits).contains(&"get_weather".to_owned()),
        "{fits}"
    );
    let long = "weather ".repeat(128 * 1024);
    let refused = search(&server, &ctx, json!({"query": long}), false).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.contains("at most 1024 characters"), "{text}");
}

/// `call_tool` naming `call_tool` is an unknown tool (-32602), whatever the
/// inner-inner name: before, the scope check read it as a second wrapper
/// and refused with -32003 naming the innermost tool (telling a caller
/// which scopes a tool it did not call needs).
#[tokio::test]
async fn call_tool_cannot_wrap_itself() {
    let log = Log::default();
    let server = server(&log);
    let ctx = CallContext::new();
    for modern in [false, true] {
        let nested = via_call_tool("call_tool", json!({"name": "admin_secret"}));
        let reply = send(&server, &ctx, "tools/call", nested, modern).await;
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        assert_eq!(reply["error"]["message"], "Unknown tool: call_tool");
    }
}

/// The model cannot reach an app-only tool through `call_tool` either (a
/// host keeps such a tool from the model, but sees only `call_tool`
/// here); its view still calls it by its own name.
#[tokio::test]
async fn call_tool_does_not_reach_app_only_tools() {
    use mcp_core::apps::{AppView, ToolUi, Visibility};
    let server = McpServer::builder()
        .app_view(AppView::new(
            "ui://cart/view.html",
            "Cart",
            "<!doctype html>",
        ))
        .tool(
            tool("cart_wipe", "Empty the cart", json!({"type": "object"}))
                .with_ui(ToolUi::new("ui://cart/view.html").visibility([Visibility::App])),
        )
        .tool_search(ToolSearch::new())
        .build()
        .expect("server");
    let ctx = CallContext::new();
    for modern in [false, true] {
        let wrapped = via_call_tool("cart_wipe", json!({}));
        let refused = send(&server, &ctx, "tools/call", wrapped, modern).await;
        assert_eq!(
            refused["error"]["message"], "Unknown tool: cart_wipe",
            "{refused}"
        );
        let direct = json!({"name": "cart_wipe", "arguments": {}});
        let ran = send(&server, &ctx, "tools/call", direct, modern).await;
        assert_eq!(
            ran["result"]["content"][0]["text"], "cart_wipe ran with {}",
            "{ran}"
        );
    }
}
