//! The HTTP transport over real loopback TCP: Streamable HTTP (progress
//! over SSE, elicitation round trip, cancellation in and across sessions,
//! disconnect, the GET stream, draining on close). The client is raw
//! HTTP/1.1 over `TcpStream`. Timeouts below only guard against hangs.

#![cfg(feature = "http")]
// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

#[path = "common/raw_http.rs"]
mod raw_http;
#[path = "common/tool_events.rs"]
mod tool_events;
include!("common/http_prelude.rs");

// ---------------------------------------------------------------- streamable HTTP

#[tokio::test]
async fn progress_streams_over_sse_then_the_result() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let mut s = open_post(
        f.addr(),
        &[ACCEPT_BOTH],
        &call_with_progress(7, "slow", json!({"steps": 3})),
    )
    .await;
    assert_eq!(s.status, 200);
    assert!(s.is_sse(), "headers: {:?}", s.headers);
    let mut progress = Vec::new();
    let result = loop {
        let event = s.next_event().await.expect("an event before the end");
        if event["method"] == "notifications/progress" {
            assert_eq!(event["params"]["progressToken"], "p7");
            progress.push(event["params"]["progress"].as_f64().expect("progress"));
        } else {
            break event;
        }
    };
    assert_eq!(progress, vec![1.0, 2.0, 3.0]);
    assert_eq!(result["id"], 7);
    assert_eq!(tool_text(&result), "done 3");
    assert_eq!(
        s.next_event().await,
        None,
        "the stream ends after the response"
    );
    f.handle.close().await;
}

#[tokio::test]
async fn a_client_without_sse_gets_plain_json() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let mut s = open_post(
        f.addr(),
        &[("Accept", "application/json")],
        &call_with_progress(8, "slow", json!({"steps": 2})),
    )
    .await;
    assert_eq!(s.status, 200);
    assert_eq!(s.header("content-type"), Some("application/json"));
    assert_eq!(tool_text(&s.body_json().await), "done 2");
    // A call that sends nothing first is plain JSON even when SSE is accepted.
    let mut s = open_post(
        f.addr(),
        &[ACCEPT_BOTH],
        &call(9, "echo", json!({"text": "plain"})),
    )
    .await;
    assert_eq!(s.header("content-type"), Some("application/json"));
    assert_eq!(tool_text(&s.body_json().await), "plain");
    f.handle.close().await;
}

#[tokio::test]
async fn elicitation_round_trip_over_sse_and_post() {
    let mut f = Fixture::start(sessions()).await;
    let caps = json!({"elicitation": {}});
    let sid = open_session(f.addr(), &[], caps.clone()).await;
    for (answer, expected) in [
        (
            json!({"action": "accept", "content": {"confirm": true}}),
            "confirmed",
        ),
        (json!({"action": "decline"}), "not confirmed"),
    ] {
        let mut s = open_post(
            f.addr(),
            &[ACCEPT_BOTH, ("Mcp-Session-Id", &sid)],
            &call(11, "confirm", json!({})),
        )
        .await;
        assert!(s.is_sse());
        let ask = s.next_event().await.expect("elicitation request");
        assert_eq!(ask["method"], "elicitation/create");
        assert_eq!(ask["params"]["message"], "Proceed?");
        let id = ask["id"].clone();
        // Another session cannot answer it.
        let other = open_session(f.addr(), &[], caps.clone()).await;
        let forged = json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"confirm": true}}});
        let r = post(f.addr(), &[("Mcp-Session-Id", &other)], &forged).await;
        assert_eq!(r.status, 202);
        // The real answer arrives as its own POST.
        let reply = json!({"jsonrpc": "2.0", "id": id, "result": answer});
        let r = post(f.addr(), &[("Mcp-Session-Id", &sid)], &reply).await;
        assert_eq!(r.status, 202);
        let result = s.next_event().await.expect("the tool result");
        assert_eq!(result["id"], 11);
        assert_eq!(tool_text(&result), expected);
        assert_eq!(s.next_event().await, None);
    }
    assert_eq!(f.event().await, "confirm elicitation=true");
    f.handle.close().await;
}

/// The default options keep legacy sessions: a 2025-era client that
/// declared elicitation in `initialize` is really asked, over the POST's
/// event stream, and its answer (its own POST) reaches the tool.
#[tokio::test]
async fn default_options_ask_a_legacy_client_that_declared_elicitation() {
    let mut f = Fixture::start(HttpOptions::new()).await;
    let sid = open_session(f.addr(), &[], json!({"elicitation": {}})).await;
    let mut s = open_post(
        f.addr(),
        &[ACCEPT_BOTH, ("Mcp-Session-Id", &sid)],
        &call(12, "confirm", json!({})),
    )
    .await;
    assert!(s.is_sse());
    let ask = s.next_event().await.expect("elicitation request");
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "Proceed?");
    let reply = json!({"jsonrpc": "2.0", "id": ask["id"].clone(),
        "result": {"action": "accept", "content": {"confirm": true}}});
    let r = post(f.addr(), &[("Mcp-Session-Id", &sid)], &reply).await;
    assert_eq!(r.status, 202);
    let result = s.next_event().await.expect("the tool result");
    assert_eq!(result["id"], 12);
    assert_eq!(tool_text(&result), "confirmed");
    assert_eq!(s.next_event().await, None);
    assert_eq!(f.event().await, "confirm elicitation=true");
    f.handle.close().await;
}

/// Explicitly stateless legacy serving forgets `initialize`: a question
/// cannot reach the client. `confirm` once ended the whole call with a
/// `-32603` from inside the tool, so clients got an internal error where
/// the tool's own fail-closed answer was due; now it says
/// `CannotAsk(SessionlessHttp)` and the tool answers, saying why.
#[tokio::test]
async fn without_sessions_confirm_lets_the_tool_answer_why_it_cannot_ask() {
    let mut f = Fixture::start(HttpOptions::stateless()).await;
    let init = post(f.addr(), &[], &init_body(json!({"elicitation": {}}))).await;
    assert_eq!(init.status, 200);
    assert_eq!(init.header("mcp-session-id"), None);
    let r = post(
        f.addr(),
        &[ACCEPT_BOTH, ("MCP-Protocol-Version", "2025-06-18")],
        &call(1, "confirm", json!({})),
    )
    .await;
    assert_eq!(r.status, 200);
    let reply = r.json();
    assert_eq!(reply["id"], 1);
    assert!(
        reply.get("error").is_none(),
        "the tool's own answer: {reply}"
    );
    assert_eq!(reply["result"]["isError"], true, "fails closed: {reply}");
    let text = tool_text(&reply);
    assert!(text.starts_with("not confirmed: cannot ask"), "{text}");
    assert!(text.contains("without sessions"), "{text}");
    assert_eq!(f.event().await, "confirm elicitation=false");
    f.handle.close().await;
}

#[tokio::test]
async fn cancel_in_the_same_session_stops_the_call() {
    let mut f = Fixture::start(sessions().cancelled_linger(Duration::from_millis(300))).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    // The call sends nothing, so the response head only comes once it ends.
    let addr = f.addr();
    let sid2 = sid.clone();
    let stream = tokio::spawn(async move {
        open_post(
            addr,
            &[ACCEPT_BOTH, ("Mcp-Session-Id", &sid2)],
            &call(21, "block", json!({})),
        )
        .await
    });
    f.wait_event("block started").await;
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 21}});
    let r = post(f.addr(), &[("Mcp-Session-Id", &sid)], &cancel).await;
    assert_eq!(r.status, 202);
    f.wait_event("block ended cancelled=true").await;
    let mut s = guard("cancelled call's response", stream)
        .await
        .expect("task");
    // No response ever follows: the stream carries nothing and ends.
    assert!(s.is_sse());
    assert_eq!(s.next_event().await, None);
    f.handle.close().await;
}

#[tokio::test]
async fn cancel_from_another_session_is_ignored() {
    let mut f = Fixture::start(sessions()).await;
    let a = open_session(f.addr(), &[], json!({})).await;
    let b = open_session(f.addr(), &[], json!({})).await;
    let addr = f.addr();
    let a2 = a.clone();
    let call_a = tokio::spawn(async move {
        post(
            addr,
            &[("Mcp-Session-Id", &a2)],
            &call(31, "finite", json!({})),
        )
        .await
    });
    f.wait_event("finite started").await;
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 31}});
    assert_eq!(
        post(addr, &[("Mcp-Session-Id", &b)], &cancel).await.status,
        202
    );
    let r = guard("call in session a", call_a).await.expect("task");
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()), "finished");
    assert_eq!(f.event().await, "finite ended cancelled=false");
    // The same request id in another session is a different request.
    let r = post(
        addr,
        &[("Mcp-Session-Id", &b)],
        &call(31, "echo", json!({"text": "b"})),
    )
    .await;
    assert_eq!(tool_text(&r.json()), "b");
    f.handle.close().await;
}

#[tokio::test]
async fn client_disconnect_cancels_the_call() {
    let mut f = Fixture::start(HttpOptions::stateless()).await;
    // Plain JSON: the response future is pending when the client leaves.
    let s = open_post_no_wait(f.addr(), &[], &call(41, "block", json!({}))).await;
    f.wait_event("block started").await;
    drop(s);
    f.wait_event("block ended cancelled=true").await;

    // SSE: the stream is open (a progress event went out) when the client leaves.
    let mut s = open_post(
        f.addr(),
        &[ACCEPT_BOTH],
        &call_with_progress(42, "slow", json!({"steps": 1000, "delay_ms": 5})),
    )
    .await;
    assert!(s.is_sse());
    assert!(s.next_event().await.is_some());
    drop(s);
    // The server is still fine.
    let r = post(f.addr(), &[], &call(43, "echo", json!({"text": "alive"}))).await;
    assert_eq!(tool_text(&r.json()), "alive");
    f.handle.close().await;
}

#[tokio::test]
async fn deleting_a_session_cancels_its_calls() {
    let mut f = Fixture::start(sessions()).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    let addr = f.addr();
    let s2 = sid.clone();
    let pending = tokio::spawn(async move {
        post(
            addr,
            &[("Mcp-Session-Id", &s2)],
            &call(51, "block", json!({})),
        )
        .await
    });
    f.wait_event("block started").await;
    let r = raw(
        addr,
        &request(addr, "DELETE", "/mcp", &[("Mcp-Session-Id", &sid)], ""),
    )
    .await;
    assert_eq!(r.status, 204);
    f.wait_event("block ended cancelled=true").await;
    let r = guard("cancelled call", pending).await.expect("task");
    assert_eq!(r.status, 503);
    f.handle.close().await;
}

/// Opens an event-stream call of `slow` (progress every 20 ms, for far
/// longer than any test runs) and waits until the stream has started.
async fn open_streaming_call(addr: SocketAddr, sid: Option<&str>, id: i64) -> Stream {
    let mut h = vec![ACCEPT_BOTH];
    if let Some(sid) = sid {
        h.push(("Mcp-Session-Id", sid));
    }
    let mut s = open_post(
        addr,
        &h,
        &call_with_progress(id, "slow", json!({"steps": 100_000, "delay_ms": 20})),
    )
    .await;
    assert_eq!(s.status, 200);
    assert!(s.is_sse());
    let first = s.next_event().await.expect("a progress event");
    assert_eq!(first["method"], "notifications/progress");
    s
}

/// Reads a stream to its end and returns its last event, which must be the
/// JSON-RPC error of a call the server stopped, carrying the call's id.
async fn assert_stream_ends_with_stopped_error(s: &mut Stream, id: i64) {
    let mut last = None;
    while let Some(event) = guard("the stream's end", s.next_event()).await {
        last = Some(event);
    }
    let last = last.expect("events");
    assert_eq!(last["id"], id, "the last event answers the call: {last}");
    assert_eq!(last["error"]["code"], -32000, "{last}");
    assert_eq!(
        last["error"]["message"],
        "The session ended or the server is closing; the call was cancelled"
    );
    assert!(last.get("result").is_none(), "{last}");
}

#[tokio::test]
async fn deleting_a_session_answers_its_event_stream_calls() {
    let f = Fixture::start(sessions()).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    let mut s = open_streaming_call(f.addr(), Some(&sid), 52).await;
    let r = raw(
        f.addr(),
        &request(f.addr(), "DELETE", "/mcp", &[("Mcp-Session-Id", &sid)], ""),
    )
    .await;
    assert_eq!(r.status, 204);
    assert_stream_ends_with_stopped_error(&mut s, 52).await;
    f.handle.close().await;
}

#[tokio::test]
async fn an_evicted_session_answers_its_event_stream_calls() {
    let f = Fixture::start(HttpOptions::new().sessions(SessionOptions::default().max(1))).await;
    let a = open_session(f.addr(), &[], json!({})).await;
    let mut s = open_streaming_call(f.addr(), Some(&a), 53).await;
    // A second session evicts the first (the table holds one).
    let _b = open_session(f.addr(), &[], json!({})).await;
    assert_stream_ends_with_stopped_error(&mut s, 53).await;
    f.handle.close().await;
}

#[tokio::test]
async fn close_answers_event_stream_calls_past_the_drain_deadline() {
    for (options, with_session) in [(HttpOptions::stateless(), false), (sessions(), true)] {
        let f = Fixture::start(options.drain_timeout(Duration::from_millis(200))).await;
        let sid = if with_session {
            Some(open_session(f.addr(), &[], json!({})).await)
        } else {
            None
        };
        let mut s = open_streaming_call(f.addr(), sid.as_deref(), 54).await;
        let closing = tokio::spawn(f.handle.close());
        assert_stream_ends_with_stopped_error(&mut s, 54).await;
        guard("close", closing).await.expect("close task");
    }
}

#[tokio::test]
async fn close_answers_json_calls_past_the_drain_deadline_503() {
    let mut f =
        Fixture::start(HttpOptions::stateless().drain_timeout(Duration::from_millis(200))).await;
    let addr = f.addr();
    let pending = tokio::spawn(async move { post(addr, &[], &call(55, "block", json!({}))).await });
    f.wait_event("block started").await;
    guard("close", f.handle.close()).await;
    let r = guard("cancelled call", pending).await.expect("task");
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["id"], 55);
    assert_eq!(r.error_code(), -32000);
}

#[tokio::test]
async fn get_stream_carries_messages_of_calls_that_cannot_stream() {
    let f = Fixture::start(sessions()).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    let mut get = Stream::open(
        f.addr(),
        &request(
            f.addr(),
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &sid)],
            "",
        ),
    )
    .await;
    assert_eq!(get.status, 200);
    assert!(get.is_sse());
    // A POST that only accepts JSON: its progress goes to the GET stream.
    let r = post(
        f.addr(),
        &[("Accept", "application/json"), ("Mcp-Session-Id", &sid)],
        &call_with_progress(61, "slow", json!({"steps": 2})),
    )
    .await;
    assert_eq!(tool_text(&r.json()), "done 2");
    for expected in [1.0, 2.0] {
        let note = get.next_event().await.expect("progress on the GET stream");
        assert_eq!(note["method"], "notifications/progress");
        assert_eq!(note["params"]["progress"], expected);
    }
    // Ending the session ends the stream.
    let r = raw(
        f.addr(),
        &request(f.addr(), "DELETE", "/mcp", &[("Mcp-Session-Id", &sid)], ""),
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(get.next_event().await, None);
    f.handle.close().await;
}

#[tokio::test]
async fn close_drains_in_flight_calls_then_stops_accepting() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let addr = f.addr();
    let mut s = open_post(
        addr,
        &[ACCEPT_BOTH],
        &call_with_progress(71, "slow", json!({"steps": 5, "delay_ms": 50})),
    )
    .await;
    assert!(s.next_event().await.is_some(), "the call is running");
    let closing = tokio::spawn(f.handle.close());
    let mut last = None;
    while let Some(event) = s.next_event().await {
        last = Some(event);
    }
    assert_eq!(tool_text(&last.expect("events")), "done 5");
    guard("close", closing).await.expect("close task");
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no longer accepting"
    );
}

#[tokio::test]
async fn close_cancels_calls_past_the_drain_deadline() {
    let mut f =
        Fixture::start(HttpOptions::stateless().drain_timeout(Duration::from_millis(200))).await;
    let addr = f.addr();
    let _s = open_post_no_wait(addr, &[], &call(81, "block", json!({}))).await;
    f.wait_event("block started").await;
    let Fixture { handle, mut events } = f;
    guard("close", handle.close()).await;
    let ended = guard("block end", events.recv()).await;
    assert_eq!(ended.as_deref(), Some("block ended cancelled=true"));
}

#[tokio::test]
async fn stateless_2026_requests_need_no_session() {
    let f = Fixture::start(sessions()).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let list =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}});
    let r = post(
        f.addr(),
        &[
            ACCEPT_BOTH,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
        &list,
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
    assert!(r.json()["result"]["tools"].is_array());
    assert_eq!(r.header("mcp-session-id"), None);
    // A method 2026-07-28 removed is 404 with the JSON-RPC error in the body.
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": meta}});
    let r = post(
        f.addr(),
        &[
            ACCEPT_BOTH,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "ping"),
        ],
        &ping,
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code(), -32601);
    f.handle.close().await;
}
