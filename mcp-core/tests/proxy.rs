//! `mcp_core::client::proxy`: a backend (this crate's server over HTTP)
//! mounted into a front server, called through the front in every pair of
//! eras: listings with the proxied mark, intact results, progress,
//! elicitation relayed across eras, cancellation reaching the backend,
//! and a backend that goes away and comes back.

use std::sync::Arc;
use std::time::Duration;

use mcp_core::client::proxy::{ProxyOptions, Remote, Target, PROXIED_META};
use mcp_core::client::{Client, ClientBuilder, ClientError, Protocol, RequestOptions};
use mcp_core::{
    serve_http, transport::stdio::serve_io, CancelToken, HttpOptions, McpServer, StdioOptions,
};
use serde_json::json;
use tokio::sync::mpsc;

mod client_support;
use client_support::{guard, handlers, server, text};

const ERAS: [&str; 2] = ["2025-11-25", "2026-07-28"];

struct Setup {
    front: Client,
    backend_events: mpsc::UnboundedReceiver<&'static str>,
    backend: mcp_core::transport::http::HttpHandle,
}

/// Backend over HTTP speaking `backend_era` to the proxy; front over a
/// byte stream speaking `front_era` to the test.
async fn setup(front_era: &str, backend_era: &str) -> Setup {
    let (tx, backend_events) = mpsc::unbounded_channel();
    let backend = serve_http(server(tx), HttpOptions::new().port(0))
        .await
        .expect("backend");
    let remote = guard(
        "proxy connect",
        Remote::connect(
            "backend",
            Target::Url(backend.url().to_owned()),
            ClientBuilder::new("proxy", "0").protocol(Protocol::pinned(backend_era)),
            ProxyOptions::new(),
        ),
    )
    .await
    .expect("remote");
    let child = guard("listings", remote.builder())
        .await
        .expect("proxied server");
    let front_server = McpServer::builder()
        .server_info("front", "1.0.0")
        .mount("remote", child)
        .build()
        .expect("front server");
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_r, server_w) = tokio::io::split(server_end);
    let (client_r, client_w) = tokio::io::split(client_end);
    let _front = serve_io(front_server, server_r, server_w, StdioOptions::default());
    let front = guard(
        "front connect",
        ClientBuilder::new("test", "0")
            .protocol(Protocol::pinned(front_era))
            .handlers(handlers())
            .connect_io(client_r, client_w),
    )
    .await
    .expect("front client");
    Setup {
        front,
        backend_events,
        backend,
    }
}

#[tokio::test]
async fn proxied_tools_keep_results_progress_and_elicitation_across_eras() {
    for front_era in ERAS {
        for backend_era in ERAS {
            let case = format!("front {front_era}, backend {backend_era}");
            let s = setup(front_era, backend_era).await;
            let tools = guard("list", s.front.list_tools()).await.expect("tools");
            let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            names.sort_unstable();
            assert_eq!(
                names,
                [
                    "remote_confirm",
                    "remote_echo",
                    "remote_slow",
                    "remote_sum",
                    "remote_wait"
                ],
                "{case}"
            );
            assert!(
                tools
                    .iter()
                    .all(|t| t.meta.as_ref().and_then(|m| m.get(PROXIED_META))
                        == Some(&json!({"remote": "backend"}))),
                "{case}: every forwarded tool is marked"
            );

            let r = guard(
                "echo",
                s.front.call_tool("remote_echo", json!({"text": "hi"})),
            )
            .await
            .expect("echo");
            assert_eq!(text(&r), "hi", "{case}");

            let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
            let sink = Arc::clone(&seen);
            let options = RequestOptions::new()
                .progress(move |p| sink.lock().expect("lock").push(p.progress));
            let r = guard("slow", s.front.call_tool_with("remote_slow", (), &options))
                .await
                .expect("slow");
            assert_eq!(text(&r), "done", "{case}");
            assert_eq!(
                *seen.lock().expect("lock"),
                vec![1.0, 2.0, 3.0],
                "{case}: progress forwarded"
            );

            let r = guard("confirm", s.front.call_tool("remote_confirm", ()))
                .await
                .expect("confirm");
            assert_eq!(
                text(&r),
                "confirmed",
                "{case}: the backend's question reached the test's handler"
            );

            let err = guard("unknown", s.front.call_tool("remote_nope", ()))
                .await
                .expect_err("unknown");
            assert_eq!(err.code(), Some(-32602), "{case}: {err}");
            s.front.close().await;
            s.backend.close().await;
        }
    }
}

#[tokio::test]
async fn cancelling_through_the_proxy_stops_the_backend_tool() {
    for front_era in ERAS {
        for backend_era in ERAS {
            let case = format!("front {front_era}, backend {backend_era}");
            let mut s = setup(front_era, backend_era).await;
            let token = CancelToken::new();
            let options = RequestOptions::new().cancel(token.clone());
            let call = s.front.call_tool_with("remote_wait", (), &options);
            let events = &mut s.backend_events;
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
                guard("the backend sees the cancel", s.backend_events.recv()).await,
                Some("cancelled"),
                "{case}"
            );
            s.front.close().await;
            s.backend.close().await;
        }
    }
}

#[tokio::test]
async fn a_backend_that_goes_away_gives_a_clear_error_and_is_reconnected() {
    let s = setup("2026-07-28", "2025-11-25").await;
    let port = s.backend.port();
    s.backend.close().await;
    let r = guard(
        "down",
        s.front.call_tool("remote_echo", json!({"text": "x"})),
    )
    .await
    .expect("a tool error, not a protocol error");
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).contains("backend backend is unavailable"),
        "{}",
        text(&r)
    );

    // The backend restarts on the same port: the next call reconnects
    // (a new legacy session) and succeeds.
    let (tx, _events) = mpsc::unbounded_channel();
    let again = serve_http(server(tx), HttpOptions::new().port(port))
        .await
        .expect("backend again");
    let mut last = None;
    for _ in 0..3 {
        let r = guard(
            "up",
            s.front.call_tool("remote_echo", json!({"text": "back"})),
        )
        .await
        .expect("call");
        if r.is_error != Some(true) {
            last = Some(text(&r));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(last.as_deref(), Some("back"));
    s.front.close().await;
    again.close().await;
}

#[tokio::test]
async fn a_backend_tool_added_at_run_time_appears_through_the_proxy() {
    use mcp_core::client::proxy::DEFAULT_LISTING_TTL;
    use mcp_core::{protocol::CallToolResult, InvokeContext, McpToolDef};
    use serde_json::{Map, Value};
    for backend_era in ERAS {
        let (tx, _events) = mpsc::unbounded_channel();
        let backend_server = McpServer::builder()
            .server_info("live-backend", "1")
            .live_tools()
            .tool(server(tx).list_tools().into_iter().next().map_or_else(
                || panic!("the fixture has tools"),
                |t| {
                    McpToolDef::new(
                        t.name,
                        "first",
                        json!({"type": "object"}),
                        |_: Map<String, Value>, _: InvokeContext| async {
                            CallToolResult::text("first")
                        },
                    )
                },
            ))
            .build()
            .expect("backend");
        let backend = serve_http(backend_server.clone(), HttpOptions::new().port(0))
            .await
            .expect("backend");
        let remote = Remote::connect(
            "backend",
            Target::Url(backend.url().to_owned()),
            ClientBuilder::new("proxy", "0").protocol(Protocol::pinned(backend_era)),
            ProxyOptions::new(),
        )
        .await
        .expect("remote");
        let front = McpServer::builder()
            .live_tools()
            .mount("remote", remote.builder().await.expect("listing"))
            .build()
            .expect("front");
        let sync = remote.sync_tools(front.clone(), Some("remote".into()), DEFAULT_LISTING_TTL);
        let before: Vec<String> = front.list_tools().into_iter().map(|t| t.name).collect();
        assert_eq!(before.len(), 1, "{backend_era}: {before:?}");

        // Give the sync task time to open its listen (2026-07-28) before
        // the change; legacy sessions get it on their GET stream.
        tokio::time::sleep(Duration::from_millis(200)).await;
        backend_server
            .add_tool(McpToolDef::new(
                "added",
                "added at run time",
                json!({"type": "object"}),
                |_: Map<String, Value>, _: InvokeContext| async {
                    CallToolResult::text("added works")
                },
            ))
            .await
            .expect("added");
        let appeared = guard("the new tool through the proxy", async {
            loop {
                if front.list_tools().iter().any(|t| t.name == "remote_added") {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        assert_eq!(appeared, ());
        let result = front
            .call_tool("remote_added", json!({}))
            .await
            .expect("forwarded call");
        assert_eq!(text(&result), "added works", "{backend_era}");
        sync.abort();
        drop((remote, front));
        backend.close().await;
    }
}

/// A caller's `Authorization` reaches an HTTP backend only when the proxy
/// is told to forward it, and then replaces the proxy's own.
#[tokio::test]
async fn authorization_is_forwarded_only_when_configured() {
    use mcp_core::{protocol::CallToolResult, InvokeContext, McpToolDef};
    use serde_json::{Map, Value};
    for forward in [false, true] {
        let backend_server = McpServer::builder()
            .server_info("auth-backend", "1")
            .tool(McpToolDef::new(
                "whoami",
                "the Authorization this call carried",
                json!({"type": "object"}),
                |_: Map<String, Value>, ctx: InvokeContext| async move {
                    let seen = ctx
                        .header("authorization")
                        .and_then(|v| v.as_single())
                        .unwrap_or("none")
                        .to_owned();
                    CallToolResult::text(seen)
                },
            ))
            .build()
            .expect("backend");
        let backend = serve_http(backend_server, HttpOptions::new().port(0))
            .await
            .expect("backend");
        let remote = Remote::connect(
            "backend",
            Target::Url(backend.url().to_owned()),
            ClientBuilder::new("proxy", "0").header("authorization", "Bearer proxy"),
            ProxyOptions::new().forward_authorization(forward),
        )
        .await
        .expect("remote");
        let front_server = McpServer::builder()
            .server_info("front", "1")
            .mount("remote", remote.builder().await.expect("listing"))
            .build()
            .expect("front");
        let front = serve_http(front_server, HttpOptions::new().port(0))
            .await
            .expect("front");
        for era in ERAS {
            let client = ClientBuilder::new("caller", "0")
                .protocol(Protocol::pinned(era))
                .header("authorization", "Bearer caller")
                .connect_http(front.url())
                .await
                .expect("caller");
            let r = guard("whoami", client.call_tool("remote_whoami", ()))
                .await
                .expect("whoami");
            let expected = if forward {
                "Bearer caller"
            } else {
                "Bearer proxy"
            };
            assert_eq!(text(&r), expected, "forward {forward}, caller {era}");
            client.close().await;
        }
        front.close().await;
        drop(remote);
        backend.close().await;
    }
}
