//! The HTTP transport over real loopback TCP: every row of the status table,
//! bad input (malformed JSON, wrong content type, oversized and unfinished
//! bodies, unfinished headers, foreign Host/Origin, foreign or expired
//! sessions), binding (IPv6, EADDRINUSE, non-loopback refusal), and
//! Streamable HTTP (progress over SSE, elicitation round trip, cancellation
//! in and across sessions, disconnect, the GET stream, draining on close).
//!
//! The client is raw HTTP/1.1 over `TcpStream`, so malformed input is really
//! malformed. Timeouts below only guard against hangs.

#![cfg(feature = "http")]
// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

#[path = "common/raw_http.rs"]
mod raw_http;
#[path = "common/tool_events.rs"]
mod tool_events;
include!("common/http_prelude.rs");

// ---------------------------------------------------------------- status table

#[tokio::test]
async fn request_gets_200_json_and_notification_202() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let r = post(f.addr(), &[], &init_body(json!({}))).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["result"]["serverInfo"]["name"], "http-test");
    assert_eq!(r.header("mcp-session-id"), None, "stateless by default");

    let r = post(
        f.addr(),
        &[],
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());

    // A response nobody waits for is a message like any other: 202.
    let r = post(
        f.addr(),
        &[],
        &json!({"jsonrpc": "2.0", "id": "srv-9", "result": {}}),
    )
    .await;
    assert_eq!(r.status, 202);

    let r = post(f.addr(), &[], &call(1, "echo", json!({"text": "hi"}))).await;
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()), "hi");
    f.handle.close().await;
}

#[tokio::test]
async fn malformed_json_is_400_parse_error() {
    let f = Fixture::start(HttpOptions::new()).await;
    for body in ["{not json", "", "\u{1}", "[1,"] {
        let r = raw(f.addr(), &request(f.addr(), "POST", "/mcp", &[JSON], body)).await;
        assert_eq!(r.status, 400, "body {body:?}");
        assert_eq!(r.error_code(), -32700);
        assert_eq!(r.json()["id"], Value::Null);
    }
    // Valid JSON that is not a JSON-RPC message: 400 with -32600.
    let r = post(f.addr(), &[], &json!({"jsonrpc": "2.0"})).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), -32600);
    let r = post(f.addr(), &[], &json!([])).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), -32600);
    f.handle.close().await;
}

#[tokio::test]
async fn wrong_content_type_is_415() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = call(1, "echo", json!({"text": "x"})).to_string();
    for ct in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let headers: Vec<(&str, &str)> = ct.map(|c| ("Content-Type", c)).into_iter().collect();
        let r = raw(
            f.addr(),
            &request(f.addr(), "POST", "/mcp", &headers, &body),
        )
        .await;
        assert_eq!(r.status, 415, "content type {ct:?}");
        assert_eq!(r.error_code(), -32600);
    }
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "POST",
            "/mcp",
            &[("Content-Type", "Application/JSON; charset=utf-8")],
            &body,
        ),
    )
    .await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

#[tokio::test]
async fn wrong_path_or_method_is_404_method_not_found() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = call(1, "echo", json!({"text": "x"})).to_string();
    let r = raw(
        f.addr(),
        &request(f.addr(), "POST", "/other?x=1", &[JSON], &body),
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code(), -32601);
    let message = r.json()["error"]["message"]
        .as_str()
        .expect("message")
        .to_owned();
    assert!(
        message.starts_with("Not found: POST /other?x=1"),
        "{message}"
    );
    for method in ["PUT", "PATCH", "OPTIONS"] {
        let r = raw(f.addr(), &request(f.addr(), method, "/mcp", &[JSON], &body)).await;
        assert_eq!(r.status, 404, "{method}");
        assert_eq!(
            r.json()["error"]["message"],
            format!("Not found: {method} /mcp")
        );
    }
    // GET and DELETE exist only with sessions.
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
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("POST"));
    let r = raw(f.addr(), &request(f.addr(), "DELETE", "/mcp", &[], "")).await;
    assert_eq!(r.status, 405);
    f.handle.close().await;
}

#[tokio::test]
async fn foreign_host_or_origin_is_403_before_routing() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = call(1, "echo", json!({"text": "x"})).to_string();
    let port = f.addr().port().to_string();
    let rebinding = [
        "evil.example.com",
        "localhost.evil.example.com",
        "127.0.0.1.nip.io",
        "0.0.0.0",
        "[::ffff:7f00:1]:80x",
    ];
    for host in rebinding {
        let host = format!("{host}:{port}");
        let r = raw(
            f.addr(),
            &request(f.addr(), "POST", "/mcp", &[("Host", &host), JSON], &body),
        )
        .await;
        assert_eq!(r.status, 403, "host {host}");
        assert_eq!(r.error_code(), -32600);
        assert_eq!(
            r.json()["error"]["message"],
            "Forbidden: host/origin not allowed"
        );
    }
    // Guard before routing: a foreign host on a wrong path is still 403.
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "GET",
            "/nope",
            &[("Host", "evil.example.com")],
            "",
        ),
    )
    .await;
    assert_eq!(r.status, 403);
    for origin in [
        "http://evil.example.com",
        "null",
        "http://localhost.evil.example.com:80",
        "file://",
    ] {
        let r = raw(
            f.addr(),
            &request(f.addr(), "POST", "/mcp", &[("Origin", origin), JSON], &body),
        )
        .await;
        assert_eq!(r.status, 403, "origin {origin}");
    }
    // Loopback names and origins pass.
    for (host, origin) in [
        (format!("localhost:{port}"), "http://localhost:5173"),
        (format!("127.0.0.1:{port}"), "https://127.0.0.1"),
        (format!("[::1]:{port}"), "http://[::1]:3000"),
    ] {
        let r = raw(
            f.addr(),
            &request(
                f.addr(),
                "POST",
                "/mcp",
                &[("Host", &host), ("Origin", origin), JSON],
                &body,
            ),
        )
        .await;
        assert_eq!(r.status, 200, "host {host} origin {origin}");
    }
    f.handle.close().await;

    // Widened deliberately.
    let f = Fixture::start(
        HttpOptions::stateless()
            .allowed_hosts(["mcp.example.com"])
            .allowed_origins(["https://app.example.com"]),
    )
    .await;
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "POST",
            "/mcp",
            &[
                ("Host", "MCP.example.com:443"),
                ("Origin", "https://app.example.com"),
                JSON,
            ],
            &body,
        ),
    )
    .await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

#[tokio::test]
async fn authorize_false_is_401() {
    let f = Fixture::start(HttpOptions::stateless().authorize(|req| {
        req.headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            == Some("Bearer good")
    }))
    .await;
    let body = call(1, "echo", json!({"text": "x"}));
    let r = post(f.addr(), &[], &body).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.error_code(), -32600);
    assert_eq!(r.json()["error"]["message"], "Unauthorized");
    let r = post(f.addr(), &[("Authorization", "Bearer bad")], &body).await;
    assert_eq!(r.status, 401);
    let r = post(f.addr(), &[("Authorization", "Bearer good")], &body).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;

    // Asynchronous; a panicking check counts as a refusal.
    let f = Fixture::start(HttpOptions::stateless().authorize_async(|req| {
        let token = req.headers.get("x-token").map(|v| v.as_bytes().to_vec());
        async move {
            tokio::task::yield_now().await;
            match token.as_deref() {
                Some(b"boom") => panic!("authorize blew up"),
                Some(t) => t == b"ok",
                None => false,
            }
        }
    }))
    .await;
    assert_eq!(
        post(f.addr(), &[("X-Token", "ok")], &body).await.status,
        200
    );
    assert_eq!(
        post(f.addr(), &[("X-Token", "no")], &body).await.status,
        401
    );
    assert_eq!(
        post(f.addr(), &[("X-Token", "boom")], &body).await.status,
        401
    );
    assert_eq!(
        post(f.addr(), &[("X-Token", "ok")], &body).await.status,
        200
    );
    f.handle.close().await;
}

#[tokio::test]
async fn allow_request_replaces_the_guard() {
    let f = Fixture::start(
        HttpOptions::stateless().allow_request(|origin, host, _req| {
            origin.is_none() && host == Some("anything.example")
        }),
    )
    .await;
    let body = call(1, "echo", json!({"text": "x"})).to_string();
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "POST",
            "/mcp",
            &[("Host", "anything.example"), JSON],
            &body,
        ),
    )
    .await;
    assert_eq!(r.status, 200);
    let r = raw(f.addr(), &request(f.addr(), "POST", "/mcp", &[JSON], &body)).await;
    assert_eq!(r.status, 403, "loopback Host no longer suffices");
    f.handle.close().await;
}

/// A panicking hook answers an HTTP error; the connection is not dropped
/// without a response, and the server goes on serving.
#[tokio::test]
async fn panicking_hooks_answer_an_http_error() {
    let body = call(1, "echo", json!({"text": "x"})).to_string();
    let f = Fixture::start(
        HttpOptions::stateless().allow_request(|_origin, host, _req| {
            if host == Some("boom.example") {
                panic!("allow_request blew up");
            }
            true
        }),
    )
    .await;
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "POST",
            "/mcp",
            &[("Host", "boom.example"), JSON],
            &body,
        ),
    )
    .await;
    assert_eq!(r.status, 403, "a panicking allow_request refuses");
    let r = raw(f.addr(), &request(f.addr(), "POST", "/mcp", &[JSON], &body)).await;
    assert_eq!(r.status, 200, "and the server goes on");
    f.handle.close().await;

    let f = Fixture::start(HttpOptions::stateless().principal(|req| {
        if req.headers.contains_key("x-boom") {
            panic!("principal blew up");
        }
        None
    }))
    .await;
    let r = raw(
        f.addr(),
        &request(f.addr(), "POST", "/mcp", &[("X-Boom", "1"), JSON], &body),
    )
    .await;
    assert_eq!(r.status, 500, "a panicking principal hook is a 500");
    assert_eq!(r.json()["error"]["code"], -32603, "{}", r.text());
    let r = raw(f.addr(), &request(f.addr(), "POST", "/mcp", &[JSON], &body)).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

// ---------------------------------------------------------------- metadata

#[tokio::test]
async fn headers_and_peer_address_reach_the_tool() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = call(1, "headers", json!({})).to_string();
    let r = raw(
        f.addr(),
        &request(
            f.addr(),
            "POST",
            "/mcp",
            &[
                JSON,
                ("X-Tenant", "acme"),
                ("X-Role", "a"),
                ("x-role", "b"),
                ("Authorization", "Bearer t"),
            ],
            &body,
        ),
    )
    .await;
    let seen: Value = serde_json::from_str(&tool_text(&r.json())).expect("tool JSON");
    assert_eq!(seen["headers"]["x-tenant"], "acme");
    assert_eq!(seen["headers"]["x-role"], json!(["a", "b"]));
    assert_eq!(seen["headers"]["authorization"], "Bearer t");
    assert_eq!(seen["headers"]["content-type"], "application/json");
    let remote = seen["remote"].as_str().expect("remote address");
    let remote: SocketAddr = remote.parse().expect("a socket address");
    assert!(remote.ip().is_loopback());
    f.handle.close().await;
}

#[tokio::test]
async fn unsupported_protocol_version_is_400() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let body = call(1, "echo", json!({"text": "v"}));
    let r = post(f.addr(), &[("MCP-Protocol-Version", "1999-01-01")], &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), -32600);
    let r = post(f.addr(), &[("MCP-Protocol-Version", "2025-06-18")], &body).await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

// ---------------------------------------------------------------- binding

#[tokio::test]
async fn address_in_use_is_an_error_value() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port();
    let (tx, _rx) = mpsc::unbounded_channel();
    let err = serve_http(
        build_server(Arc::new(Mutex::new(tx))),
        HttpOptions::new().port(port),
    )
    .await
    .expect_err("the port is taken");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
}

#[tokio::test]
async fn non_loopback_bind_needs_authorize_or_allow_request() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let server = build_server(Arc::new(Mutex::new(tx)));
    let err = serve_http(server.clone(), HttpOptions::new().host("0.0.0.0"))
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        err.to_string()
            .contains("refusing to bind non-loopback host"),
        "{err}"
    );
    let handle = serve_http(
        server,
        HttpOptions::new().host("0.0.0.0").authorize(|_| false),
    )
    .await
    .expect("allowed with authorize");
    handle.close().await;
}

#[tokio::test]
async fn ipv6_loopback_bind() {
    // Skip only when this machine has no IPv6 loopback at all.
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback here; skipping");
        return;
    }
    for host in ["::1", "[::1]"] {
        let (tx, _rx) = mpsc::unbounded_channel();
        let handle = serve_http(
            build_server(Arc::new(Mutex::new(tx))),
            HttpOptions::stateless().host(host),
        )
        .await
        .expect("bind ::1");
        assert_eq!(handle.url(), format!("http://[::1]:{}/mcp", handle.port()));
        let addr = handle.local_addr();
        let r = post(addr, &[], &call(1, "echo", json!({"text": "v6"}))).await;
        assert_eq!(r.status, 200);
        assert_eq!(tool_text(&r.json()), "v6");
        handle.close().await;
    }
}

#[tokio::test]
async fn url_and_port_of_an_ephemeral_bind() {
    let f = Fixture::start(HttpOptions::stateless().path("api/mcp")).await;
    assert_ne!(f.handle.port(), 0);
    assert_eq!(
        f.handle.url(),
        format!("http://127.0.0.1:{}/api/mcp", f.handle.port())
    );
    let body = call(1, "echo", json!({"text": "p"})).to_string();
    let r = raw(
        f.addr(),
        &request(f.addr(), "POST", "/api/mcp", &[JSON], &body),
    )
    .await;
    assert_eq!(r.status, 200);
    f.handle.close().await;
}

// ---------------------------------------------------------------- embedding

#[tokio::test]
async fn mounts_in_your_own_hyper_server() {
    use hyper::server::conn::http1;
    use hyper_util::rt::TokioIo;
    use mcp_core::transport::http::McpHttpService;

    let (tx, _rx) = mpsc::unbounded_channel();
    let service = McpHttpService::new(
        build_server(Arc::new(Mutex::new(tx))),
        HttpOptions::stateless().path("/rpc"),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        // Serve two connections, then stop.
        for _ in 0..2 {
            let Ok((stream, peer)) = listener.accept().await else {
                return;
            };
            let per_conn = service.for_connection(Some(peer));
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), per_conn)
                    .await;
            });
        }
    });
    let body = call(1, "headers", json!({})).to_string();
    let r = raw(addr, &request(addr, "POST", "/rpc", &[JSON], &body)).await;
    assert_eq!(r.status, 200);
    let seen: Value = serde_json::from_str(&tool_text(&r.json())).expect("tool JSON");
    assert!(
        seen["remote"].as_str().is_some(),
        "peer address from for_connection"
    );
    let r = raw(addr, &request(addr, "POST", "/mcp", &[JSON], &body)).await;
    assert_eq!(r.status, 404, "only the configured path");
    guard("embedded server", server).await.expect("server task");
}

#[tokio::test]
async fn handle_answers_a_request_value_directly() {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use mcp_core::transport::http::McpHttpService;

    let (tx, _rx) = mpsc::unbounded_channel();
    let service = McpHttpService::new(build_server(Arc::new(Mutex::new(tx))), sessions());
    let init = hyper::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(init_body(json!({})).to_string())))
        .expect("request");
    let response = service.handle(init).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("mcp-session-id"));
    assert_eq!(service.session_count(), 1);
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("infallible")
        .to_bytes();
    let reply: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(reply["result"]["serverInfo"]["name"], "http-test");
}

/// A service mounted under another path than its configured one (no
/// `.path(...)`) answers a 404 whose JSON-RPC error names both paths and
/// the fix, not a bare "not found".
#[tokio::test]
async fn mounted_under_another_path_the_404_names_both_paths_and_the_fix() {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use mcp_core::transport::http::McpHttpService;

    let (tx, _rx) = mpsc::unbounded_channel();
    let service = McpHttpService::new(build_server(Arc::new(Mutex::new(tx))), HttpOptions::new());
    let req = hyper::Request::post("/api/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(init_body(json!({})).to_string())))
        .expect("request");
    let response = service.handle(req).await;
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.headers()["content-type"],
        "application/json",
        "a JSON-RPC body"
    );
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("infallible")
        .to_bytes();
    let reply: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(reply["jsonrpc"], "2.0");
    assert_eq!(reply["error"]["code"], -32601);
    let message = reply["error"]["message"].as_str().expect("message");
    assert!(message.contains("`/mcp`"), "configured path: {message}");
    assert!(message.contains("`/api/mcp`"), "requested path: {message}");
    assert!(
        message.contains("HttpOptions::new().path(\"/api/mcp\")"),
        "the fix: {message}"
    );
    assert_eq!(reply["error"]["data"]["configuredPath"], "/mcp");
    assert_eq!(reply["error"]["data"]["requestedPath"], "/api/mcp");

    // With the fix, the same request is served.
    let (tx, _rx) = mpsc::unbounded_channel();
    let fixed = McpHttpService::new(
        build_server(Arc::new(Mutex::new(tx))),
        HttpOptions::new().path("/api/mcp"),
    );
    let req = hyper::Request::post("/api/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(init_body(json!({})).to_string())))
        .expect("request");
    assert_eq!(fixed.handle(req).await.status(), 200);
}

#[cfg(feature = "tower")]
#[tokio::test]
async fn is_a_tower_service() {
    use bytes::Bytes;
    use http_body_util::Full;
    use mcp_core::transport::http::McpHttpService;

    fn assert_tower<S: tower_service::Service<hyper::Request<Full<Bytes>>>>(_: &S) {}
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut service = McpHttpService::new(
        build_server(Arc::new(Mutex::new(tx))),
        HttpOptions::stateless(),
    );
    assert_tower(&service);
    let req = hyper::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            call(1, "echo", json!({"text": "t"})).to_string(),
        )))
        .expect("request");
    let response = tower_service::Service::call(&mut service, req)
        .await
        .expect("infallible");
    assert_eq!(response.status(), 200);
}
