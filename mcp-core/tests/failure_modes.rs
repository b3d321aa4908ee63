//! One test per dispatcher row of the guide's "Failure modes & troubleshooting"
//! table (exact code and message), plus hostile input: ids and params of the
//! wrong type, huge numbers, deep nesting and a 1 MiB argument.

mod common;
use common::{guard, req};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mcp_core::transport::parse_payload;
use mcp_core::{
    handler::{PromptArgs, ResourceRequest},
    protocol::ErrorCode,
    transport::{CallContext, Session},
    InvokeContext, McpPromptDef, McpResourceDef, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, Notify};

async fn ask(server: &McpServer, message: Value) -> Value {
    ask_in(server, &CallContext::new(), message).await
}

async fn ask_in(server: &McpServer, ctx: &CallContext, message: Value) -> Value {
    common::ask(server, ctx, message).await
}

/// Asserts `reply` is exactly the error response `{id, code, message}` (no data).
#[track_caller]
fn assert_error(reply: &Value, id: Value, code: i64, message: &str) {
    assert_eq!(
        reply,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    );
}

fn parse_error_reply() -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
}

fn echo_tool() -> McpToolDef {
    McpToolDef::new(
        "echo",
        "Echo the input back",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |args: Map<String, Value>, _ctx: InvokeContext| async move {
            args.get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        },
    )
}

fn flip_tool(flag: &Arc<AtomicBool>) -> McpToolDef {
    let flag = Arc::clone(flag);
    McpToolDef::new(
        "flip",
        "Flips a flag",
        json!({"type": "object"}),
        move |_args, _ctx: InvokeContext| {
            let flag = Arc::clone(&flag);
            async move {
                flag.store(true, Ordering::SeqCst);
                "flipped"
            }
        },
    )
}

/// A server with one of everything, including handlers that panic.
fn full_server(flag: &Arc<AtomicBool>) -> McpServer {
    McpServer::builder()
        .tool(echo_tool())
        .tool(flip_tool(flag))
        .tool(McpToolDef::new(
            "explode",
            "Panics",
            json!({"type": "object"}),
            |_args, _ctx: InvokeContext| async move {
                if true {
                    panic!("tool bug: index out of range");
                }
            },
        ))
        .tool(McpToolDef::new(
            "explode_any",
            "Panics with a non-string payload",
            json!({"type": "object"}),
            |_args, _ctx: InvokeContext| async move {
                if true {
                    std::panic::panic_any(42_u8);
                }
            },
        ))
        .tool(McpToolDef::new(
            "explode_early",
            "Panics before it returns its future",
            json!({"type": "object"}),
            |_args, _ctx: InvokeContext| -> std::future::Ready<&'static str> {
                panic!("tool bug before the future")
            },
        ))
        .resource(McpResourceDef::new(
            "demo://ok",
            "OK",
            |_r: ResourceRequest, _c: InvokeContext| async { "ok" },
        ))
        .resource(McpResourceDef::new(
            "demo://explode",
            "Explodes",
            |r: ResourceRequest, _c: InvokeContext| async move {
                if true {
                    panic!("resource bug reading {}", r.uri);
                }
                "never"
            },
        ))
        .resource(McpResourceDef::new(
            "demo://explode-early",
            "Explodes before its future exists",
            |_r: ResourceRequest, _c: InvokeContext| -> std::future::Ready<&'static str> {
                panic!("resource bug before the future")
            },
        ))
        .prompt(McpPromptDef::new(
            "explode_early",
            |_a: PromptArgs, _c: InvokeContext| -> std::future::Ready<String> {
                panic!("prompt bug before the future")
            },
        ))
        .prompt(McpPromptDef::new(
            "hello",
            |_a: PromptArgs, _c: InvokeContext| async { "hello".to_owned() },
        ))
        .prompt(McpPromptDef::new(
            "explode",
            |_a: PromptArgs, _c: InvokeContext| async {
                if true {
                    panic!("prompt bug");
                }
                "never".to_owned()
            },
        ))
        .build()
        .expect("server builds")
}

fn server() -> McpServer {
    full_server(&Arc::new(AtomicBool::new(false)))
}

// ---------------------------------------------------------------------------
// The failure-modes table
// ---------------------------------------------------------------------------

#[test]
fn parse_error_for_invalid_json() {
    for bad in [
        &b""[..],
        b"   ",
        b"{",
        b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"",
        b"[1, 2,",
        b"nul",
        b"{'single': 'quotes'}",
        b"{} {}",
        b"{\"a\": 1,}",
        b"\xff\xfe{}",
        b"{\"text\": \"\xc3\x28\"}",
        b"NaN",
    ] {
        assert_eq!(
            parse_payload(bad).map_err(|e| e.reply()),
            Err(parse_error_reply()),
            "for {:?}",
            String::from_utf8_lossy(bad)
        );
    }
    // Valid JSON parses (whitespace and a trailing newline allowed).
    assert_eq!(
        parse_payload(b" {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"),
        Ok(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    );
}

#[tokio::test]
async fn invalid_request_when_jsonrpc_is_not_2_0() {
    let server = server();
    let msg = "Invalid JSON-RPC request: jsonrpc must be \"2.0\"";
    for version in [
        json!("1.0"),
        json!("2"),
        json!(2.0),
        json!(null),
        json!(["2.0"]),
    ] {
        let reply = ask(
            &server,
            json!({"jsonrpc": version, "id": 1, "method": "ping"}),
        )
        .await;
        assert_error(&reply, json!(1), -32600, msg);
    }
    let reply = ask(&server, json!({"id": "x", "method": "ping"})).await;
    assert_error(&reply, json!("x"), -32600, msg);
    // Even without an id, an invalid message is answered (id null).
    let reply = ask(&server, json!({"jsonrpc": "1.0", "method": "ping"})).await;
    assert_error(&reply, Value::Null, -32600, msg);
}

#[tokio::test]
async fn invalid_request_when_method_is_not_a_string() {
    let server = server();
    let msg = "Invalid JSON-RPC request: method must be a string";
    for method in [
        json!(42),
        json!(null),
        json!(["ping"]),
        json!({"name": "ping"}),
        json!(true),
    ] {
        let reply = ask(
            &server,
            json!({"jsonrpc": "2.0", "id": 3, "method": method}),
        )
        .await;
        assert_error(&reply, json!(3), -32600, msg);
    }
    // No method and no result/error.
    let reply = ask(&server, json!({"jsonrpc": "2.0", "id": 4})).await;
    assert_error(&reply, json!(4), -32600, msg);
    // A notification-shaped message with a bad method is still answered.
    let reply = ask(
        &server,
        json!({"jsonrpc": "2.0", "method": 1, "params": "bar"}),
    )
    .await;
    assert_error(&reply, Value::Null, -32600, msg);
}

#[tokio::test]
async fn invalid_request_when_not_an_object() {
    let server = server();
    for message in [json!("ping"), json!(1), json!(null), json!(true)] {
        let reply = ask(&server, message).await;
        assert_error(
            &reply,
            Value::Null,
            -32600,
            "Invalid JSON-RPC request: expected an object",
        );
    }
}

#[tokio::test]
async fn request_id_already_in_flight() {
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let (started_in, release_in) = (Arc::clone(&started), Arc::clone(&release));
    let server = McpServer::builder()
        .tool(McpToolDef::new(
            "slow",
            "Waits",
            json!({"type": "object"}),
            move |_args, _ctx: InvokeContext| {
                let (started, release) = (Arc::clone(&started_in), Arc::clone(&release_in));
                async move {
                    started.notify_one();
                    release.notified().await;
                    "done"
                }
            },
        ))
        .build()
        .expect("server builds");
    let ctx = CallContext::new().with_session(Session::new());
    let first = {
        let (server, ctx) = (server.clone(), ctx.clone());
        tokio::spawn(async move {
            server
                .handle_message(req(7, "tools/call", json!({"name": "slow"})), &ctx)
                .await
        })
    };
    guard("slow call start", started.notified()).await;
    let reply = ask_in(&server, &ctx, req(7, "tools/call", json!({"name": "slow"}))).await;
    assert_error(
        &reply,
        json!(7),
        -32600,
        "Request id 7 is already in flight",
    );
    release.notify_one();
    let done = guard("slow call", first)
        .await
        .expect("task did not panic")
        .expect("first call answered");
    assert_eq!(done["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn method_not_found() {
    let server = server();
    let reply = ask(&server, req(1, "tools/delete", json!({}))).await;
    assert_error(&reply, json!(1), -32601, "Method not found: tools/delete");
    assert_eq!(ErrorCode::METHOD_NOT_FOUND, -32601);

    let tools_only = McpServer::builder()
        .tool(echo_tool())
        .build()
        .expect("server builds");
    for method in [
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
    ] {
        let reply = ask(&tools_only, req(2, method, json!({}))).await;
        assert_error(
            &reply,
            json!(2),
            -32601,
            &format!("Method not found: {method}"),
        );
    }
}

#[tokio::test]
async fn tools_call_requires_a_string_name() {
    let server = server();
    for params in [
        json!({}),
        json!({"name": 42}),
        json!({"name": null}),
        json!({"name": ["echo"]}),
        json!({"arguments": {"text": "x"}}),
    ] {
        let reply = ask(&server, req(1, "tools/call", params)).await;
        assert_error(
            &reply,
            json!(1),
            -32602,
            "tools/call requires a string `name`",
        );
    }
    let reply = ask(
        &server,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}),
    )
    .await;
    assert_error(
        &reply,
        json!(1),
        -32602,
        "tools/call requires a string `name`",
    );
}

#[tokio::test]
async fn unknown_tool() {
    let server = server();
    let reply = ask(&server, req(1, "tools/call", json!({"name": "nope"}))).await;
    assert_error(&reply, json!(1), -32602, "Unknown tool: nope");
    let reply = ask(&server, req(1, "tools/call", json!({"name": ""}))).await;
    assert_error(&reply, json!(1), -32602, "Unknown tool: ");
    // callTool: the same error.
    let err = server
        .call_tool("nope", json!({}))
        .await
        .expect_err("unknown tool");
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32602, "Unknown tool: nope")
    );
}

#[tokio::test]
async fn tools_call_arguments_must_be_an_object() {
    let server = server();
    for args in [json!([1]), json!("text"), json!(5), json!(true)] {
        let reply = ask(
            &server,
            req(1, "tools/call", json!({"name": "echo", "arguments": args})),
        )
        .await;
        assert_error(
            &reply,
            json!(1),
            -32602,
            "tools/call `arguments` must be an object",
        );
    }
}

#[tokio::test]
async fn resources_read_requires_a_string_uri() {
    let server = server();
    for params in [
        json!({}),
        json!({"uri": 5}),
        json!({"uri": null}),
        json!({"name": "demo://ok"}),
    ] {
        let reply = ask(&server, req(1, "resources/read", params)).await;
        assert_error(
            &reply,
            json!(1),
            -32602,
            "resources/read requires a string `uri`",
        );
    }
}

#[tokio::test]
async fn unknown_resource() {
    let server = server();
    let reply = ask(
        &server,
        req(1, "resources/read", json!({"uri": "demo://missing"})),
    )
    .await;
    assert_eq!(
        reply,
        json!({
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32602,
                "message": "Unknown resource: demo://missing",
                "data": {"uri": "demo://missing"},
            },
        })
    );
}

#[tokio::test]
async fn prompts_get_requires_a_string_name() {
    let server = server();
    for params in [json!({}), json!({"name": 1}), json!({"name": null})] {
        let reply = ask(&server, req(1, "prompts/get", params)).await;
        assert_error(
            &reply,
            json!(1),
            -32602,
            "prompts/get requires a string `name`",
        );
    }
}

#[tokio::test]
async fn unknown_prompt() {
    let server = server();
    let reply = ask(&server, req(1, "prompts/get", json!({"name": "nope"}))).await;
    assert_error(&reply, json!(1), -32602, "Unknown prompt: nope");
}

#[tokio::test]
async fn panics_are_internal_errors_without_their_message() {
    let server = server();
    let reply = ask(&server, req(1, "tools/call", json!({"name": "explode"}))).await;
    assert_eq!(reply["id"], 1);
    common::assert_panic_error(&reply["error"], "tool bug");
    let reply = ask(
        &server,
        req(2, "tools/call", json!({"name": "explode_any"})),
    )
    .await;
    assert_eq!(reply["id"], 2);
    common::assert_panic_error(&reply["error"], "handler panicked");
    // A panic in the tool's function before it returned its future.
    let reply = ask(
        &server,
        req(20, "tools/call", json!({"name": "explode_early"})),
    )
    .await;
    assert_eq!(reply["id"], 20);
    common::assert_panic_error(&reply["error"], "tool bug");
    let reply = ask(
        &server,
        req(3, "resources/read", json!({"uri": "demo://explode"})),
    )
    .await;
    assert_eq!(reply["id"], 3);
    common::assert_panic_error(&reply["error"], "resource bug");
    let reply = ask(&server, req(4, "prompts/get", json!({"name": "explode"}))).await;
    assert_eq!(reply["id"], 4);
    common::assert_panic_error(&reply["error"], "prompt bug");
    // Panics in the functions before they returned their futures.
    let reply = ask(
        &server,
        req(21, "resources/read", json!({"uri": "demo://explode-early"})),
    )
    .await;
    assert_eq!(reply["id"], 21);
    common::assert_panic_error(&reply["error"], "resource bug");
    let reply = ask(
        &server,
        req(22, "prompts/get", json!({"name": "explode_early"})),
    )
    .await;
    assert_eq!(reply["id"], 22);
    common::assert_panic_error(&reply["error"], "prompt bug");
    assert_eq!(ErrorCode::INTERNAL_ERROR, -32603);
    // Everything still works afterwards.
    let reply = ask(
        &server,
        req(5, "resources/read", json!({"uri": "demo://ok"})),
    )
    .await;
    assert_eq!(reply["result"]["contents"][0]["text"], "ok");
    let reply = ask(&server, req(6, "prompts/get", json!({"name": "hello"}))).await;
    assert_eq!(reply["result"]["messages"][0]["content"]["text"], "hello");
}

#[tokio::test]
async fn invalid_cursor_is_invalid_params() {
    let server = server();
    for method in [
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
    ] {
        let reply = ask(&server, req(1, method, json!({"cursor": "page-2"}))).await;
        assert_error(
            &reply,
            json!(1),
            -32602,
            "Invalid cursor: this server lists everything in one page",
        );
        // A null cursor is the first page.
        let reply = ask(&server, req(1, method, json!({"cursor": null}))).await;
        assert!(reply.get("result").is_some(), "{reply}");
    }
}

// ---------------------------------------------------------------------------
// Hostile input
// ---------------------------------------------------------------------------

#[tokio::test]
async fn ids_of_the_wrong_type_are_invalid_requests_with_null_id() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = full_server(&flag);
    for id in [
        json!(null),
        json!(1.5),
        json!(1.0),
        json!(-0.25),
        json!({"a": 1}),
        json!(true),
        json!(false),
        json!([1]),
    ] {
        let reply = ask(
            &server,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "flip"}}),
        )
        .await;
        assert_error(
            &reply,
            Value::Null,
            -32600,
            "Invalid JSON-RPC request: id must be a string or an integer",
        );
    }
    assert!(!flag.load(Ordering::SeqCst), "a request with a bad id ran");
}

#[tokio::test]
async fn params_of_the_wrong_type_are_invalid_params() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = full_server(&flag);
    for method in [
        "tools/call",
        "ping",
        "initialize",
        "tools/list",
        "resources/read",
        "prompts/get",
    ] {
        for params in [json!(["flip"]), json!("flip"), json!(5), json!(true)] {
            let reply = ask(
                &server,
                json!({"jsonrpc": "2.0", "id": "p", "method": method, "params": params}),
            )
            .await;
            assert_error(&reply, json!("p"), -32602, "`params` must be an object");
        }
    }
    assert!(!flag.load(Ordering::SeqCst));
    // initialize's capabilities must be an object too.
    let reply = ask(
        &server,
        req(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": [1]}),
        ),
    )
    .await;
    assert_error(
        &reply,
        json!(1),
        -32602,
        "initialize: `capabilities` must be an object",
    );
}

#[tokio::test]
async fn huge_numbers_do_not_panic() {
    let server = server();
    // 1e400 overflows f64: serde_json refuses it, so it is a parse error.
    let text = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":1e400}}}"#;
    assert_eq!(
        parse_payload(text).map_err(|e| e.reply()),
        Err(parse_error_reply())
    );
    assert_eq!(
        parse_payload(b"1e400").map_err(|e| e.reply()),
        Err(parse_error_reply())
    );
    assert_eq!(
        parse_payload(b"-1e400").map_err(|e| e.reply()),
        Err(parse_error_reply())
    );

    // A huge integer id (beyond i64, even beyond u64) is not a valid id.
    for id in [
        "18446744073709551615",
        "9223372036854775808",
        "123456789012345678901234567890",
    ] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let message = parse_payload(text.as_bytes()).expect("valid JSON");
        let reply = ask(&server, message).await;
        assert_error(
            &reply,
            Value::Null,
            -32600,
            "Invalid JSON-RPC request: id must be a string or an integer",
        );
    }
    // The i64 extremes are echoed exactly.
    for id in [i64::MAX, i64::MIN] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let message = parse_payload(text.as_bytes()).expect("valid JSON");
        let reply = ask(&server, message).await;
        assert_eq!(reply, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
        assert_eq!(reply["id"].as_i64(), Some(id));
    }
    // A huge (finite) number as an argument goes through.
    let text = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":1e308,"m":123456789012345678901234567890,"text":"big"}}}"#;
    let message = parse_payload(text).expect("valid JSON");
    let reply = ask(&server, message).await;
    assert_eq!(reply["result"]["content"][0]["text"], "big");
}

#[test]
fn deeply_nested_json_is_a_parse_error_not_a_stack_overflow() {
    const DEPTH: usize = 100_000;
    let arrays = format!("{}{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    assert_eq!(
        parse_payload(arrays.as_bytes()).map_err(|e| e.reply()),
        Err(parse_error_reply())
    );
    let objects = format!("{}1{}", r#"{"a":"#.repeat(DEPTH), "}".repeat(DEPTH));
    assert_eq!(
        parse_payload(objects.as_bytes()).map_err(|e| e.reply()),
        Err(parse_error_reply())
    );
    // Nested inside a real request whose own id is readable: answered to
    // that id, as an invalid request.
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":{arrays}}}}}}}"#
    );
    assert_eq!(
        parse_payload(request.as_bytes()).map_err(|e| e.reply()),
        Err(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600,
            "message": "Invalid JSON-RPC request: nested deeper than 128 levels"}}))
    );
    // Unbalanced deep nesting too.
    assert_eq!(
        parse_payload("[".repeat(DEPTH).as_bytes()).map_err(|e| e.reply()),
        Err(parse_error_reply())
    );
}

#[tokio::test]
async fn moderately_nested_arguments_are_accepted() {
    let server = server();
    let nested = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":{nested},"text":"deep"}}}}}}"#
    );
    let message = parse_payload(text.as_bytes()).expect("100 levels parse");
    let reply = ask(&server, message).await;
    assert_eq!(reply["result"]["content"][0]["text"], "deep");
}

#[tokio::test]
async fn one_mebibyte_argument_is_echoed_back() {
    // The echo is sent whole: no result size guard.
    let server = McpServer::builder()
        .no_result_limit()
        .tool(echo_tool())
        .build()
        .expect("server");
    // Multibyte characters, quotes, backslashes, control characters and NUL.
    let unit = "aé€😀\"\\\n\t\u{0}/";
    let mut text = String::with_capacity((1 << 20) + unit.len());
    while text.len() < 1 << 20 {
        text.push_str(unit);
    }
    assert!(text.len() >= 1 << 20);

    // Through handle_message with a Value …
    let reply = ask(
        &server,
        req(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": text}}),
        ),
    )
    .await;
    assert_eq!(
        reply["result"]["content"][0]["text"].as_str(),
        Some(text.as_str())
    );

    // … and from wire text through parse_payload and dispatch_payload, with the
    // reply serialized and parsed back.
    let wire = serde_json::to_vec(&req(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": text}}),
    ))
    .expect("serialize");
    let message = parse_payload(&wire).expect("valid JSON");
    let reply = guard(
        "1 MiB echo",
        server.dispatch_payload(message, &CallContext::new()),
    )
    .await
    .expect("a reply");
    let round_trip = parse_payload(&serde_json::to_vec(&reply).expect("serialize reply"))
        .expect("reply is valid JSON");
    assert_eq!(round_trip["id"], 2);
    assert_eq!(
        round_trip["result"]["content"][0]["text"].as_str(),
        Some(text.as_str())
    );
}

#[tokio::test]
async fn string_ids_are_echoed_verbatim_in_errors() {
    let server = server();
    for id in ["", "7", "ünïcødé", "a\"b\\c", &"x".repeat(10_000)] {
        let reply = ask(&server, req(id, "no/such", json!({}))).await;
        assert_error(&reply, json!(id), -32601, "Method not found: no/such");
    }
}

#[tokio::test]
async fn cancellation_notice_with_a_bad_request_id_is_ignored() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let release_in = Arc::clone(&release);
    let server = McpServer::builder()
        .tool(McpToolDef::new(
            "slow",
            "Waits",
            json!({"type": "object"}),
            move |_args, _ctx: InvokeContext| {
                let (started_tx, release) = (started_tx.clone(), Arc::clone(&release_in));
                async move {
                    let _ = started_tx.send(());
                    release.notified().await;
                    "done"
                }
            },
        ))
        .build()
        .expect("server builds");
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let call = {
        let (server, ctx) = (server.clone(), ctx.clone());
        tokio::spawn(async move {
            server
                .handle_message(req(1, "tools/call", json!({"name": "slow"})), &ctx)
                .await
        })
    };
    guard("slow start", started.recv()).await.expect("started");
    for params in [
        json!({}),
        json!({"requestId": null}),
        json!({"requestId": 1.0}),
        json!({"requestId": [1]}),
        json!({"requestId": "1"}),
        json!([1]),
    ] {
        let reply = guard(
            "cancel notice",
            server.handle_message(
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}),
                &ctx,
            ),
        )
        .await;
        assert_eq!(reply, None);
    }
    assert_eq!(session.inflight_len(), 1, "the call is still running");
    release.notify_one();
    let reply = guard("slow call", call)
        .await
        .expect("task did not panic")
        .expect("answered");
    assert_eq!(reply["result"]["content"][0]["text"], "done");
}
