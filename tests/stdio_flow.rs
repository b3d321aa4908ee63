//! The stdio transport (`serve_io`) over in-memory pipes: the concurrency
//! limit, server→client traffic (progress, elicitation) and back-pressure
//! (see `stdio.rs`).

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

include!("harness/stdio_prelude.rs");

// ---------------------------------------------------------------------------
// Concurrency limit
// ---------------------------------------------------------------------------

const BUSY: &str = "Too many requests in flight (max 2); retry later";

#[tokio::test]
async fn third_concurrent_request_is_refused_while_notifications_still_work() {
    let (server, mut probe) = test_server();
    let client = TestClient::connect_with(
        server,
        StdioOptions::default().max_concurrent_requests(2),
        ClientOptions::default(),
    )
    .await
    .expect("initialize");

    let a = client
        .start_request(
            "tools/call",
            json!({"name": "block", "arguments": {"tag": "a"}}),
        )
        .await;
    let b = client
        .start_request(
            "tools/call",
            json!({"name": "block", "arguments": {"tag": "b"}}),
        )
        .await;
    assert_eq!(
        probe.started(2).await,
        HashSet::from(["a".to_owned(), "b".to_owned()])
    );

    // Both slots are taken and neither call can finish: the refusal must
    // come back on its own.
    let refused = client
        .call_tool("echo", json!({"text": "third"}))
        .await
        .expect_err("a third concurrent request must be refused");
    assert_eq!(refused.code, -32000);
    assert_eq!(refused.message, BUSY);
    assert!(
        probe.stopped.try_recv().is_err(),
        "the refusal must not wait for a running call to end"
    );

    // A notification during saturation is processed: it cancels `a`.
    assert!(client.cancel(&a.id).await);
    probe.stopped("a").await;
    assert!(
        a.response(Duration::from_millis(300)).await.is_none(),
        "a cancelled request gets no response"
    );

    // Its slot frees up (the permit is released just after the call ends).
    let reply = timeout(GUARD, async {
        loop {
            match client.call_tool("echo", json!({"text": "again"})).await {
                Err(e) if e.code == -32000 => tokio::time::sleep(Duration::from_millis(10)).await,
                other => return other,
            }
        }
    })
    .await
    .expect("a slot should free up after the cancellation")
    .expect("echo after the cancellation");
    assert_eq!(reply.text_content(), "again");

    probe.release_all();
    let b_reply = b.response(GUARD).await.expect("the released call answers");
    assert_eq!(text_of(&b_reply), "released b");
}

/// A client that opens seventeen slow calls on one stream with the default
/// options: the contract admits sixteen at once, so the seventeenth must be
/// refused `-32000` with the contract's message while the sixteen still run,
/// instead of starting a seventeenth handler.
#[tokio::test]
async fn default_limit_admits_sixteen_slow_calls_and_refuses_the_seventeenth() {
    let (server, mut probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");

    let mut running = Vec::new();
    for i in 0..16 {
        running.push(
            client
                .start_request(
                    "tools/call",
                    json!({"name": "block", "arguments": {"tag": format!("call {i}")}}),
                )
                .await,
        );
    }
    assert_eq!(probe.started(16).await.len(), 16);

    let refused = client
        .call_tool("block", json!({"tag": "call 16"}))
        .await
        .expect_err("the seventeenth concurrent request must be refused");
    assert_eq!(refused.code, -32000);
    assert_eq!(
        refused.message,
        "Too many requests in flight (max 16); retry later"
    );
    assert!(
        probe.started.try_recv().is_err(),
        "the seventeenth call must not start a handler"
    );

    probe.release_all();
    for call in running {
        let reply = call.response(GUARD).await.expect("a released call answers");
        assert!(text_of(&reply).starts_with("released call "));
    }
}

#[tokio::test]
async fn batch_over_the_limit_refuses_entries_inside_the_batch_reply() {
    let (server, mut probe) = test_server();
    let client = TestClient::connect_with(
        server,
        StdioOptions::default().max_concurrent_requests(2),
        ClientOptions::default(),
    )
    .await
    .expect("initialize");

    let batch = json!([
        call("b1", "block", json!({"tag": "x"})),
        call("b2", "block", json!({"tag": "y"})),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call("b3", "echo", json!({"text": "refused"})),
    ]);
    assert!(client.send_json(&batch).await);
    assert_eq!(
        probe.started(2).await,
        HashSet::from(["x".to_owned(), "y".to_owned()])
    );
    probe.release_all();

    let reply = client
        .next_unmatched(GUARD)
        .await
        .expect("the batch reply arrives");
    let entries = reply
        .as_array()
        .unwrap_or_else(|| panic!("a batch gets an array reply: {reply}"));
    assert_eq!(
        entries.len(),
        3,
        "one entry per request, none for the notification: {reply}"
    );
    assert_eq!(entries[0]["id"], "b1");
    assert_eq!(text_of(&entries[0]), "released x");
    assert_eq!(entries[1]["id"], "b2");
    assert_eq!(text_of(&entries[1]), "released y");
    assert_error(&entries[2], &json!("b3"), -32000);
    assert_eq!(entries[2]["error"]["message"], BUSY);
}

// ---------------------------------------------------------------------------
// Server → client traffic: progress and elicitation
// ---------------------------------------------------------------------------

#[tokio::test]
async fn progress_notifications_arrive_on_the_same_stream() {
    let (server, _probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");
    let (result, progress) = client
        .call_tool_with_progress("progress", json!({"steps": 3}))
        .await
        .expect("progress call");
    assert_eq!(result.text_content(), "done 3");
    assert_eq!(progress.len(), 3, "progress: {progress:?}");
    mcp_suite::assert_progress_counts_up(&progress, 3.0);
    assert_eq!(progress[0]["message"], "step 1");
}

#[tokio::test]
async fn no_progress_without_a_progress_token() {
    let (server, _probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");
    let result = client
        .call_tool("progress", json!({"steps": 3}))
        .await
        .expect("progress call");
    assert_eq!(result.text_content(), "done 3");
    let notes = client.drain_notifications().await;
    assert!(
        notes
            .iter()
            .all(|n| n["method"] != "notifications/progress"),
        "no token, no progress: {notes:?}"
    );
}

#[tokio::test]
async fn confirm_through_elicitation() {
    let (server, _probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");
    let result = client
        .call_tool("confirm", json!({}))
        .await
        .expect("confirm call");
    assert!(!result.is_error(), "result: {result:?}");
    assert_eq!(result.text_content(), "confirmed");
}

#[tokio::test]
async fn confirm_declined_by_the_user_fails_closed() {
    let (server, _probe) = test_server();
    let client = TestClient::connect_with(
        server,
        StdioOptions::default(),
        ClientOptions::default().elicit(|_| Ok(json!({"action": "decline"}))),
    )
    .await
    .expect("initialize");
    let result = client
        .call_tool("confirm", json!({}))
        .await
        .expect("confirm call");
    assert!(result.is_error());
    assert_eq!(result.text_content(), "not confirmed");
}

#[tokio::test]
async fn typed_form_elicitation_round_trips() {
    let (server, _probe) = test_server();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = Arc::clone(&seen);
    let client = TestClient::connect_with(
        server,
        StdioOptions::default(),
        ClientOptions::default().elicit(move |params| {
            record
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(params.clone());
            Ok(json!({"action": "accept", "content": {"title": "Sync", "minutes": 30}}))
        }),
    )
    .await
    .expect("initialize");

    let result = client
        .call_tool("form", json!({}))
        .await
        .expect("form call");
    assert!(!result.is_error(), "result: {result:?}");
    assert_eq!(
        result.structured_content,
        json!({"title": "Sync", "minutes": 30}).as_object().cloned()
    );

    let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
    assert_eq!(seen.len(), 1, "exactly one elicitation/create: {seen:?}");
    assert_eq!(seen[0]["message"], "Plan a meeting");
    let schema = &seen[0]["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["title"]["type"], "string");
    assert_eq!(schema["properties"]["minutes"]["type"], "integer");
}

#[tokio::test]
async fn typed_form_decline_and_misfit_content() {
    let (server, _probe) = test_server();
    let client = TestClient::connect_with(
        server.clone(),
        StdioOptions::default(),
        ClientOptions::default().elicit(|_| Ok(json!({"action": "decline"}))),
    )
    .await
    .expect("initialize");
    let result = client
        .call_tool("form", json!({}))
        .await
        .expect("form call");
    assert_eq!(result.text_content(), "declined");

    let client = TestClient::connect_with(
        server,
        StdioOptions::default(),
        ClientOptions::default()
            .elicit(|_| Ok(json!({"action": "accept", "content": {"title": 7}}))),
    )
    .await
    .expect("initialize");
    let result = client
        .call_tool("form", json!({}))
        .await
        .expect("form call");
    assert!(result.is_error(), "result: {result:?}");
    assert!(
        result.text_content().starts_with("-32602: "),
        "content that does not fit the form is -32602: {result:?}"
    );
}

#[tokio::test]
async fn elicitation_request_and_response_share_the_raw_stream() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send_json(&initialize_request(1, json!({"elicitation": {}})))
        .await;
    let init = conn.json().await;
    assert_eq!(init["id"], 1, "initialize reply: {init}");
    conn.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    conn.send_json(&call(2, "ask", json!({}))).await;
    let request = conn.json().await;
    assert_eq!(request["jsonrpc"], "2.0");
    assert_eq!(
        request["method"], "elicitation/create",
        "message: {request}"
    );
    assert_eq!(request["params"]["message"], "Proceed?");
    let id = request
        .get("id")
        .filter(|id| id.is_string() || id.is_i64())
        .expect("a server→client request has an id")
        .clone();

    conn.send_json(&json!({"jsonrpc": "2.0", "id": id,
        "result": {"action": "accept", "content": {"confirm": true}}}))
        .await;
    let reply = conn.json().await;
    assert_eq!(reply["id"], 2, "reply: {reply}");
    assert_eq!(text_of(&reply), "answer true");
}

#[tokio::test]
async fn no_elicitation_when_the_client_did_not_announce_it() {
    let (server, _probe) = test_server();
    let with = TestClient::connect(server.clone())
        .await
        .expect("initialize");
    let result = with
        .call_tool("has_elicitation", json!({}))
        .await
        .expect("call");
    assert_eq!(
        result.text_content(),
        "true",
        "control: announced → present"
    );

    let without = TestClient::connect_with(
        server,
        StdioOptions::default(),
        ClientOptions::default().without_elicitation(),
    )
    .await
    .expect("initialize");
    let result = without
        .call_tool("has_elicitation", json!({}))
        .await
        .expect("call");
    assert_eq!(result.text_content(), "false");
    let result = without.call_tool("confirm", json!({})).await.expect("call");
    assert!(result.is_error(), "confirm fails closed: {result:?}");
    assert_eq!(result.text_content(), "not confirmed");
}

// ---------------------------------------------------------------------------
// Back-pressure
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_client_that_never_reads_stalls_the_server_instead_of_growing_it() {
    let (server, _probe) = test_server();
    let (client_end, server_end) = tokio::io::duplex(64);
    let (server_read, server_write) = tokio::io::split(server_end);
    let handle = serve_io(server, server_read, server_write, StdioOptions::default());
    let (mut client_read, mut client_write) = tokio::io::split(client_end);

    // Write requests (whose replies nobody reads) chunk by chunk until a
    // chunk makes no progress for a while: the server stopped reading. A
    // bounded server stalls after a few kilobytes (its output queue and the
    // requests blocked on it); one that buffers without bound reads the
    // whole budget.
    const BUDGET: usize = 1024 * 1024;
    const STALL: Duration = Duration::from_secs(2);
    let mut written = 0usize;
    let mut next_id = 0u64;
    let mut stalled = false;
    while written < BUDGET {
        let mut chunk = Vec::with_capacity(8 * 1024);
        for _ in 0..100 {
            next_id += 1;
            chunk.extend_from_slice(ping(next_id).to_string().as_bytes());
            chunk.push(b'\n');
        }
        match timeout(STALL, client_write.write_all(&chunk)).await {
            Ok(result) => result.expect("writing to the in-memory pipe"),
            Err(_elapsed) => {
                stalled = true;
                break;
            }
        }
        written += chunk.len();
    }
    assert!(
        stalled,
        "the server read all {written} bytes although nobody read its replies"
    );

    // Start reading: everything queued flows, and the server serves again.
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(&mut client_read).lines();
        let mut replies = Vec::new();
        while let Some(line) = lines.next_line().await.expect("reading replies") {
            let reply: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("reply line is not JSON ({e}): {line:?}"));
            let done = reply["id"] == "final";
            replies.push(reply);
            if done {
                break;
            }
        }
        replies
    });
    // Terminate whatever line the abandoned write left half-written.
    timeout(GUARD, async {
        client_write.write_all(b"\n").await?;
        client_write
            .write_all(format!("{}\n", ping("final")).as_bytes())
            .await?;
        client_write.flush().await
    })
    .await
    .expect("once the client reads, the server reads again")
    .expect("writing to the in-memory pipe");

    let replies = timeout(GUARD, reader)
        .await
        .expect("the final reply arrives")
        .expect("the reader task does not panic");
    assert_eq!(
        replies.last(),
        Some(&json!({"jsonrpc": "2.0", "id": "final", "result": {}}))
    );
    let mut seen = HashSet::new();
    for reply in &replies {
        if let Some(id) = reply["id"].as_u64() {
            assert!(seen.insert(id), "id {id} answered twice");
            assert!(
                reply.get("result") == Some(&json!({})) || reply["error"]["code"] == -32000,
                "a ping is answered or refused as busy: {reply}"
            );
        }
    }
    // Every ping of the chunks written in full was read and answered once.
    let complete = next_id.saturating_sub(100);
    let missing: Vec<u64> = (1..=complete).filter(|id| !seen.contains(id)).collect();
    assert!(
        missing.is_empty(),
        "{} of the {complete} fully written pings were never answered, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    assert!(seen.iter().all(|id| *id <= next_id), "unknown ids answered");

    client_write.shutdown().await.expect("closing input");
    wait_stopped(handle).await;
}
