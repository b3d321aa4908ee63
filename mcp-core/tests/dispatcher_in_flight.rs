//! Transport-free tests of the dispatcher (`McpServer::handle_message`):
//! requests in flight: cancellation and in-flight ids, batches, progress
//! and elicitation.

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

mod common;
include!("common/dispatcher_prelude.rs");

// ---------------------------------------------------------------------------
// Cancellation and in-flight ids
// ---------------------------------------------------------------------------

#[tokio::test]
async fn cancel_reaches_only_the_same_session() {
    let (tool, mut gate) = gated_tool("wait");
    let server = build(McpServer::builder().tool(tool));
    let a = Session::new();
    let b = Session::new();
    let ctx_a = CallContext::new().with_session(a.clone());
    let ctx_b = CallContext::new().with_session(b.clone());

    // A cancel from session B for A's id does nothing.
    let call = spawn_message(&server, &ctx_a, call_req(1, "wait", json!({})));
    gate.wait_started().await;
    assert_eq!(a.inflight_len(), 1);
    assert!(!b.cancel(&1.into()), "B has nothing in flight");
    tell(
        &server,
        &ctx_b,
        note("notifications/cancelled", json!({"requestId": 1})),
    )
    .await;
    // Nor does a cancel for another id in A's session.
    tell(
        &server,
        &ctx_a,
        note("notifications/cancelled", json!({"requestId": "1"})),
    )
    .await;
    assert_eq!(a.inflight_len(), 1);
    gate.release.notify_one();
    let reply = join(call).await.expect("uncancelled call is answered");
    assert_eq!(reply["id"], 1);
    assert_eq!(text_of(result(&reply)), "released");
    assert_eq!(a.inflight_len(), 0);

    // The same cancel from session A aborts it: no response at all.
    let call = spawn_message(&server, &ctx_a, call_req(2, "wait", json!({})));
    gate.wait_started().await;
    tell(
        &server,
        &ctx_a,
        note(
            "notifications/cancelled",
            json!({"requestId": 2, "reason": "user"}),
        ),
    )
    .await;
    assert_eq!(join(call).await, None, "a cancelled call gets no response");
    gate.wait_cancelled().await;
    assert_eq!(a.inflight_len(), 0, "the cancelled id is unregistered");
    // And the id can be reused.
    gate.release.notify_one();
    let reply = ask(&server, &ctx_a, call_req(2, "wait", json!({}))).await;
    assert_eq!(text_of(result(&reply)), "released");
}

#[tokio::test]
async fn sessionless_calls_share_one_cancellation_scope() {
    let (tool, mut gate) = gated_tool("wait");
    let server = build(McpServer::builder().tool(tool));
    let call = spawn_message(
        &server,
        &CallContext::new(),
        call_req("job", "wait", json!({})),
    );
    gate.wait_started().await;
    // A different (session-less) context reaches it.
    tell(
        &server,
        &CallContext::new(),
        note("notifications/cancelled", json!({"requestId": "job"})),
    )
    .await;
    assert_eq!(join(call).await, None);
    gate.wait_cancelled().await;
}

#[tokio::test]
async fn same_id_in_flight_in_same_session_is_refused() {
    let (tool, mut gate) = gated_tool("wait");
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(
        McpServer::builder()
            .tool(tool)
            .tool(flip_tool("flip", &flag)),
    );
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let call = spawn_message(&server, &ctx, call_req(7, "wait", json!({})));
    gate.wait_started().await;

    let reply = ask(&server, &ctx, call_req(7, "flip", json!({}))).await;
    assert_eq!(reply["id"], 7);
    assert_eq!(
        error(&reply),
        (-32600, "Request id 7 is already in flight".to_owned())
    );
    assert!(
        !flag.load(Ordering::SeqCst),
        "the refused request did not run"
    );
    // Other methods with the same id are refused too; ping is not tracked.
    let reply = ask(&server, &ctx, req(7, "tools/list", json!({}))).await;
    assert_eq!(error(&reply).0, -32600);

    // The string id "7" is a different id.
    let reply = ask(&server, &ctx, call_req("7", "flip", json!({}))).await;
    assert_eq!(reply["id"], "7");
    assert_eq!(text_of(result(&reply)), "flipped");
    flag.store(false, Ordering::SeqCst);

    // The same id in another session is fine.
    let other = CallContext::new().with_session(Session::new());
    assert_eq!(
        call_text_with_id(&server, &other, 7, "flip").await,
        "flipped"
    );

    // The original call is unaffected and, once done, the id is free again.
    gate.release.notify_one();
    let reply = join(call).await.expect("original call answered");
    assert_eq!(text_of(result(&reply)), "released");
    assert_eq!(call_text_with_id(&server, &ctx, 7, "flip").await, "flipped");
}

async fn call_text_with_id(server: &McpServer, ctx: &CallContext, id: i64, name: &str) -> String {
    let reply = ask(server, ctx, call_req(id, name, json!({}))).await;
    text_of(result(&reply))
}

#[tokio::test]
async fn already_cancelled_external_signal_means_no_response() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(McpServer::builder().tool(flip_tool("flip", &flag)));
    let signal = CancelToken::new();
    signal.cancel();
    let session = Session::new();
    let ctx = CallContext::new()
        .with_signal(signal)
        .with_session(session.clone());
    tell(&server, &ctx, call_req(1, "flip", json!({}))).await;
    assert!(!flag.load(Ordering::SeqCst), "cancelled call must not run");
    assert_eq!(session.inflight_len(), 0);
}

#[tokio::test]
async fn external_signal_cancels_a_running_call() {
    let (tool, mut gate) = gated_tool("wait");
    let server = build(McpServer::builder().tool(tool));
    let signal = CancelToken::new();
    let session = Session::new();
    let ctx = CallContext::new()
        .with_signal(signal.clone())
        .with_session(session.clone());
    let call = spawn_message(&server, &ctx, call_req(1, "wait", json!({})));
    gate.wait_started().await;
    signal.cancel();
    assert_eq!(join(call).await, None);
    // The external signal is linked into the call's own token.
    gate.wait_cancelled().await;
    assert_eq!(session.inflight_len(), 0);
}

#[tokio::test]
async fn dropping_the_future_unregisters_the_id() {
    let (tool, mut gate) = gated_tool("wait");
    let server = build(McpServer::builder().tool(tool));
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let call = spawn_message(&server, &ctx, call_req(1, "wait", json!({})));
    gate.wait_started().await;
    assert_eq!(session.inflight_len(), 1);
    call.abort();
    let joined = guard("aborted call", call).await;
    assert!(joined.expect_err("aborted").is_cancelled());
    assert_eq!(session.inflight_len(), 0);
    gate.release.notify_one();
    let reply = ask(&server, &ctx, call_req(1, "wait", json!({}))).await;
    assert_eq!(text_of(result(&reply)), "released");
}

// ---------------------------------------------------------------------------
// Batches
// ---------------------------------------------------------------------------

async fn dispatch(server: &McpServer, ctx: &CallContext, payload: Value) -> Option<Value> {
    let shown = payload.to_string();
    guard(&shown, server.dispatch_payload(payload, ctx)).await
}

#[tokio::test]
async fn batch_answers_each_request_in_order() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(
        McpServer::builder()
            .tool(echo_tool())
            .tool(flip_tool("flip", &flag)),
    );
    let reply = dispatch(
        &server,
        &CallContext::new(),
        json!([
            req("a", "ping", json!({})),
            note("notifications/initialized", json!({})),
            call_req(2, "echo", json!({"text": "two"})),
            {"jsonrpc": "2.0", "id": 99, "result": {}},
            req(3, "nope", json!({})),
            call_req("four", "flip", json!({})),
        ]),
    )
    .await
    .expect("a batch with requests gets a reply");
    let replies = reply.as_array().expect("batch reply is an array");
    let ids: Vec<&Value> = replies.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!("a"), &json!(2), &json!(3), &json!("four")]);
    assert_eq!(result(&replies[0]), &json!({}));
    assert_eq!(text_of(result(&replies[1])), "two");
    assert_eq!(error(&replies[2]).0, -32601);
    assert_eq!(text_of(result(&replies[3])), "flipped");
    assert!(flag.load(Ordering::SeqCst));
}

#[tokio::test]
async fn batch_of_notifications_gets_no_reply() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(McpServer::builder().tool(flip_tool("flip", &flag)));
    let reply = dispatch(
        &server,
        &CallContext::new(),
        json!([
            note("notifications/initialized", json!({})),
            note("tools/call", json!({"name": "flip"})),
            note("notifications/cancelled", json!({"requestId": 1})),
            {"jsonrpc": "2.0", "id": 5, "result": {}},
        ]),
    )
    .await;
    assert_eq!(reply, None);
    assert!(
        !flag.load(Ordering::SeqCst),
        "notification in a batch executed a tool"
    );
}

#[tokio::test]
async fn empty_batch_is_invalid_request() {
    let server = build(McpServer::builder());
    let reply = dispatch(&server, &CallContext::new(), json!([]))
        .await
        .expect("empty batch is answered");
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(
        error(&reply),
        (-32600, "Invalid JSON-RPC request: empty batch".to_owned())
    );
}

#[tokio::test]
async fn batched_initialize_is_refused_in_its_slot_while_others_run() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(McpServer::builder().tool(flip_tool("flip", &flag)));
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let reply = dispatch(
        &server,
        &ctx,
        json!([
            req(1, "ping", json!({})),
            req(2, "initialize", json!({"protocolVersion": "2025-06-18"})),
            call_req(3, "flip", json!({})),
        ]),
    )
    .await
    .expect("batch reply");
    let replies = reply.as_array().expect("array");
    assert_eq!(replies.len(), 3);
    assert_eq!(result(&replies[0]), &json!({}));
    assert_eq!(replies[1]["id"], 2);
    assert_eq!(
        error(&replies[1]),
        (
            -32600,
            "Invalid JSON-RPC request: initialize cannot be batched".to_owned()
        )
    );
    assert_eq!(text_of(result(&replies[2])), "flipped");
    assert!(flag.load(Ordering::SeqCst));
    assert!(
        session.client().is_none(),
        "the batched initialize did not run"
    );
}

#[tokio::test]
async fn batch_answers_invalid_entries_in_their_slots() {
    let server = build(McpServer::builder());
    let reply = dispatch(
        &server,
        &CallContext::new(),
        json!([1, req(2, "ping", json!({})), {"foo": "bar"}, {"jsonrpc": "2.0", "id": null, "method": "ping"}]),
    )
    .await
    .expect("batch reply");
    let replies = reply.as_array().expect("array");
    assert_eq!(replies.len(), 4);
    assert_eq!(error(&replies[0]).0, -32600);
    assert_eq!(replies[0]["id"], Value::Null);
    assert_eq!(replies[1]["id"], 2);
    assert_eq!(result(&replies[1]), &json!({}));
    assert_eq!(error(&replies[2]).0, -32600);
    assert_eq!(error(&replies[3]).0, -32600);
    assert_eq!(replies[3]["id"], Value::Null);
}

#[tokio::test]
async fn dispatch_payload_single_message_is_handle_message() {
    let server = build(McpServer::builder().tool(echo_tool()));
    let ctx = CallContext::new();
    let reply = dispatch(&server, &ctx, call_req(1, "echo", json!({"text": "x"})))
        .await
        .expect("reply");
    assert_eq!(text_of(result(&reply)), "x");
    assert_eq!(
        dispatch(&server, &ctx, note("notifications/initialized", json!({}))).await,
        None
    );
    // A single initialize is fine outside a batch.
    let reply = dispatch(&server, &ctx, req(2, "initialize", json!({})))
        .await
        .expect("reply");
    assert_eq!(result(&reply)["protocolVersion"], "2025-11-25");
}

// ---------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------

/// Reports three steps and says whether progress was available.
fn progress_tool() -> McpToolDef {
    McpToolDef::new(
        "build",
        "Reports progress",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            for i in 1..=3 {
                ctx.report_progress(f64::from(i), Some(3.0), Some(&format!("step {i}")))
                    .await;
            }
            format!("progress={}", ctx.progress().is_some())
        },
    )
}

type Updates = Arc<Mutex<Vec<ProgressUpdate>>>;

fn sink() -> (ProgressSink, Updates) {
    let updates: Updates = Arc::default();
    let into = Arc::clone(&updates);
    let sink: ProgressSink = Arc::new(move |u: ProgressUpdate| {
        into.lock().unwrap_or_else(PoisonError::into_inner).push(u);
    });
    (sink, updates)
}

fn taken(updates: &Updates) -> Vec<ProgressUpdate> {
    std::mem::take(&mut *updates.lock().unwrap_or_else(PoisonError::into_inner))
}

fn progress_call(meta: Option<Value>) -> Value {
    let mut params = json!({"name": "build", "arguments": {}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    req(1, "tools/call", params)
}

#[tokio::test]
async fn explicit_progress_sink_receives_updates() {
    let server = build(McpServer::builder().tool(progress_tool()));
    let (sink, updates) = sink();
    let ctx = CallContext::new().with_progress(sink);
    // An explicit sink needs no progressToken.
    let reply = ask(&server, &ctx, progress_call(None)).await;
    assert_eq!(text_of(result(&reply)), "progress=true");
    let got = taken(&updates);
    assert_eq!(
        got,
        (1..=3)
            .map(|i| ProgressUpdate {
                progress: f64::from(i),
                total: Some(3.0),
                message: Some(format!("step {i}")),
            })
            .collect::<Vec<_>>()
    );
    // With a token too.
    let reply = ask(
        &server,
        &ctx,
        progress_call(Some(json!({"progressToken": "t"}))),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "progress=true");
    assert_eq!(taken(&updates).len(), 3);
}

#[tokio::test]
async fn progress_token_with_outbound_sends_notifications() {
    let server = build(McpServer::builder().tool(progress_tool()));
    let (outbound, mut rx) = recorder();
    let ctx = CallContext::new().with_outbound(outbound);
    let reply = ask(
        &server,
        &ctx,
        progress_call(Some(json!({"progressToken": "tok"}))),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "progress=true");
    let sent = drain(&mut rx);
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(
        sent[0],
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "tok", "progress": 1.0, "total": 3.0, "message": "step 1"},
        })
    );
    assert_eq!(sent[2]["params"]["progress"], 3.0);

    // An integer token is echoed as an integer.
    let reply = ask(
        &server,
        &ctx,
        progress_call(Some(json!({"progressToken": 42}))),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "progress=true");
    let sent = drain(&mut rx);
    assert_eq!(sent.len(), 3);
    assert!(sent.iter().all(|n| n["params"]["progressToken"] == 42));
}

#[tokio::test]
async fn progress_needs_both_token_and_outbound() {
    let server = build(McpServer::builder().tool(progress_tool()));
    let (outbound, mut rx) = recorder();
    let with_outbound = CallContext::new().with_outbound(outbound);
    // Outbound but no token.
    let reply = ask(&server, &with_outbound, progress_call(None)).await;
    assert_eq!(text_of(result(&reply)), "progress=false");
    // Outbound but a token of the wrong type.
    for bad in [
        json!({"progressToken": 1.5}),
        json!({"progressToken": {"a": 1}}),
        json!({"progressToken": null}),
    ] {
        let reply = ask(&server, &with_outbound, progress_call(Some(bad.clone()))).await;
        assert_eq!(text_of(result(&reply)), "progress=false", "for {bad}");
    }
    assert!(drain(&mut rx).is_empty());
    // Token but no outbound.
    let reply = ask(
        &server,
        &CallContext::new(),
        progress_call(Some(json!({"progressToken": "tok"}))),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "progress=false");
}

#[tokio::test]
async fn explicit_progress_sink_takes_precedence_over_outbound() {
    let server = build(McpServer::builder().tool(progress_tool()));
    let (outbound, mut rx) = recorder();
    let (sink, updates) = sink();
    let ctx = CallContext::new()
        .with_outbound(outbound)
        .with_progress(sink);
    let reply = ask(
        &server,
        &ctx,
        progress_call(Some(json!({"progressToken": "tok"}))),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "progress=true");
    assert_eq!(taken(&updates).len(), 3);
    assert!(drain(&mut rx).is_empty(), "outbound must not be used");
}

// ---------------------------------------------------------------------------
// Elicitation
// ---------------------------------------------------------------------------

fn confirm_tool() -> McpToolDef {
    McpToolDef::new(
        "write",
        "Asks before writing",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            let available = ctx.elicitation().is_some();
            let confirmed = match ctx.confirm("Write the output?").await {
                Confirmation::CannotAsk(CannotAsk::NoAnswer(e)) => format!("no answer {}", e.code),
                other => format!("{other:?}"),
            };
            format!("available={available} confirmed={confirmed}")
        },
    )
}

#[tokio::test]
async fn elicit_hook_confirm_accept() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    let hook = ScriptedElicit::new(Ok(
        json!({"action": "accept", "content": {"confirm": true}}),
    ));
    let ctx = CallContext::new().with_elicit(hook.clone());
    assert_eq!(
        call_text(&server, &ctx, "write", json!({})).await,
        "available=true confirmed=Accepted"
    );
    let seen = hook.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["message"], "Write the output?");
    assert_eq!(seen[0]["requestedSchema"]["required"], json!(["confirm"]));
    assert_eq!(
        seen[0]["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
}

#[tokio::test]
async fn elicit_hook_confirm_fails_closed() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    for (reply, outcome) in [
        (
            Ok(json!({"action": "accept", "content": {"confirm": false}})),
            "Declined",
        ),
        (Ok(json!({"action": "accept"})), "no answer -32602"),
        (Ok(json!({"action": "decline"})), "Declined"),
        (Ok(json!({"action": "cancel"})), "Cancelled"),
        (Ok(json!({"confirm": true})), "no answer -32602"),
        (
            Err(ErrorObject::internal("the client connection closed")),
            "no answer -32603",
        ),
    ] {
        let shown = format!("{reply:?}");
        let ctx = CallContext::new().with_elicit(ScriptedElicit::new(reply));
        assert_eq!(
            call_text(&server, &ctx, "write", json!({})).await,
            format!("available=true confirmed={outcome}"),
            "for {shown}"
        );
    }
    // No hook, no outbound, no initialized client: nobody to ask.
    assert_eq!(
        call_text(&server, &CallContext::new(), "write", json!({})).await,
        "available=false confirmed=CannotAsk(NoClient)"
    );
}

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Booking {
    name: String,
    seats: u32,
    vip: bool,
}

fn booking_tool() -> McpToolDef {
    McpToolDef::new(
        "book",
        "Asks for booking details",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            let Some(elicitor) = ctx.elicitation() else {
                return "unavailable".to_owned();
            };
            match elicitor.form::<Booking>("Booking details?").await {
                Ok(ElicitResponse::Accept(b)) => format!("accept {} {} {}", b.name, b.seats, b.vip),
                Ok(ElicitResponse::Decline) => "decline".to_owned(),
                Ok(ElicitResponse::Cancel) => "cancel".to_owned(),
                Err(e) => format!("error {}", e.code),
            }
        },
    )
}

#[tokio::test]
async fn typed_form_accept_decline_cancel() {
    let server = build(McpServer::builder().tool(booking_tool()));
    let accept = ScriptedElicit::new(Ok(
        json!({"action": "accept", "content": {"name": "Ada", "seats": 2, "vip": true}}),
    ));
    let ctx = CallContext::new().with_elicit(accept.clone());
    assert_eq!(
        call_text(&server, &ctx, "book", json!({})).await,
        "accept Ada 2 true"
    );
    let seen = accept.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["message"], "Booking details?");
    let schema = &seen[0]["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["name"]["type"], "string");
    assert_eq!(schema["properties"]["vip"]["type"], "boolean");
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .expect("required list")
        .iter()
        .map(|v| v.as_str().expect("string"))
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["name", "seats", "vip"]);

    for (reply, expected) in [
        (json!({"action": "decline"}), "decline"),
        (json!({"action": "cancel"}), "cancel"),
        // Accepted content that does not fit the type is -32602.
        (
            json!({"action": "accept", "content": {"name": "Ada"}}),
            "error -32602",
        ),
        (
            json!({"action": "accept", "content": {"name": "Ada", "seats": "two", "vip": true}}),
            "error -32602",
        ),
        // An unknown action is -32602 too.
        (json!({"action": "maybe"}), "error -32602"),
    ] {
        let ctx = CallContext::new().with_elicit(ScriptedElicit::new(Ok(reply.clone())));
        assert_eq!(
            call_text(&server, &ctx, "book", json!({})).await,
            expected,
            "for {reply}"
        );
    }
}

async fn initialize_with(server: &McpServer, ctx: &CallContext, capabilities: Value) {
    let reply = ask(
        server,
        ctx,
        req(
            "init",
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities}),
        ),
    )
    .await;
    result(&reply);
}

#[tokio::test]
async fn elicitation_over_outbound_routes_the_client_response() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    let (outbound, mut rx) = recorder();
    let session = Session::new();
    let ctx = CallContext::new()
        .with_outbound(outbound)
        .with_session(session.clone());
    initialize_with(&server, &ctx, json!({"elicitation": {}})).await;

    let call = spawn_message(&server, &ctx, call_req(1, "write", json!({})));
    let request = guard("elicitation/create", rx.recv())
        .await
        .expect("server sends elicitation/create");
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Write the output?");
    let id = request["id"].clone();
    assert!(
        id.is_string() || id.is_i64(),
        "server request has an id: {request}"
    );
    // The client's response is routed to the waiting tool, and not answered.
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"confirm": true}}}),
    )
    .await;
    let reply = join(call).await.expect("call answered");
    assert_eq!(text_of(result(&reply)), "available=true confirmed=Accepted");

    // An error response from the client fails closed, and is told apart
    // from a user who declined.
    let call = spawn_message(&server, &ctx, call_req(2, "write", json!({})));
    let request = guard("elicitation/create", rx.recv())
        .await
        .expect("second elicitation/create");
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "user away"}}),
    )
    .await;
    let reply = join(call).await.expect("call answered");
    assert_eq!(
        text_of(result(&reply)),
        "available=true confirmed=no answer -1"
    );
}

#[tokio::test]
async fn elicitation_responses_route_within_their_own_session() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    let (out_a, mut rx_a) = recorder();
    let (out_b, mut rx_b) = recorder();
    let ctx_a = CallContext::new()
        .with_outbound(out_a)
        .with_session(Session::new());
    let ctx_b = CallContext::new()
        .with_outbound(out_b)
        .with_session(Session::new());
    initialize_with(&server, &ctx_a, json!({"elicitation": {}})).await;
    initialize_with(&server, &ctx_b, json!({"elicitation": {}})).await;

    let call_a = spawn_message(&server, &ctx_a, call_req(1, "write", json!({})));
    let call_b = spawn_message(&server, &ctx_b, call_req(1, "write", json!({})));
    let req_a = guard("A's elicitation", rx_a.recv()).await.expect("A asks");
    let req_b = guard("B's elicitation", rx_b.recv()).await.expect("B asks");
    assert_eq!(req_a["method"], "elicitation/create");
    assert_eq!(req_b["method"], "elicitation/create");

    // B declines first, then A accepts; each answer reaches only its own session.
    tell(
        &server,
        &ctx_b,
        json!({"jsonrpc": "2.0", "id": req_b["id"], "result": {"action": "decline"}}),
    )
    .await;
    tell(
        &server,
        &ctx_a,
        json!({"jsonrpc": "2.0", "id": req_a["id"], "result": {"action": "accept", "content": {"confirm": true}}}),
    )
    .await;
    let reply_a = join(call_a).await.expect("A answered");
    let reply_b = join(call_b).await.expect("B answered");
    assert_eq!(
        text_of(result(&reply_a)),
        "available=true confirmed=Accepted"
    );
    assert_eq!(
        text_of(result(&reply_b)),
        "available=true confirmed=Declined"
    );
}

#[tokio::test]
async fn elicitation_over_outbound_needs_the_client_capability() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    let (outbound, mut rx) = recorder();
    // Never initialized.
    let ctx = CallContext::new()
        .with_outbound(Arc::clone(&outbound))
        .with_session(Session::new());
    assert_eq!(
        call_text(&server, &ctx, "write", json!({})).await,
        "available=false confirmed=CannotAsk(NoClient)"
    );
    // Initialized without elicitation: the tool is told the client cannot
    // be asked, not that the user said no.
    let ctx = CallContext::new()
        .with_outbound(outbound)
        .with_session(Session::new());
    initialize_with(&server, &ctx, json!({"sampling": {}})).await;
    assert_eq!(
        call_text(&server, &ctx, "write", json!({})).await,
        "available=false confirmed=CannotAsk(NotDeclared)"
    );
    assert!(drain(&mut rx).is_empty());
}

#[tokio::test]
async fn explicit_elicit_hook_takes_precedence_over_outbound() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    let (outbound, mut rx) = recorder();
    let hook = ScriptedElicit::new(Ok(
        json!({"action": "accept", "content": {"confirm": true}}),
    ));
    let ctx = CallContext::new()
        .with_outbound(outbound)
        .with_elicit(hook.clone())
        .with_session(Session::new());
    initialize_with(&server, &ctx, json!({"elicitation": {}})).await;
    assert_eq!(
        call_text(&server, &ctx, "write", json!({})).await,
        "available=true confirmed=Accepted"
    );
    assert_eq!(hook.seen().len(), 1);
    assert!(drain(&mut rx).is_empty(), "outbound must not be used");
}
