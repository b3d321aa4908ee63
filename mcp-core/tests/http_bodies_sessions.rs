//! The HTTP transport over real loopback TCP: request bodies (limits,
//! slow and unfinished bodies, timeouts) and sessions. The client is raw
//! HTTP/1.1 over `TcpStream`, so malformed input is really malformed.
//! Timeouts below only guard against hangs.

#![cfg(feature = "http")]
// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

#[path = "common/raw_http.rs"]
mod raw_http;
#[path = "common/tool_events.rs"]
mod tool_events;
include!("common/http_prelude.rs");

// ---------------------------------------------------------------- bodies and timeouts

#[tokio::test]
async fn declared_body_over_limit_is_413_without_reading_it() {
    let f = Fixture::start(HttpOptions::stateless().max_body_bytes(1024)).await;
    // Announce 10 MB and send none of it: the answer comes anyway.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n",
        f.addr()
    );
    let r = raw(f.addr(), head.as_bytes()).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    assert_eq!(
        r.json()["error"]["message"],
        "Request body exceeds 1024 bytes"
    );
    assert_eq!(r.header("connection"), Some("close"));
    // Exactly the limit is fine.
    let text = "a".repeat(1024 - call(1, "echo", json!({"text": ""})).to_string().len());
    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": text}))).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

#[tokio::test]
async fn chunked_body_over_limit_is_413_and_cut_off() {
    let f = Fixture::start(HttpOptions::stateless().max_body_bytes(4096)).await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        f.addr()
    );
    tcp.write_all(head.as_bytes()).await.expect("head");
    // 64 chunks of 1 KiB: the server stops at 4 KiB. Later writes may fail
    // once it has closed the connection; that is the point.
    let chunk = format!("400\r\n{}\r\n", "x".repeat(1024));
    for _ in 0..64 {
        if tcp.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let mut buf = Vec::new();
    let _ = guard("413 response", tcp.read_to_end(&mut buf)).await;
    let r = parse_response(&buf);
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    // A chunked body under the limit works.
    let body = call(1, "echo", json!({"text": "chunky"})).to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        f.addr(),
        body.len()
    );
    let r = raw(f.addr(), req.as_bytes()).await;
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()), "chunky");
    f.handle.close().await;
}

/// Sends `head`, then `body` in 64 KiB pieces with a pause between them,
/// reading nothing until all is sent (as Node's `fetch` does), then reads
/// the whole response. Any write failure (the server reset the connection
/// while the client was still sending) fails the test.
async fn send_slowly_then_read(addr: SocketAddr, head: &str, body: &[u8]) -> Resp {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(head.as_bytes()).await.expect("head");
    for (i, piece) in body.chunks(64 * 1024).enumerate() {
        tokio::time::sleep(Duration::from_millis(2)).await;
        if let Err(e) = guard("body piece", tcp.write_all(piece)).await {
            panic!("the server broke the connection at piece {i} of the body: {e}");
        }
    }
    let mut buf = Vec::new();
    guard("413 response", tcp.read_to_end(&mut buf))
        .await
        .expect("the response, not a reset");
    parse_response(&buf)
}

#[tokio::test]
async fn a_refused_body_still_sent_gets_its_413() {
    // The default limit (1 MiB) and a 3 MiB body, declared and then chunked.
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = vec![b'x'; 3 * 1024 * 1024];
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        f.addr(),
        body.len()
    );
    let r = send_slowly_then_read(f.addr(), &head, &body).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    assert_eq!(
        r.json()["error"]["message"],
        "Request body exceeds 1048576 bytes"
    );
    assert_eq!(r.header("connection"), Some("close"));

    let mut chunked = Vec::new();
    for piece in body.chunks(16 * 1024) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        f.addr()
    );
    let r = send_slowly_then_read(f.addr(), &head, &chunked).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    // The server is still fine.
    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": "alive"}))).await;
    assert_eq!(tool_text(&r.json()), "alive");
    f.handle.close().await;
}

#[tokio::test]
async fn a_client_waiting_for_100_continue_is_refused_without_sending_its_body() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    // No `100 Continue` ever comes: the refusal is the answer, at once.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 3145728\r\nExpect: 100-continue\r\n\r\n",
        f.addr()
    );
    let r = raw(f.addr(), head.as_bytes()).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    f.handle.close().await;
}

#[tokio::test]
async fn body_that_never_finishes_times_out_and_others_are_served() {
    let f = Fixture::start(HttpOptions::stateless().body_read_timeout(Duration::from_millis(300)))
        .await;
    let mut stuck = TcpStream::connect(f.addr()).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        f.addr()
    );
    stuck
        .write_all(head.as_bytes())
        .await
        .expect("partial body");
    // Meanwhile another client is served.
    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": "other"}))).await;
    assert_eq!(tool_text(&r.json()), "other");
    // The stuck one gets 408 and its connection is closed (read_to_end ends).
    let mut buf = Vec::new();
    guard("408 and close", stuck.read_to_end(&mut buf))
        .await
        .expect("read");
    let r = parse_response(&buf);
    assert_eq!(r.status, 408);
    assert_eq!(r.header("connection"), Some("close"));
    f.handle.close().await;
}

#[tokio::test]
async fn headers_that_never_finish_are_dropped() {
    let f =
        Fixture::start(HttpOptions::stateless().header_read_timeout(Duration::from_millis(300)))
            .await;
    let mut loris = TcpStream::connect(f.addr()).await.expect("connect");
    loris
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
        .await
        .expect("partial head");
    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": "served"}))).await;
    assert_eq!(tool_text(&r.json()), "served");
    // The slow client is disconnected (EOF or reset), not kept forever.
    let mut buf = Vec::new();
    let _ = guard("slow-loris close", loris.read_to_end(&mut buf)).await;
    assert!(
        buf.is_empty() || buf.starts_with(b"HTTP/1.1 408"),
        "unexpected bytes: {:?}",
        String::from_utf8_lossy(&buf)
    );
    f.handle.close().await;
}

#[tokio::test]
async fn a_head_trickled_forever_is_dropped_even_with_a_long_keep_alive() {
    // Keep-alive far beyond the hang guard: only the header-read limit can
    // end this connection, and the client keeps sending bytes all along.
    let f = Fixture::start(
        HttpOptions::stateless()
            .keep_alive_timeout(Duration::from_secs(600))
            .header_read_timeout(Duration::from_millis(300)),
    )
    .await;
    let loris = TcpStream::connect(f.addr()).await.expect("connect");
    let (mut rd, mut wr) = loris.into_split();
    let trickle = tokio::spawn(async move {
        wr.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .expect("head start");
        let mut sent = 0usize;
        while wr.write_all(b"X-Slow: 1\r\n").await.is_ok() {
            sent += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        sent
    });
    let mut buf = Vec::new();
    let _ = guard("trickled head dropped", rd.read_to_end(&mut buf)).await;
    assert!(
        buf.is_empty() || buf.starts_with(b"HTTP/1.1 408"),
        "unexpected bytes: {:?}",
        String::from_utf8_lossy(&buf)
    );
    // Its writes then fail: the server closed the socket, not just stopped reading.
    let sent = guard("trickle ends", trickle).await.expect("trickle task");
    assert!(
        sent > 0,
        "the client sent header lines before it was dropped"
    );
    // Other clients are served all along.
    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": "served"}))).await;
    assert_eq!(tool_text(&r.json()), "served");
    f.handle.close().await;
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed() {
    let f = Fixture::start(HttpOptions::stateless().keep_alive_timeout(Duration::from_millis(200)))
        .await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(1, "echo", json!({"text": "k"})).to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        f.addr(),
        body.len()
    );
    tcp.write_all(req.as_bytes()).await.expect("request");
    // One keep-alive response, then the server closes the idle connection.
    let mut buf = Vec::new();
    guard("idle close", tcp.read_to_end(&mut buf))
        .await
        .expect("read");
    let r = parse_response(&buf);
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

#[tokio::test]
async fn connections_over_the_limit_are_closed() {
    let mut f = Fixture::start(
        HttpOptions::stateless()
            .max_connections(1)
            .keep_alive_timeout(Duration::from_secs(30)),
    )
    .await;
    // The first connection is busy (its call runs): not idle, so not reaped.
    let first = open_post_no_wait(f.addr(), &[], &call(1, "block", json!({}))).await;
    f.wait_event("block started").await;
    let body = call(2, "echo", json!({"text": "2"})).to_string();
    // A second one is closed at once.
    let mut second = TcpStream::connect(f.addr()).await.expect("connect");
    let _ = second
        .write_all(&request(f.addr(), "POST", "/mcp", &[JSON], &body))
        .await;
    let mut buf = Vec::new();
    let _ = guard("refused connection", second.read_to_end(&mut buf)).await;
    assert!(buf.is_empty(), "got {:?}", String::from_utf8_lossy(&buf));
    drop(first);
    f.handle.close().await;
}

#[tokio::test]
async fn over_the_concurrency_limit_is_503_busy() {
    let mut f = Fixture::start(HttpOptions::stateless().max_concurrent_requests(1)).await;
    let addr = f.addr();
    let blocked = open_post_no_wait(addr, &[], &call(1, "block", json!({}))).await;
    f.wait_event("block started").await;
    let r = post(addr, &[], &call(2, "echo", json!({"text": "x"}))).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.error_code(), -32000);
    assert_eq!(r.json()["id"], 2);
    assert_eq!(r.header("retry-after"), Some("1"));
    // Notifications are never refused.
    let r = post(
        addr,
        &[],
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(r.status, 202);
    drop(blocked);
    f.wait_event("block ended cancelled=true").await;
    // The slot is free again.
    let r = post(addr, &[], &call(3, "echo", json!({"text": "y"}))).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

#[tokio::test]
async fn batch_entries_over_the_per_connection_limit_are_refused_inline() {
    let f = Fixture::start(HttpOptions::stateless().max_requests_per_connection(2)).await;
    let batch = json!([
        call(1, "slow", json!({"steps": 2})),
        call(2, "slow", json!({"steps": 2})),
        call(3, "echo", json!({"text": "third"})),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]);
    let r = post(f.addr(), &[], &batch).await;
    assert_eq!(r.status, 200);
    let replies = r.json();
    let replies = replies.as_array().expect("batch reply");
    assert_eq!(replies.len(), 3);
    assert_eq!(tool_text(&replies[0]), "done 2");
    assert_eq!(tool_text(&replies[1]), "done 2");
    assert_eq!(replies[2]["error"]["code"], -32000);
    f.handle.close().await;
}

#[tokio::test]
async fn requests_over_the_per_principal_limit_are_refused_for_that_principal_only() {
    let f = Fixture::start(
        HttpOptions::stateless()
            .max_requests_per_principal(2)
            .principal(|req| {
                req.headers
                    .get("x-user")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            }),
    )
    .await;
    let batch = json!([
        call(1, "slow", json!({"steps": 2})),
        call(2, "slow", json!({"steps": 2})),
        call(3, "echo", json!({"text": "third"})),
    ]);
    let r = post(f.addr(), &[("X-User", "alice")], &batch).await;
    let replies = r.json();
    let replies = replies.as_array().expect("batch reply");
    assert_eq!(tool_text(&replies[0]), "done 2");
    assert_eq!(tool_text(&replies[1]), "done 2");
    assert_eq!(replies[2]["error"]["code"], -32000, "{}", replies[2]);
    assert!(
        replies[2]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("for this principal")),
        "{}",
        replies[2]
    );
    // Without a principal only the other limits apply: all three run.
    let r = post(f.addr(), &[], &batch).await;
    let replies = r.json();
    let replies = replies.as_array().expect("batch reply");
    assert_eq!(tool_text(&replies[2]), "third");
    f.handle.close().await;
}

// ---------------------------------------------------------------- sessions

#[tokio::test]
async fn session_lifecycle() {
    let f = Fixture::start(sessions()).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    assert_eq!(sid.len(), 64);
    assert!(sid.bytes().all(|b| b.is_ascii_hexdigit()));
    let other = open_session(f.addr(), &[], json!({})).await;
    assert_ne!(sid, other);

    let body = call(1, "echo", json!({"text": "s"}));
    // Missing id: 400.
    let r = post(f.addr(), &[], &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), -32600);
    assert!(r.json()["error"]["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("Bad Request: Mcp-Session-Id header required")));
    // Guessed id: 404.
    let guessed = "0".repeat(64);
    for bad in [guessed.as_str(), "x", &sid[..63]] {
        let r = post(f.addr(), &[("Mcp-Session-Id", bad)], &body).await;
        assert_eq!(r.status, 404, "id {bad}");
        assert!(r.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Session not found")));
    }
    let r = post(f.addr(), &[("Mcp-Session-Id", &sid)], &body).await;
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()), "s");

    // DELETE: 204, then the session is gone; DELETE again or of a guess: 404.
    let del = |id: &str| request(f.addr(), "DELETE", "/mcp", &[("Mcp-Session-Id", id)], "");
    assert_eq!(raw(f.addr(), &del(&sid)).await.status, 204);
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &sid)], &body)
            .await
            .status,
        404
    );
    assert_eq!(raw(f.addr(), &del(&sid)).await.status, 404);
    assert_eq!(raw(f.addr(), &del(&guessed)).await.status, 404);
    assert_eq!(
        raw(f.addr(), &request(f.addr(), "DELETE", "/mcp", &[], ""))
            .await
            .status,
        400
    );
    // The other session is untouched.
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &other)], &body)
            .await
            .status,
        200
    );
    f.handle.close().await;
}

#[tokio::test]
async fn session_of_another_principal_is_404() {
    let f = Fixture::start(sessions()).await;
    let alice = [("Authorization", "Bearer alice")];
    let sid = open_session(f.addr(), &alice, json!({})).await;
    let body = call(1, "echo", json!({"text": "mine"}));
    let r = post(
        f.addr(),
        &[
            ("Mcp-Session-Id", &sid),
            ("Authorization", "Bearer mallory"),
        ],
        &body,
    )
    .await;
    assert_eq!(r.status, 404);
    let r = post(f.addr(), &[("Mcp-Session-Id", &sid)], &body).await;
    assert_eq!(r.status, 404, "no credentials is another principal too");
    let del = request(
        f.addr(),
        "DELETE",
        "/mcp",
        &[
            ("Mcp-Session-Id", &sid),
            ("Authorization", "Bearer mallory"),
        ],
        "",
    );
    assert_eq!(
        raw(f.addr(), &del).await.status,
        404,
        "nor can another principal end it"
    );
    let r = post(f.addr(), &[("Mcp-Session-Id", &sid), alice[0]], &body).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;

    // A custom principal function.
    let f = Fixture::start(sessions().principal(|req| {
        req.headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }))
    .await;
    let sid = open_session(f.addr(), &[("X-User", "ann")], json!({})).await;
    assert_eq!(
        post(
            f.addr(),
            &[("Mcp-Session-Id", &sid), ("X-User", "bob")],
            &body
        )
        .await
        .status,
        404
    );
    assert_eq!(
        post(
            f.addr(),
            &[("Mcp-Session-Id", &sid), ("X-User", "ann")],
            &body
        )
        .await
        .status,
        200
    );
    f.handle.close().await;
}

#[tokio::test]
async fn expired_session_is_404() {
    let f = Fixture::start(
        HttpOptions::new().sessions(SessionOptions::default().ttl(Duration::from_millis(100))),
    )
    .await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let r = post(
        f.addr(),
        &[("Mcp-Session-Id", &sid)],
        &call(1, "echo", json!({"text": "late"})),
    )
    .await;
    assert_eq!(r.status, 404);
    f.handle.close().await;
}

#[tokio::test]
async fn least_recently_used_session_is_evicted() {
    let f = Fixture::start(HttpOptions::new().sessions(SessionOptions::default().max(2))).await;
    let a = open_session(f.addr(), &[], json!({})).await;
    let b = open_session(f.addr(), &[], json!({})).await;
    let body = call(1, "echo", json!({"text": "x"}));
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &a)], &body)
            .await
            .status,
        200
    ); // a is fresher
    let c = open_session(f.addr(), &[], json!({})).await;
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &b)], &body)
            .await
            .status,
        404
    );
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &a)], &body)
            .await
            .status,
        200
    );
    assert_eq!(
        post(f.addr(), &[("Mcp-Session-Id", &c)], &body)
            .await
            .status,
        200
    );
    f.handle.close().await;
}

#[tokio::test]
async fn get_stream_needs_sse_accept_and_a_session() {
    let f = Fixture::start(sessions()).await;
    let sid = open_session(f.addr(), &[], json!({})).await;
    let r = raw(
        f.addr(),
        &request(f.addr(), "GET", "/mcp", &[("Mcp-Session-Id", &sid)], ""),
    )
    .await;
    assert_eq!(r.status, 406);
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream")],
            "",
        ),
    )
    .await;
    assert_eq!(r.status, 400);
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream"), ("Mcp-Session-Id", "nope")],
            "",
        ),
    )
    .await;
    assert_eq!(r.status, 404);
    f.handle.close().await;
}
