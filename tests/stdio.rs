//! The stdio transport (`serve_io`) over in-memory pipes: framing, limits,
//! back-pressure, server→client traffic, shutdown, cancellation and panics.
//!
//! Framing tests write raw bytes on a `tokio::io::duplex` pipe and read the
//! raw reply lines; higher-level tests go through `TestClient`.

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

include!("harness/stdio_prelude.rs");

// ---------------------------------------------------------------------------
// Framing
// ---------------------------------------------------------------------------

#[tokio::test]
async fn each_reply_is_exactly_one_line_of_json() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    let mut batch = Vec::new();
    for message in [
        ping(1),
        call(2, "echo", json!({"text": "two\nlines"})),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    ] {
        batch.extend_from_slice(message.to_string().as_bytes());
        batch.push(b'\n');
    }
    conn.send(&batch).await;

    let mut ids = HashSet::new();
    for _ in 0..3 {
        let line = conn.line().await;
        assert!(!line.trim().is_empty(), "no empty reply lines");
        let reply: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("reply line must be a whole JSON value ({e}): {line:?}"));
        assert_eq!(reply["jsonrpc"], "2.0");
        assert!(reply.get("result").is_some(), "reply: {reply}");
        if reply["id"] == 2 {
            assert_eq!(
                text_of(&reply),
                "two\nlines",
                "a newline inside a string is escaped, not framed"
            );
        }
        ids.insert(reply["id"].as_i64().expect("numeric id"));
    }
    assert_eq!(ids, HashSet::from([1, 2, 3]));
}

#[tokio::test]
async fn blank_lines_and_notifications_get_no_reply() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send(b"\n\n   \n\t\r\n").await;
    conn.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    conn.send_json(&ping(9)).await;
    let reply = conn.json().await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 9, "result": {}}),
        "the first reply must be the ping's: blank lines and notifications are not answered"
    );
}

#[tokio::test]
async fn crlf_line_endings_are_accepted() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n")
        .await;
    conn.send(
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"crlf\"}}}\r\n",
    )
    .await;
    let mut replies = [conn.json().await, conn.json().await];
    replies.sort_by_key(|r| r["id"].as_i64());
    assert_eq!(replies[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(replies[1]["id"], 2);
    assert_eq!(text_of(&replies[1]), "crlf", "no stray \\r in the argument");
}

#[tokio::test]
async fn garbage_line_is_a_parse_error_with_null_id_and_serving_continues() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send(b"this is not json {\n").await;
    let reply = conn.json().await;
    assert_error(&reply, &Value::Null, -32700);

    conn.send_json(&ping(2)).await;
    assert_eq!(
        conn.json().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
}

#[tokio::test]
async fn multibyte_character_split_across_writes_survives() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    let text = "naïve café €uro 😀 done";
    let mut line = call(1, "echo", json!({"text": text}))
        .to_string()
        .into_bytes();
    line.push(b'\n');
    let line_str = std::str::from_utf8(&line).expect("serde_json writes UTF-8");
    let emoji_at = line_str.find('😀').expect("the emoji is in the line");
    let split = emoji_at + 2;
    assert!(
        !line_str.is_char_boundary(split),
        "the split must fall inside the 4-byte character"
    );

    conn.send(&line[..split]).await;
    // Give the server a chance to read the first half on its own.
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    conn.send(&line[split..]).await;

    let reply = conn.json().await;
    assert_eq!(reply["id"], 1, "reply: {reply}");
    assert_eq!(text_of(&reply), text);
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error_and_serving_continues() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    let mut line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"".to_vec();
    line.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    line.extend_from_slice(b"\"}}}\n");
    conn.send(&line).await;
    let reply = conn.json().await;
    assert_error(&reply, &Value::Null, -32700);

    conn.send_json(&call(2, "echo", json!({"text": "ok"})))
        .await;
    let reply = conn.json().await;
    assert_eq!(reply["id"], 2);
    assert_eq!(text_of(&reply), "ok");
}

#[tokio::test]
async fn final_unterminated_line_is_still_served() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send(ping(5).to_string().as_bytes()).await;
    conn.close_input().await;
    let replies = conn.rest().await;
    assert_eq!(
        replies,
        vec![json!({"jsonrpc": "2.0", "id": 5, "result": {}})]
    );
    conn.stopped().await;
}

/// An output that keeps every write apart, to see how replies are grouped.
#[derive(Clone, Default)]
struct RecordingOutput(Arc<Mutex<Vec<Vec<u8>>>>);

impl tokio::io::AsyncWrite for RecordingOutput {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(buf.to_vec());
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn a_long_read_is_answered_in_groups_not_in_one_write() {
    // 100 requests arrive in a single read: the client should not wait for
    // all 100 replies before it sees the first ones.
    let mut input = Vec::new();
    for id in 0..100 {
        input.extend_from_slice(ping(id).to_string().as_bytes());
        input.push(b'\n');
    }
    let output = RecordingOutput::default();
    let (server, _probe) = test_server();
    let handle = serve_io(
        server,
        std::io::Cursor::new(input),
        output.clone(),
        StdioOptions::default(),
    );
    wait_stopped(handle).await;

    let writes = output
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let per_write: Vec<usize> = writes
        .iter()
        .map(|w| w.iter().filter(|&&b| b == b'\n').count())
        .collect();
    assert!(
        per_write.iter().all(|&n| (1..=32).contains(&n)),
        "every write carries whole replies, at most 32 of them: {per_write:?}"
    );
    let ids: Vec<i64> = writes
        .concat()
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let reply: Value = serde_json::from_slice(line).expect("a JSON reply line");
            reply["id"].as_i64().expect("numeric id")
        })
        .collect();
    assert_eq!(ids, (0..100).collect::<Vec<_>>(), "every reply, in order");
}

// ---------------------------------------------------------------------------
// Line length limit
// ---------------------------------------------------------------------------

const TOO_LONG: &str = "Message exceeds the maximum line length (1024)";

/// An echo request whose serialized line is exactly `len` bytes.
fn echo_line_of_len(id: i64, len: usize) -> Vec<u8> {
    let base = call(id, "echo", json!({"text": ""})).to_string().len();
    assert!(len >= base, "line too short for an echo request");
    let line = call(id, "echo", json!({"text": "a".repeat(len - base)})).to_string();
    assert_eq!(line.len(), len);
    line.into_bytes()
}

#[tokio::test]
async fn overlong_line_is_answered_invalid_request_and_next_line_works() {
    let (server, _probe) = test_server();
    // A small pipe, so the long line streams in many chunks.
    let mut conn = raw_with(server, StdioOptions::default().max_line_length(1024), 256);
    let mut long = echo_line_of_len(1, 5000);
    long.push(b'\n');
    let mut bytes = long;
    bytes.extend_from_slice(ping(2).to_string().as_bytes());
    bytes.push(b'\n');
    conn.send(&bytes).await;

    let reply = conn.json().await;
    assert_error(&reply, &Value::Null, -32600);
    assert_eq!(reply["error"]["message"], TOO_LONG);

    let reply = conn.json().await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
        "the line after an overlong one is served normally"
    );
}

#[tokio::test]
async fn line_length_limit_boundary() {
    let (mut conn, _probe) = raw(StdioOptions::default().max_line_length(1024));

    let mut at_limit = echo_line_of_len(1, 1024);
    at_limit.push(b'\n');
    conn.send(&at_limit).await;
    let reply = conn.json().await;
    assert_eq!(
        reply["id"], 1,
        "a line of exactly the limit is accepted: {reply}"
    );
    assert!(reply.get("result").is_some(), "reply: {reply}");

    let mut over = echo_line_of_len(2, 1025);
    over.push(b'\n');
    conn.send(&over).await;
    let reply = conn.json().await;
    assert_error(&reply, &Value::Null, -32600);
    assert_eq!(reply["error"]["message"], TOO_LONG);
}

#[tokio::test]
async fn overlong_final_line_without_newline_is_answered() {
    let (mut conn, _probe) = raw(StdioOptions::default().max_line_length(1024));
    conn.send(&echo_line_of_len(1, 4096)).await;
    conn.close_input().await;
    let replies = conn.rest().await;
    assert_eq!(replies.len(), 1, "replies: {replies:?}");
    assert_error(&replies[0], &Value::Null, -32600);
    assert_eq!(replies[0]["error"]["message"], TOO_LONG);
    conn.stopped().await;
}

// ---------------------------------------------------------------------------
// End of input, close, drain
// ---------------------------------------------------------------------------

#[tokio::test]
async fn call_in_flight_at_end_of_input_completes_before_wait_returns() {
    let (mut conn, mut probe) = raw(StdioOptions::default());
    conn.send_json(&call(1, "sleepy", json!({"ms": 150, "tag": "s"})))
        .await;
    probe.started(1).await;
    conn.close_input().await;

    conn.stopped().await;
    // wait() has returned: the reply must already be in the pipe.
    let mut rest = Vec::new();
    timeout(GUARD, conn.lines.get_mut().read_to_end(&mut rest))
        .await
        .expect("the server's output is closed once it stopped")
        .expect("reading the pipe");
    let text = String::from_utf8(rest).expect("UTF-8 output");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "output after end of input: {text:?}");
    let reply: Value = serde_json::from_str(lines[0]).expect("JSON reply");
    assert_eq!(reply["id"], 1);
    assert_eq!(text_of(&reply), "slept");
}

#[tokio::test]
async fn tool_awaiting_elicitation_is_released_when_input_closes() {
    let (mut conn, _probe) = raw(StdioOptions::default().drain_timeout(Duration::from_secs(120)));
    conn.send_json(&initialize_request(1, json!({"elicitation": {}})))
        .await;
    assert_eq!(conn.json().await["id"], 1);
    conn.send_json(&call(2, "ask", json!({}))).await;
    let request = conn.json().await;
    assert_eq!(
        request["method"], "elicitation/create",
        "message: {request}"
    );

    // Never answer; end the input instead.
    conn.close_input().await;
    conn.stopped().await;

    let rest = conn.rest().await;
    assert_eq!(rest.len(), 1, "output after end of input: {rest:?}");
    assert_eq!(rest[0]["id"], 2);
    assert_eq!(rest[0]["result"]["isError"], true, "reply: {}", rest[0]);
    assert_eq!(
        text_of(&rest[0]),
        "elicitation failed: the client connection closed"
    );
}

#[tokio::test]
async fn elicitation_started_after_input_closed_fails_instead_of_hanging() {
    // Like the test above, but the call only reaches its elicitation after
    // the input has ended: no answer can arrive any more, so the elicitation
    // must fail at once and the call still completes with a reply, rather
    // than wait for an answer until the drain deadline (10 s by default)
    // ends it with an error.
    let (mut conn, mut probe) = raw(StdioOptions::default());
    conn.send_json(&initialize_request(1, json!({"elicitation": {}})))
        .await;
    assert_eq!(conn.json().await["id"], 1);
    conn.send_json(&call(2, "ask", json!({"after_ms": 200, "tag": "late"})))
        .await;
    probe.started(1).await;
    conn.close_input().await;
    conn.stopped().await;

    let rest = conn.rest().await;
    let replies: Vec<&Value> = rest.iter().filter(|m| m.get("method").is_none()).collect();
    assert_eq!(replies.len(), 1, "output after end of input: {rest:?}");
    assert_eq!(replies[0]["id"], 2);
    assert_eq!(
        replies[0]["result"]["isError"], true,
        "reply: {}",
        replies[0]
    );
    assert_eq!(
        text_of(replies[0]),
        "elicitation failed: the client connection closed"
    );
}

#[tokio::test]
async fn drain_timeout_bounds_a_call_that_never_ends() {
    let (mut conn, mut probe) =
        raw(StdioOptions::default().drain_timeout(Duration::from_millis(100)));
    conn.send_json(&call(1, "block", json!({"tag": "forever"})))
        .await;
    probe.started(1).await;
    conn.close_input().await;
    conn.stopped().await;
    probe.stopped("forever").await;
    // Ended by the drain deadline, the call still gets its one answer.
    let rest = conn.rest().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 1, "{rest:?}");
    assert_eq!(rest[0]["error"]["code"], -32000, "{rest:?}");
    let message = rest[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("drain timeout"), "{rest:?}");
}

#[tokio::test]
async fn close_stops_reading_while_input_stays_open() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send_json(&ping(1)).await;
    assert_eq!(conn.json().await["id"], 1);

    conn.close();
    // The client's output is still open: only close() can end the server.
    conn.stopped().await;

    // A request sent now is never read (the pipe may already be gone).
    let _ = conn
        .write
        .write_all(format!("{}\n", ping(2)).as_bytes())
        .await;
    let next = timeout(GUARD, conn.lines.next_line())
        .await
        .expect("the output ends once the server stopped")
        .expect("reading the pipe");
    assert_eq!(next, None, "nothing is answered after close()");
}

#[tokio::test]
async fn close_lets_the_call_in_flight_finish() {
    let (mut conn, mut probe) = raw(StdioOptions::default());
    conn.send_json(&call(1, "sleepy", json!({"ms": 150, "tag": "c"})))
        .await;
    probe.started(1).await;
    conn.close();
    conn.stopped().await;
    let rest = conn.rest().await;
    assert_eq!(rest.len(), 1, "output: {rest:?}");
    assert_eq!(rest[0]["id"], 1);
    assert_eq!(text_of(&rest[0]), "slept");
}

// ---------------------------------------------------------------------------
// Headers, cancellation, panics
// ---------------------------------------------------------------------------

#[tokio::test]
async fn static_headers_reach_the_tool() {
    let (server, _probe) = test_server();
    let headers = BTreeMap::from([
        ("x-tenant".to_owned(), HeaderValue::One("acme".to_owned())),
        (
            "x-scope".to_owned(),
            HeaderValue::Many(vec!["read".to_owned(), "write".to_owned()]),
        ),
    ]);
    let client = TestClient::connect_with(
        server,
        StdioOptions::default().headers(headers),
        ClientOptions::default(),
    )
    .await
    .expect("initialize");
    let get = |name: &'static str| {
        let client = &client;
        async move {
            client
                .call_tool("header", json!({"name": name}))
                .await
                .expect("header call")
                .text_content()
        }
    };
    assert_eq!(get("x-tenant").await, "one:acme");
    assert_eq!(get("x-scope").await, "many:read|write");
    assert_eq!(get("authorization").await, "<none>");
}

#[tokio::test]
async fn cancelled_request_gets_no_response_and_serving_continues() {
    let (server, mut probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");
    let pending = client
        .start_request(
            "tools/call",
            json!({"name": "block", "arguments": {"tag": "c"}}),
        )
        .await;
    probe.started(1).await;

    assert!(client.cancel(&pending.id).await);
    probe.stopped("c").await;
    assert!(
        pending.response(Duration::from_secs(1)).await.is_none(),
        "a cancelled request must not be answered"
    );

    let result = client
        .call_tool("echo", json!({"text": "still here"}))
        .await
        .expect("echo after cancellation");
    assert_eq!(result.text_content(), "still here");
}

#[tokio::test]
async fn cancel_right_behind_its_request_is_not_lost() {
    // The stream is ordered: a cancellation sent right after its request
    // refers to a request the server has already read, so it must apply even
    // when the server has not started running the call yet. With one slot, a
    // lost cancellation leaves `block` holding it forever and every later
    // request is refused as busy.
    let (server, _probe) = test_server();
    let mut conn = raw_with(
        server,
        StdioOptions::default().max_concurrent_requests(1),
        1 << 16,
    );
    for round in 0..50 {
        let id = format!("blk-{round}");
        let mut bytes = call(id.as_str(), "block", json!({"tag": id}))
            .to_string()
            .into_bytes();
        bytes.push(b'\n');
        bytes.extend_from_slice(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": id, "reason": "test"}})
            .to_string()
            .as_bytes(),
        );
        bytes.push(b'\n');
        conn.send(&bytes).await;

        // The slot must come free again: retry a ping while it is busy.
        let freed = timeout(Duration::from_secs(5), async {
            let mut attempt = 0u32;
            loop {
                attempt += 1;
                let ping_id = format!("ping-{round}-{attempt}");
                conn.send_json(&ping(ping_id.as_str())).await;
                let reply = conn.json().await;
                assert_ne!(
                    reply["id"],
                    json!(id),
                    "a cancelled request is not answered"
                );
                assert_eq!(reply["id"], json!(ping_id), "reply: {reply}");
                if reply.get("result").is_some() {
                    return;
                }
                assert_eq!(reply["error"]["code"], -32000, "reply: {reply}");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        assert!(
            freed.is_ok(),
            "round {round}: the cancellation sent right after request {id} was lost; \
             the call still holds the only slot"
        );
    }
}

#[tokio::test]
async fn tool_panic_is_an_internal_error_and_serving_continues() {
    let (server, _probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");
    let err = client
        .call_tool("boom", json!({}))
        .await
        .expect_err("a panicking tool is a protocol error");
    assert_eq!(err.code, -32603);
    // The panic's text stays in the server's log; the client gets an id.
    assert!(
        err.message.starts_with("Internal error (error id "),
        "{err:?}"
    );
    assert!(
        !err.to_value().to_string().contains("panicked on purpose"),
        "error: {err:?}"
    );

    let result = client
        .call_tool("echo", json!({"text": "after panic"}))
        .await
        .expect("echo after a panic");
    assert_eq!(result.text_content(), "after panic");
}
