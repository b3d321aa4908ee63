//! A handler that blocks its thread cannot stall the stdio transport on a
//! multi-threaded runtime (issue 16): the reader never runs handler code,
//! so a `ping` sent while a call blocks is answered before that call ends.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_is_answered_while_another_call_blocks_its_thread() {
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
    let release = Release(release_tx);
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
