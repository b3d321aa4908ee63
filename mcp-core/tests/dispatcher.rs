//! Transport-free tests of the dispatcher: `McpServer::handle_message`,
//! `McpServer::dispatch_payload`, `list_tools` / `call_tool` and the builder,
//! one group per row of the guide's method table.

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

mod common;
include!("common/dispatcher_prelude.rs");

// ---------------------------------------------------------------------------
// initialize
// ---------------------------------------------------------------------------

async fn negotiated(server: &McpServer, requested: Value) -> Value {
    let reply = ask(
        server,
        &CallContext::new(),
        req(
            1,
            "initialize",
            json!({"protocolVersion": requested, "capabilities": {}}),
        ),
    )
    .await;
    result(&reply)["protocolVersion"].clone()
}

#[tokio::test]
async fn initialize_echoes_supported_versions() {
    let server = build(McpServer::builder().tool(echo_tool()));
    for v in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        assert_eq!(negotiated(&server, json!(v)).await, v, "version {v}");
    }
}

#[tokio::test]
async fn initialize_answers_unsupported_versions_with_latest() {
    let server = build(McpServer::builder().tool(echo_tool()));
    assert_eq!(LATEST_PROTOCOL_VERSION, "2025-11-25");
    for v in [
        json!("1999-01-01"),
        json!("2026-07-28"),
        json!(""),
        json!(20250618),
        Value::Null,
    ] {
        assert_eq!(
            negotiated(&server, v.clone()).await,
            "2025-11-25",
            "for {v}"
        );
    }
    // No params at all.
    let reply = ask(
        &server,
        &CallContext::new(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize"}),
    )
    .await;
    assert_eq!(result(&reply)["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn initialize_tools_only_server_advertises_just_tools() {
    let server = build(McpServer::builder().tool(echo_tool()));
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "initialize", json!({})),
    )
    .await;
    let res = result(&reply);
    assert_eq!(
        res["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
    assert!(res.get("instructions").is_none(), "no instructions: {res}");
    assert_eq!(server.capabilities(), &res["capabilities"]);

    // An empty server still advertises tools.
    let empty = build(McpServer::builder());
    let reply = ask(&empty, &CallContext::new(), req(1, "initialize", json!({}))).await;
    assert_eq!(
        result(&reply)["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
}

#[tokio::test]
async fn initialize_advertises_resources_and_prompts_when_registered() {
    let with_resource = build(McpServer::builder().resource(text_resource("demo://a", "A", "a")));
    let reply = ask(
        &with_resource,
        &CallContext::new(),
        req(1, "initialize", json!({})),
    )
    .await;
    assert_eq!(
        result(&reply)["capabilities"],
        json!({
            "tools": {"listChanged": false},
            "resources": {"subscribe": false, "listChanged": false},
        })
    );

    let template_only = build(McpServer::builder().resource(McpResourceDef::template(
        "demo://{x}",
        "X",
        |_r: ResourceRequest, _c: InvokeContext| async { "x" },
    )));
    let reply = ask(
        &template_only,
        &CallContext::new(),
        req(1, "initialize", json!({})),
    )
    .await;
    assert!(
        result(&reply)["capabilities"].get("resources").is_some(),
        "templates enable resources: {reply}"
    );

    let with_prompt = build(McpServer::builder().prompt(greet_prompt()));
    let reply = ask(
        &with_prompt,
        &CallContext::new(),
        req(1, "initialize", json!({})),
    )
    .await;
    assert_eq!(
        result(&reply)["capabilities"],
        json!({"tools": {"listChanged": false}, "prompts": {"listChanged": false}})
    );

    let both = build(
        McpServer::builder()
            .resource(text_resource("demo://a", "A", "a"))
            .prompt(greet_prompt()),
    );
    let reply = ask(&both, &CallContext::new(), req(1, "initialize", json!({}))).await;
    let caps = &result(&reply)["capabilities"];
    assert!(
        caps.get("tools").is_some()
            && caps.get("resources").is_some()
            && caps.get("prompts").is_some()
    );
}

#[tokio::test]
async fn initialize_reports_server_info_and_instructions() {
    let server = build(
        McpServer::builder()
            .server_info("demo", "1.2.3")
            .instructions("Call echo to echo.")
            .tool(echo_tool()),
    );
    let reply = ask(
        &server,
        &CallContext::new(),
        req("init", "initialize", json!({})),
    )
    .await;
    assert_eq!(reply["id"], "init");
    let res = result(&reply);
    assert_eq!(
        res["serverInfo"],
        json!({"name": "demo", "version": "1.2.3"})
    );
    assert_eq!(res["instructions"], "Call echo to echo.");

    let default = build(McpServer::builder());
    let reply = ask(
        &default,
        &CallContext::new(),
        req(1, "initialize", json!({})),
    )
    .await;
    assert_eq!(
        result(&reply)["serverInfo"],
        json!({"name": "mcp-core", "version": env!("CARGO_PKG_VERSION")})
    );
}

#[tokio::test]
async fn initialize_records_the_client_in_the_session() {
    let server = build(McpServer::builder().tool(McpToolDef::new(
        "whoami",
        "Reports the negotiated client",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            let name = ctx
                .client_info()
                .and_then(|c| c.implementation.as_ref())
                .map_or("none".to_owned(), |i| i.name.clone());
            format!("{} {}", ctx.protocol_version().unwrap_or("none"), name)
        },
    )));
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    assert!(session.client().is_none());
    ask(
        &server,
        &ctx,
        req(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "9"},
            }),
        ),
    )
    .await;
    tell(&server, &ctx, note("notifications/initialized", json!({}))).await;
    assert_eq!(
        call_text(&server, &ctx, "whoami", json!({})).await,
        "2025-03-26 probe"
    );

    // Another session never initialized.
    let other = CallContext::new().with_session(Session::new());
    assert_eq!(
        call_text(&server, &other, "whoami", json!({})).await,
        "none none"
    );
}

#[tokio::test]
async fn initialize_is_never_cancellable() {
    let server = build(McpServer::builder().tool(echo_tool()));
    let signal = CancelToken::new();
    signal.cancel();
    let ctx = CallContext::new().with_signal(signal);
    // initialize and ping are answered even with an already-cancelled signal …
    let reply = ask(&server, &ctx, req(1, "initialize", json!({}))).await;
    assert_eq!(result(&reply)["protocolVersion"], "2025-11-25");
    let reply = ask(&server, &ctx, req(2, "ping", json!({}))).await;
    assert_eq!(result(&reply), &json!({}));
    // … while any other request is cancelled by it.
    tell(&server, &ctx, req(3, "tools/list", json!({}))).await;
}

// ---------------------------------------------------------------------------
// ping, notifications, responses
// ---------------------------------------------------------------------------

#[tokio::test]
async fn ping_returns_empty_object() {
    let server = build(McpServer::builder());
    let reply = ask(&server, &CallContext::new(), req(42, "ping", json!({}))).await;
    assert_eq!(reply, json!({"jsonrpc": "2.0", "id": 42, "result": {}}));
    let reply = ask(
        &server,
        &CallContext::new(),
        json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
    )
    .await;
    assert_eq!(reply, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
}

#[tokio::test]
async fn notifications_get_no_reply() {
    let server = build(McpServer::builder().tool(echo_tool()));
    let ctx = CallContext::new();
    tell(&server, &ctx, note("notifications/initialized", json!({}))).await;
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    tell(
        &server,
        &ctx,
        note("notifications/cancelled", json!({"requestId": 99})),
    )
    .await;
    tell(&server, &ctx, note("notifications/whatever", json!({}))).await;
    tell(
        &server,
        &ctx,
        note("notifications/cancelled", json!("not an object")),
    )
    .await;
}

#[tokio::test]
async fn request_method_sent_as_notification_is_not_executed() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(McpServer::builder().tool(flip_tool("flip", &flag)));
    let ctx = CallContext::new();
    tell(
        &server,
        &ctx,
        note("tools/call", json!({"name": "flip", "arguments": {}})),
    )
    .await;
    tell(&server, &ctx, note("ping", json!({}))).await;
    tell(&server, &ctx, note("tools/list", json!({}))).await;
    // Nothing was spawned in the background either: a real call on the same
    // server afterwards is the first to flip the flag.
    tokio::task::yield_now().await;
    assert!(
        !flag.load(Ordering::SeqCst),
        "notification executed the tool"
    );
    assert_eq!(call_text(&server, &ctx, "flip", json!({})).await, "flipped");
    assert!(flag.load(Ordering::SeqCst));
}

#[tokio::test]
async fn responses_sent_to_the_server_are_ignored() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(McpServer::builder().tool(flip_tool("flip", &flag)));
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
    )
    .await;
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": "srv-0", "result": {"action": "accept"}}),
    )
    .await;
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -32601, "message": "nope"}}),
    )
    .await;
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1, "message": "x"}}),
    )
    .await;
    assert!(!flag.load(Ordering::SeqCst));
    assert_eq!(session.inflight_len(), 0);
    // The server still works.
    assert_eq!(call_text(&server, &ctx, "flip", json!({})).await, "flipped");
}

// ---------------------------------------------------------------------------
// tools/list, tools/call, list_tools, call_tool
// ---------------------------------------------------------------------------

#[tokio::test]
async fn tools_list_returns_descriptors_in_registration_order() {
    let mut output = Map::new();
    output.insert("type".into(), json!("object"));
    let server = build(
        McpServer::builder()
            .tool(echo_tool().with_title("Echo"))
            .tool(failing_tool().with_output_schema(output.clone()))
            .tool(McpToolDef::new(
                "bare",
                "",
                json!("not a schema"),
                |_a, _c: InvokeContext| async {},
            )),
    );
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "tools/list", json!({})),
    )
    .await;
    let tools = result(&reply)["tools"]
        .as_array()
        .expect("tools array")
        .clone();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["echo", "fail", "bare"]);
    assert_eq!(tools[0]["title"], "Echo");
    assert_eq!(tools[0]["description"], "Echo the input back");
    assert_eq!(
        tools[0]["inputSchema"],
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    );
    assert!(tools[0].get("outputSchema").is_none());
    assert_eq!(tools[1]["outputSchema"], Value::Object(output));
    // A non-object schema is replaced by {"type":"object"}; empty description omitted.
    assert_eq!(tools[2]["inputSchema"], json!({"type": "object"}));
    assert!(tools[2].get("description").is_none());

    // Same as list_tools().
    let listed: Vec<Value> = server
        .list_tools()
        .into_iter()
        .map(|t| serde_json::to_value(t).expect("tool serializes"))
        .collect();
    assert_eq!(listed, tools);

    // Params may be omitted entirely.
    let reply = ask(
        &server,
        &CallContext::new(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(result(&reply)["tools"].as_array().map(Vec::len), Some(3));
}

#[tokio::test]
async fn tools_call_returns_the_tool_result() {
    let server = build(McpServer::builder().tool(echo_tool()));
    let reply = ask(
        &server,
        &CallContext::new(),
        call_req(7, "echo", json!({"text": "hi"})),
    )
    .await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hi"}]}})
    );
    // Missing or null arguments are an empty object.
    let reply = ask(
        &server,
        &CallContext::new(),
        req(8, "tools/call", json!({"name": "echo"})),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "");
    let reply = ask(
        &server,
        &CallContext::new(),
        req(9, "tools/call", json!({"name": "echo", "arguments": null})),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "");
}

#[tokio::test]
async fn tools_call_structured_json_result() {
    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Sum {
        total: i64,
    }
    let server = build(McpServer::builder().tool(McpToolDef::new(
        "sum",
        "Adds",
        json!({"type": "object"}),
        |args: Map<String, Value>, _c: InvokeContext| async move {
            let total = args.values().filter_map(Value::as_i64).sum();
            mcp_core::Json(Sum { total })
        },
    )));
    let reply = ask(
        &server,
        &CallContext::new(),
        call_req(1, "sum", json!({"a": 2, "b": 40})),
    )
    .await;
    let res = result(&reply);
    assert_eq!(res["structuredContent"], json!({"total": 42}));
    assert_eq!(text_of(res), r#"{"total":42}"#);
}

#[tokio::test]
async fn tool_returning_err_is_an_is_error_result() {
    let server = build(McpServer::builder().tool(failing_tool()));
    let reply = ask(&server, &CallContext::new(), call_req(1, "fail", json!({}))).await;
    let res = result(&reply);
    assert_eq!(res["isError"], true);
    assert_eq!(
        res["content"],
        json!([{"type": "text", "text": "the disk is full"}])
    );
}

#[tokio::test]
async fn tool_panic_is_internal_error_and_server_keeps_serving() {
    let server = build(
        McpServer::builder()
            .tool(panicking_tool())
            .tool(echo_tool()),
    );
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let reply = ask(
        &server,
        &ctx,
        call_req(1, "explode", json!({"what": "purpose"})),
    )
    .await;
    assert_eq!(reply["id"], 1);
    common::assert_panic_error(&reply["error"], "tool exploded");
    assert_eq!(session.inflight_len(), 0, "a panicked call is unregistered");
    // Same id again, and another tool: both served.
    let reply = ask(
        &server,
        &ctx,
        call_req(1, "explode", json!({"what": "again"})),
    )
    .await;
    common::assert_panic_error(&reply["error"], "tool exploded");
    assert_eq!(
        call_text(&server, &ctx, "echo", json!({"text": "still here"})).await,
        "still here"
    );
}

/// A tool whose handler panics before it returns its future (for example an
/// `unwrap` on an argument ahead of the `async move` block).
fn eager_panicking_tool() -> McpToolDef {
    McpToolDef::new(
        "eager",
        "Panics while building its future",
        json!({"type": "object"}),
        |args: Map<String, Value>, _ctx: InvokeContext| {
            let n = args
                .get("n")
                .and_then(Value::as_i64)
                .expect("argument n is required");
            async move { format!("n={n}") }
        },
    )
}

#[tokio::test]
async fn tool_panicking_before_its_future_is_internal_error() {
    let server = build(
        McpServer::builder()
            .tool(eager_panicking_tool())
            .tool(echo_tool()),
    );
    assert_eq!(
        call_text(&server, &CallContext::new(), "eager", json!({"n": 3})).await,
        "n=3"
    );
    // Run in a task so a panic escaping handle_message is observed, not fatal.
    let joined = guard(
        "eager call",
        spawn_message(
            &server,
            &CallContext::new(),
            call_req(1, "eager", json!({})),
        ),
    )
    .await;
    let reply = joined
        .unwrap_or_else(|e| {
            panic!("handle_message itself panicked instead of answering -32603: {e}")
        })
        .expect("a reply");
    common::assert_panic_error(&reply["error"], "argument n is required");
    assert_eq!(
        call_text(&server, &CallContext::new(), "echo", json!({"text": "up"})).await,
        "up"
    );

    let direct = {
        let server = server.clone();
        guard(
            "eager call_tool",
            tokio::spawn(async move { server.call_tool("eager", json!({})).await }),
        )
        .await
    };
    let err = direct
        .unwrap_or_else(|e| panic!("call_tool itself panicked instead of returning -32603: {e}"))
        .expect_err("a panicking tool is an error");
    assert_eq!(err.code, -32603);
}

#[tokio::test]
async fn visible_hook_filters_tools_list_but_not_tools_call() {
    let secret = McpToolDef::new(
        "secret",
        "Admins only",
        json!({"type": "object"}),
        |_a, _c: InvokeContext| async { "secret ran" },
    )
    .with_visible(|ctx: &CallContext| ctx.caller::<String>().is_some_and(|c| c == "admin"));
    let server = build(McpServer::builder().tool(echo_tool()).tool(secret));
    let admin = CallContext::new().with_caller(Arc::new("admin".to_owned()));
    let guest = CallContext::new().with_caller(Arc::new("guest".to_owned()));
    let anonymous = CallContext::new();

    let names = |reply: &Value| -> Vec<String> {
        result(reply)["tools"]
            .as_array()
            .expect("tools array")
            .iter()
            .map(|t| t["name"].as_str().expect("name").to_owned())
            .collect()
    };
    let reply = ask(&server, &admin, req(1, "tools/list", json!({}))).await;
    assert_eq!(names(&reply), ["echo", "secret"]);
    let reply = ask(&server, &guest, req(1, "tools/list", json!({}))).await;
    assert_eq!(names(&reply), ["echo"]);
    let reply = ask(&server, &anonymous, req(1, "tools/list", json!({}))).await;
    assert_eq!(names(&reply), ["echo"]);
    // list_tools() is before filtering.
    assert_eq!(server.list_tools().len(), 2);
    // tools/call never consults the hook.
    assert_eq!(
        call_text(&server, &guest, "secret", json!({})).await,
        "secret ran"
    );
}

#[tokio::test]
async fn panicking_visible_hook_hides_the_tool() {
    let touchy = echo_tool().with_visible(|_ctx: &CallContext| panic!("visible hook blew up"));
    let server = build(McpServer::builder().tool(touchy).tool(failing_tool()));
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "tools/list", json!({})),
    )
    .await;
    let tools = result(&reply)["tools"]
        .as_array()
        .expect("tools array")
        .clone();
    assert_eq!(tools.len(), 1, "{reply}");
    assert_eq!(tools[0]["name"], "fail");
    // The hidden tool still runs.
    assert_eq!(
        call_text(&server, &CallContext::new(), "echo", json!({"text": "ok"})).await,
        "ok"
    );
}

#[tokio::test]
async fn list_tools_and_call_tool_without_json_rpc() {
    let server = build(
        McpServer::builder()
            .tool(echo_tool())
            .tool(failing_tool())
            .tool(panicking_tool()),
    );
    let tools = server.list_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "fail", "explode"]);

    let ok = server
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .expect("echo succeeds");
    assert_eq!(ok.text_content(), "hi");
    assert!(!ok.is_error());
    let ok = server
        .call_tool("echo", Value::Null)
        .await
        .expect("null args");
    assert_eq!(ok.text_content(), "");

    let failed = server
        .call_tool("fail", json!({}))
        .await
        .expect("tool-level failure is Ok");
    assert!(failed.is_error());
    assert_eq!(failed.text_content(), "the disk is full");

    let err = server
        .call_tool("x", json!({}))
        .await
        .expect_err("unknown tool");
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32602, "Unknown tool: x")
    );

    let err = server
        .call_tool("echo", json!(["not", "an", "object"]))
        .await
        .expect_err("array args");
    assert_eq!(err.code, -32602);

    let err = server
        .call_tool("explode", json!({"what": "direct"}))
        .await
        .expect_err("panic");
    common::assert_panic_error(&err.to_value(), "tool exploded");
}

// ---------------------------------------------------------------------------
// Builder
// ---------------------------------------------------------------------------

#[test]
fn duplicate_tool_names_fail_the_build() {
    let err = McpServer::builder()
        .tool(echo_tool())
        .tool(failing_tool())
        .tool(echo_tool())
        .build()
        .expect_err("duplicate tool");
    assert_eq!(err, BuildError::DuplicateTool("echo".to_owned()));
    assert!(err.to_string().contains("`echo`"), "{err}");
}

#[test]
fn duplicate_prompt_names_fail_the_build() {
    let err = McpServer::builder()
        .prompt(greet_prompt())
        .prompt(greet_prompt())
        .build()
        .expect_err("duplicate prompt");
    assert_eq!(err, BuildError::DuplicatePrompt("greet".to_owned()));
    assert!(err.to_string().contains("`greet`"), "{err}");
}

#[test]
fn duplicate_resource_uris_fail_the_build() {
    let err = McpServer::builder()
        .resource(text_resource("demo://a", "A", "a"))
        .resource(text_resource("demo://a", "Other A", "b"))
        .build()
        .expect_err("duplicate resource");
    assert_eq!(err, BuildError::DuplicateResource("demo://a".to_owned()));
    assert!(err.to_string().contains("`demo://a`"), "{err}");

    let template = || {
        McpResourceDef::template(
            "demo://{x}",
            "X",
            |_r: ResourceRequest, _c: InvokeContext| async { "x" },
        )
    };
    let err = McpServer::builder()
        .resource(template())
        .resource(template())
        .build()
        .expect_err("duplicate template");
    assert_eq!(err, BuildError::DuplicateResource("demo://{x}".to_owned()));
}

#[test]
fn invalid_templates_and_distinct_keys() {
    let err = McpServer::builder()
        .resource(McpResourceDef::template(
            "demo://{x",
            "X",
            |_r: ResourceRequest, _c: InvokeContext| async { "x" },
        ))
        .build()
        .expect_err("unclosed brace");
    assert!(
        matches!(&err, BuildError::InvalidUriTemplate { template, .. } if template == "demo://{x"),
        "{err:?}"
    );
    // The same name across kinds is fine.
    let server = McpServer::builder()
        .tool(McpToolDef::new(
            "greet",
            "tool",
            json!({}),
            |_a, _c: InvokeContext| async {},
        ))
        .prompt(greet_prompt())
        .resource(text_resource("greet", "greet", "x"))
        .build()
        .expect("distinct kinds may share a key");
    assert_eq!(server.list_tools().len(), 1);
}

// ---------------------------------------------------------------------------
// Context plumbing
// ---------------------------------------------------------------------------

#[tokio::test]
async fn invoke_context_carries_headers_peer_and_request_id() {
    let server = build(McpServer::builder().tool(McpToolDef::new(
        "ctx",
        "Reports its context",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            let tenant = ctx
                .header("x-tenant")
                .and_then(|h| h.as_single())
                .unwrap_or("-")
                .to_owned();
            format!(
                "{tenant} {} {} cancelled={}",
                ctx.remote_addr().unwrap_or("-"),
                ctx.request_id().map_or("-".to_owned(), ToString::to_string),
                ctx.is_cancelled()
            )
        },
    )));
    let mut headers = mcp_core::context::Headers::new();
    headers.insert(
        "x-tenant".into(),
        mcp_core::context::HeaderValue::One("acme".into()),
    );
    let ctx = CallContext::new()
        .with_headers(headers)
        .with_remote_addr("127.0.0.1:9");
    let reply = ask(&server, &ctx, call_req(31, "ctx", json!({}))).await;
    assert_eq!(
        text_of(result(&reply)),
        "acme 127.0.0.1:9 31 cancelled=false"
    );
    assert_eq!(
        call_text(&server, &CallContext::new(), "ctx", json!({})).await,
        "- - 1 cancelled=false"
    );
}

// ---------------------------------------------------------------------------
// tools/list served from the listing serialized at build time
// ---------------------------------------------------------------------------

fn listed(i: usize) -> McpToolDef {
    McpToolDef::new(
        format!("tool_{i}"),
        format!("Tool number {i}"),
        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        |_args, _ctx: InvokeContext| async { "ok" },
    )
}

/// The listing written once at build time is the same JSON the per-call
/// path builds (forced here by a visibility hook that shows every tool), in
/// both eras, through the bytes API and the `Value` API.
#[tokio::test]
async fn prebuilt_tools_listing_matches_the_per_call_listing() {
    let cached = McpServer::builder()
        .tools((0..5).map(listed))
        .list_cache(1000, mcp_core::protocol::CacheScope::Private)
        .build()
        .expect("server");
    let per_call = McpServer::builder()
        .tools((0..5).map(|i| listed(i).with_visible(|_| true)))
        .list_cache(1000, mcp_core::protocol::CacheScope::Private)
        .build()
        .expect("server");
    let legacy = req(1, "tools/list", json!({}));
    let modern = req(
        2,
        "tools/list",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    for message in [legacy, modern] {
        let ctx = CallContext::new().with_session(Session::new());
        let a = ask(&cached, &ctx, message.clone()).await;
        let b = ask(&per_call, &ctx, message.clone()).await;
        assert_eq!(a, b, "listing differs for {message}");
        assert_eq!(a["result"]["tools"].as_array().map(Vec::len), Some(5));
        let bytes = guard(
            "frame",
            cached.handle_frame(message.to_string().as_bytes(), &ctx),
        )
        .await
        .expect("a reply");
        let parsed: Value = serde_json::from_slice(&bytes).expect("JSON");
        assert_eq!(parsed, b, "bytes API differs for {message}");
    }
}

/// A cursor is still refused on the prebuilt path (one page only).
#[tokio::test]
async fn prebuilt_tools_listing_refuses_a_cursor() {
    let server = McpServer::builder()
        .tool(listed(0))
        .build()
        .expect("server");
    let ctx = CallContext::new().with_session(Session::new());
    let reply = ask(&server, &ctx, req(1, "tools/list", json!({"cursor": "x"}))).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
}

/// A handler that notices its cancellation and returns a value at once
/// still gets no response: the call was cancelled before it finished.
#[tokio::test]
async fn a_call_that_returns_on_cancellation_gets_no_response() {
    let started = Arc::new(Notify::new());
    let tool = {
        let started = Arc::clone(&started);
        McpToolDef::new(
            "stoppable",
            "Returns as soon as it is cancelled",
            json!({"type": "object"}),
            move |_args, ctx: InvokeContext| {
                let started = Arc::clone(&started);
                async move {
                    started.notify_one();
                    ctx.cancelled().await;
                    "stopped"
                }
            },
        )
    };
    let server = build(McpServer::builder().tool(tool));
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let call = spawn_message(&server, &ctx, call_req(7, "stoppable", json!({})));
    guard("tool start", started.notified()).await;
    tell(
        &server,
        &ctx,
        note("notifications/cancelled", json!({"requestId": 7})),
    )
    .await;
    assert_eq!(join(call).await, None, "a cancelled call gets no response");
    assert_eq!(session.inflight_len(), 0);
}
