//! Outcomes travel typed through the pipeline: a handler's JSON-RPC error
//! reaches the wire exactly as given, whatever its code (the codes once used
//! internally as sentinels included), and a call that ends itself — a
//! missing client capability, `InvokeContext::fail` — returns that error
//! from `McpServer::call_tool` and from a detached context instead of
//! never returning. What came of asking the user to confirm is typed too:
//! accepted, declined, cancelled, or could not ask and why — never a bare
//! `false`, never an error the tool did not choose.

use std::time::Duration;

use mcp_core::{
    context::CannotAsk, handler::ResourceRequest, protocol::ErrorObject, transport::CallContext,
    Confirmation, InvokeContext, McpResourceDef, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};

/// Anything that should finish at once gets this long before the test fails.
const GUARD: Duration = Duration::from_secs(10);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(GUARD, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not return"))
}

/// A resource whose read fails with `code`.
fn failing_resource(code: i64) -> McpResourceDef {
    McpResourceDef::new(
        format!("test://fail/{code}"),
        "fail",
        move |_req: ResourceRequest, _ctx: InvokeContext| async move {
            Err::<String, ErrorObject>(ErrorObject::new(code, "resource failed"))
        },
    )
}

/// A tool that ends its call with `code` through `fail`.
fn failing_tool(code: i64) -> McpToolDef {
    McpToolDef::new(
        format!("fail_{code}"),
        "fails",
        json!({"type": "object"}),
        move |_args: Map<String, Value>, ctx: InvokeContext| async move {
            ctx.fail(ErrorObject::new(code, "tool failed").with_data(json!({"code": code})))
                .await;
            "went on after fail".to_owned()
        },
    )
}

const CODES: [i64; 5] = [i64::MIN, i64::MIN + 1, -32050, 0, i64::MAX];

fn server() -> McpServer {
    let mut builder = McpServer::builder().server_info("outcomes", "1");
    for code in CODES {
        builder = builder
            .resource(failing_resource(code))
            .tool(failing_tool(code));
    }
    builder
        .tool(McpToolDef::new(
            "needs_sampling",
            "needs sampling",
            json!({"type": "object"}),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                match ctx.require_capability(json!({"sampling": {}})).await {
                    Ok(()) => "had sampling".to_owned(),
                    Err(e) => format!("detached: {e}"),
                }
            },
        ))
        .tool(McpToolDef::new(
            "confirm",
            "asks, then names the outcome",
            json!({"type": "object"}),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                format!("{:?}", ctx.confirm("Proceed?").await)
            },
        ))
        .build()
        .expect("valid server")
}

/// A 2026-07-28 `tools/call` of `confirm` from a client that declared
/// `caps`, carrying `responses` as its `inputResponses` when given.
fn modern_confirm(caps: Value, responses: Option<Value>) -> Value {
    let mut params = json!({"name": "confirm", "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    }});
    if let Some(responses) = responses {
        params["inputResponses"] = responses;
    }
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no tool text: {reply}"))
}

async fn ask(server: &McpServer, message: Value) -> Value {
    let reply = within(
        "the request",
        server.handle_message(message, &CallContext::new()),
    )
    .await;
    reply.expect("a request gets a reply")
}

#[tokio::test]
async fn a_resource_error_reaches_the_wire_with_its_own_code() {
    let server = server();
    for code in CODES {
        let reply = ask(
            &server,
            json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                   "params": {"uri": format!("test://fail/{code}")}}),
        )
        .await;
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": 1,
                   "error": {"code": code, "message": "resource failed"}}),
            "code {code}"
        );
    }
}

#[tokio::test]
async fn fail_answers_exactly_its_error_whatever_the_code() {
    let server = server();
    for code in CODES {
        let reply = ask(
            &server,
            json!({"jsonrpc": "2.0", "id": "x", "method": "tools/call",
                   "params": {"name": format!("fail_{code}")}}),
        )
        .await;
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": "x",
                   "error": {"code": code, "message": "tool failed", "data": {"code": code}}}),
            "code {code}"
        );
    }
}

#[tokio::test]
async fn call_tool_returns_the_error_the_wire_gives_for_a_missing_capability() {
    let server = server();
    let err = within("call_tool", server.call_tool("needs_sampling", Value::Null))
        .await
        .expect_err("no client declared sampling");
    assert_eq!(err.code, -32603);
    assert!(err.message.contains("sampling"), "{}", err.message);
}

#[tokio::test]
async fn call_tool_returns_a_tools_fail_error() {
    let server = server();
    let err = within("call_tool", server.call_tool("fail_-32050", json!({})))
        .await
        .expect_err("the tool failed its call");
    assert_eq!(err.code, -32050);
    assert_eq!(err.data, Some(json!({"code": -32050})));
}

#[tokio::test]
async fn a_detached_context_returns_instead_of_hanging() {
    let ctx = InvokeContext::default();
    let err = within(
        "fail on a detached context",
        ctx.fail(ErrorObject::invalid_params("nope")),
    )
    .await;
    assert_eq!(err.code, -32602);
    let err = within(
        "require_capability on a detached context",
        ctx.require_capability(json!({"sampling": {}})),
    )
    .await
    .expect_err("a detached context declares nothing");
    assert_eq!(err.code, -32603);
    let err = within(
        "require_elicitation on a detached context",
        ctx.require_elicitation(),
    )
    .await
    .expect_err("a detached context cannot ask");
    assert_eq!(err.code, -32603);
}

/// A user who said no and a client that could not be asked once looked the
/// same to a tool (`false` both): now a client that did not declare
/// elicitation is `CannotAsk(NotDeclared)`, and the user's own choice comes
/// back as `Accepted`, `Declined` or `Cancelled` through the 2026-07-28
/// round trip (`input_required`, then the retry carrying the answer).
#[tokio::test]
async fn confirm_tells_a_client_that_cannot_be_asked_from_a_user_who_declined() {
    let server = server();
    let reply = ask(&server, modern_confirm(json!({}), None)).await;
    assert_eq!(text(&reply), "CannotAsk(NotDeclared)", "{reply}");

    let caps = json!({"elicitation": {"form": {}}});
    let first = ask(&server, modern_confirm(caps.clone(), None)).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let key = first["result"]["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next().cloned())
        .unwrap_or_else(|| panic!("one question: {first}"));
    for (answer, outcome) in [
        (
            json!({"action": "accept", "content": {"confirm": true}}),
            "Accepted",
        ),
        (
            json!({"action": "accept", "content": {"confirm": false}}),
            "Declined",
        ),
        (json!({"action": "decline"}), "Declined"),
        (json!({"action": "cancel"}), "Cancelled"),
    ] {
        let responses = json!({ key.clone(): answer });
        let reply = ask(&server, modern_confirm(caps.clone(), Some(responses))).await;
        assert_eq!(text(&reply), outcome, "{reply}");
    }
}

/// Without any client there is nobody to ask: a detached context and
/// `McpServer::call_tool` say so instead of ending the call.
#[tokio::test]
async fn confirm_without_a_client_says_so() {
    let outcome = within("confirm", InvokeContext::detached().confirm("Proceed?")).await;
    assert_eq!(outcome, Confirmation::CannotAsk(CannotAsk::NoClient));
    assert!(!outcome.is_accepted());
    let result = within("call_tool", server().call_tool("confirm", json!({})))
        .await
        .expect("the tool's own answer");
    assert_eq!(result.text_content(), "CannotAsk(NoClient)");
}
