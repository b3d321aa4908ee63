//! `mcp_core::client` against this crate's own server, over a byte stream
//! and over Streamable HTTP, in both eras: listings, calls, progress,
//! elicitation (a legacy server→client request, or 2026-07-28 input
//! rounds), cancellation, timeouts and the server's errors.

use std::sync::Arc;
use std::time::Duration;

use mcp_core::client::{Client, ClientBuilder, ClientError, Protocol, RequestOptions};
use mcp_core::{serve_http, transport::stdio::serve_io, CancelToken, HttpOptions, StdioOptions};
use serde_json::{json, Value};
use tokio::sync::mpsc;

mod client_support;
use client_support::{guard, handlers, server, text};

#[derive(Debug, Clone, Copy)]
enum Via {
    Io,
    Http,
}

/// A client to a fresh server; the receiver sees the `wait` tool's events.
async fn connect(
    via: Via,
    protocol: Protocol,
) -> (
    Client,
    mpsc::UnboundedReceiver<&'static str>,
    Option<mcp_core::transport::http::HttpHandle>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let builder = ClientBuilder::new("client-test", "0.1")
        .protocol(protocol)
        .handlers(handlers());
    match via {
        Via::Io => {
            let (client_end, server_end) = tokio::io::duplex(64 * 1024);
            let (server_r, server_w) = tokio::io::split(server_end);
            let (client_r, client_w) = tokio::io::split(client_end);
            let _handle = serve_io(server(tx), server_r, server_w, StdioOptions::default());
            let client = guard("connect", builder.connect_io(client_r, client_w))
                .await
                .expect("connected");
            (client, rx, None)
        }
        Via::Http => {
            let handle = serve_http(server(tx), HttpOptions::new().port(0))
                .await
                .expect("serve_http");
            let client = guard("connect", builder.connect_http(handle.url()))
                .await
                .expect("connected");
            (client, rx, Some(handle))
        }
    }
}

const CASES: [(Via, &str); 4] = [
    (Via::Io, "2025-11-25"),
    (Via::Io, "2026-07-28"),
    (Via::Http, "2025-11-25"),
    (Via::Http, "2026-07-28"),
];

#[tokio::test]
async fn lists_calls_progress_and_elicitation_in_both_eras() {
    for (via, version) in CASES {
        let (client, _events, handle) = connect(via, Protocol::pinned(version)).await;
        let case = format!("{via:?} {version}");
        assert_eq!(client.protocol_version(), version, "{case}");
        assert_eq!(client.is_modern(), version == "2026-07-28", "{case}");
        assert_eq!(
            client.server_info().and_then(|i| i.get("name")),
            Some(&json!("client-test")),
            "{case}"
        );
        let mut names: Vec<String> = guard("list", client.list_tools())
            .await
            .expect("tools")
            .into_iter()
            .map(|t| t.name)
            .collect();
        names.sort();
        assert_eq!(names, ["confirm", "echo", "slow", "sum", "wait"], "{case}");

        let r = guard("echo", client.call_tool("echo", json!({"text": "hi"})))
            .await
            .expect("echo");
        assert_eq!(text(&r), "hi", "{case}");

        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let options = RequestOptions::new().progress(move |p| {
            sink.lock().expect("lock").push((p.progress, p.total));
        });
        let r = guard("slow", client.call_tool_with("slow", (), &options))
            .await
            .expect("slow");
        assert_eq!(text(&r), "done", "{case}");
        assert_eq!(
            *seen.lock().expect("lock"),
            vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
            "{case}: progress in order, before the result"
        );

        let r = guard("confirm", client.call_tool("confirm", ()))
            .await
            .expect("confirm");
        assert_eq!(
            text(&r),
            "confirmed",
            "{case}: the handler's answer reached the tool"
        );

        client.close().await;
        if let Some(h) = handle {
            h.close().await;
        }
    }
}

#[tokio::test]
async fn auto_speaks_the_newest_revision_the_server_offers() {
    for via in [Via::Io, Via::Http] {
        let (client, _events, handle) = connect(via, Protocol::Auto).await;
        assert_eq!(client.protocol_version(), "2026-07-28", "{via:?}");
        assert!(client.is_modern());
        let r = guard("echo", client.call_tool("echo", json!({"text": "a"})))
            .await
            .expect("echo");
        assert_eq!(text(&r), "a");
        client.close().await;
        if let Some(h) = handle {
            h.close().await;
        }
    }
}

#[tokio::test]
async fn cancelling_a_call_stops_the_tool_in_both_eras() {
    for (via, version) in CASES {
        let (client, mut events, handle) = connect(via, Protocol::pinned(version)).await;
        let case = format!("{via:?} {version}");
        let token = CancelToken::new();
        let options = RequestOptions::new().cancel(token.clone());
        let call = client.call_tool_with("wait", (), &options);
        let (result, ()) = tokio::join!(call, async {
            assert_eq!(
                guard("start", events.recv()).await,
                Some("started"),
                "{case}"
            );
            token.cancel();
        });
        assert_eq!(result, Err(ClientError::Cancelled), "{case}");
        assert_eq!(
            guard("the tool sees the cancel", events.recv()).await,
            Some("cancelled"),
            "{case}"
        );
        client.close().await;
        if let Some(h) = handle {
            h.close().await;
        }
    }
}

#[tokio::test]
async fn a_timeout_cancels_and_server_errors_keep_their_code() {
    for (via, version) in CASES {
        let (client, mut events, handle) = connect(via, Protocol::pinned(version)).await;
        let case = format!("{via:?} {version}");
        let options = RequestOptions::new().timeout(Duration::from_millis(200));
        let result = guard("wait", client.call_tool_with("wait", (), &options)).await;
        assert_eq!(result, Err(ClientError::Timeout), "{case}");
        assert_eq!(guard("start", events.recv()).await, Some("started"));
        assert_eq!(
            guard("cancel", events.recv()).await,
            Some("cancelled"),
            "{case}"
        );

        let err = guard("unknown", client.call_tool("nope", ()))
            .await
            .expect_err("unknown tool");
        assert_eq!(err.code(), Some(-32602), "{case}: {err}");
        let err = guard(
            "unknown method",
            client.request("no/such", Value::Null, &RequestOptions::new()),
        )
        .await
        .expect_err("unknown method");
        assert_eq!(err.code(), Some(-32601), "{case}: {err}");
        client.close().await;
        if let Some(h) = handle {
            h.close().await;
        }
    }
}

#[tokio::test]
async fn a_server_that_goes_away_fails_what_waits() {
    let (client_end, server_end) = tokio::io::duplex(1024);
    let (client_r, client_w) = tokio::io::split(client_end);
    let (mut server_r, mut server_w) = tokio::io::split(server_end);
    // A hand-written legacy server: answers initialize, then closes on the
    // first call.
    let fake = tokio::spawn(async move {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let mut lines = BufReader::new(&mut server_r).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let msg: Value = serde_json::from_str(&line).expect("json");
            match msg["method"].as_str() {
                Some("initialize") => {
                    let reply = json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                        "protocolVersion": "2025-06-18", "capabilities": {},
                        "serverInfo": {"name": "fake", "version": "0"}}});
                    server_w
                        .write_all(format!("{reply}\n").as_bytes())
                        .await
                        .expect("write");
                }
                Some("tools/call") => return,
                _ => {}
            }
        }
    });
    let client = guard(
        "connect",
        ClientBuilder::new("t", "0")
            .protocol(Protocol::pinned("2025-06-18"))
            .connect_io(client_r, client_w),
    )
    .await
    .expect("connected");
    assert_eq!(client.protocol_version(), "2025-06-18");
    let err = guard("call", client.call_tool("x", ()))
        .await
        .expect_err("closed");
    assert_eq!(err, ClientError::Closed);
    assert!(client.is_closed());
    fake.await.expect("fake server");
}
