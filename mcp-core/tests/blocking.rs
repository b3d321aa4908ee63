//! A handler that blocks its thread cannot stall the stdio transport on a
//! multi-threaded runtime: the reader never runs handler code, so a `ping`
//! sent while a call blocks is answered before that call ends. Over HTTP,
//! blocking work belongs in a sync `fn` tool, which runs off the runtime's
//! workers: a ping on another connection is answered while it blocks.
//! Ordered by channels, not by time: if the ping were stuck behind the
//! blocked call, the hang guard would fail the test.

mod common;

use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};

use common::guard;
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_core::{InvokeContext, McpServer, McpToolDef, StdioOptions};
use serde_json::json;

/// Releases the blocked tool however the test ends, so the runtime can
/// shut down.
struct Release(mpsc::Sender<()>);

impl Drop for Release {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// A server whose tool `block` blocks its thread until released; fires
/// `started` when it begins.
fn blocking_server() -> (McpServer, Release, tokio::sync::oneshot::Receiver<()>) {
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let release_rx = Arc::new(Mutex::new(Some(release_rx)));
    let started_tx = Arc::new(Mutex::new(Some(started_tx)));
    let server = McpServer::builder()
        .tool(McpToolDef::new(
            "block",
            "Blocks its thread until released",
            json!({"type": "object"}),
            move |_args, _ctx: InvokeContext| {
                let (release_rx, started_tx) = (Arc::clone(&release_rx), Arc::clone(&started_tx));
                async move {
                    if let Some(tx) = started_tx
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take()
                    {
                        let _ = tx.send(());
                    }
                    // A blocking wait in an async handler: the mistake the
                    // transport must survive.
                    let rx = release_rx
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take();
                    if let Some(rx) = rx {
                        let _ = rx.recv();
                    }
                    "released"
                }
            },
        ))
        .build()
        .expect("builds");
    (server, Release(release_tx), started_rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_is_answered_while_another_call_blocks_its_thread() {
    let (server, release, started_rx) = blocking_server();
    let mut client = TestClient::start(server, StdioOptions::default(), ClientOptions::default());
    client.initialize("2025-11-25").await.expect("initialize");

    let blocked = client
        .start_request("tools/call", json!({"name": "block"}))
        .await;
    guard("the blocking call starts", started_rx)
        .await
        .expect("started");
    let pong = guard(
        "a ping while a call blocks",
        client.request("ping", json!({})),
    )
    .await;
    assert_eq!(pong, Ok(json!({})));

    drop(release);
    let reply = guard(
        "the blocked call ends",
        blocked.response(common::HANG_GUARD),
    )
    .await
    .expect("a reply");
    assert_eq!(reply["result"]["content"][0]["text"], "released", "{reply}");
}

/// One JSON POST on a fresh connection; the response's status line and body.
#[cfg(all(feature = "http", feature = "macros"))]
async fn post(addr: std::net::SocketAddr, body: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    response
}

/// The `block` tool's two ends: it fires `started`, then waits on `release`.
#[cfg(all(feature = "http", feature = "macros"))]
#[derive(Clone)]
struct Gate {
    started: Arc<Mutex<Option<tokio::sync::oneshot::Sender<()>>>>,
    release: Arc<Mutex<Option<mpsc::Receiver<()>>>>,
}

/// Blocks its thread until released: a sync `fn`, so on the blocking pool.
#[cfg(all(feature = "http", feature = "macros"))]
#[mcp_core::mcp_tool]
fn block(mcp_core::State(gate): mcp_core::State<Gate>) -> &'static str {
    let started = gate
        .started
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(tx) = started {
        let _ = tx.send(());
    }
    let release = gate
        .release
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(rx) = release {
        let _ = rx.recv();
    }
    "released"
}

/// The server runs on a multi-threaded runtime of its own (three workers);
/// the test and its hang guard run on another, so a stalled server fails
/// the guard instead of stalling the guard's timer with it.
#[cfg(all(feature = "http", feature = "macros"))]
#[tokio::test]
async fn over_http_a_ping_on_another_connection_is_answered_while_a_sync_tool_blocks() {
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release = Release(release_tx);
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let server = McpServer::builder()
        .state(Gate {
            started: Arc::new(Mutex::new(Some(started_tx))),
            release: Arc::new(Mutex::new(Some(release_rx))),
        })
        .tool(block::tool())
        .build()
        .expect("builds");
    let (addr_tx, addr_rx) = tokio::sync::oneshot::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server_thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(3)
            .enable_all()
            .build()
            .expect("server runtime");
        runtime.block_on(async move {
            let handle = mcp_core::serve_http(
                server,
                mcp_core::HttpOptions::stateless().host("127.0.0.1").port(0),
            )
            .await
            .expect("serves");
            let _ = addr_tx.send(handle.local_addr());
            let _ = stop_rx.await;
            handle.close().await;
        });
    });
    let addr = guard("the server starts", addr_rx)
        .await
        .expect("an address");
    let blocked = tokio::spawn(post(
        addr,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}"#,
    ));
    guard("the blocking call starts", started_rx)
        .await
        .expect("started");
    let pong = guard(
        "a ping on another connection while a call blocks",
        post(addr, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#),
    )
    .await;
    assert!(pong.starts_with("HTTP/1.1 200"), "{pong}");
    assert!(pong.contains(r#""id":2"#), "{pong}");
    drop(release);
    let reply = guard("the blocked call ends", blocked)
        .await
        .expect("no panic");
    assert!(reply.contains("released"), "{reply}");
    let _ = stop_tx.send(());
    guard(
        "the server stops",
        tokio::task::spawn_blocking(move || server_thread.join()),
    )
    .await
    .expect("joined")
    .expect("the server thread did not panic");
}
