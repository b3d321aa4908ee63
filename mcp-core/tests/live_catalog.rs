//! A live tool catalog (issue 12): tools added and removed while serving,
//! `listChanged: true` advertised, `notifications/tools/list_changed` to
//! legacy sessions and to 2026-07-28 listens that ask for it, truthful
//! cache hints, and fixed catalogs refusing changes.

mod common;

use std::time::Duration;

use common::HANG_GUARD;
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_core::{BuildError, InvokeContext, McpServer, McpToolDef, StdioOptions};
use serde_json::{json, Value};

fn tool(name: &'static str) -> McpToolDef {
    McpToolDef::new(
        name,
        "A tool",
        json!({"type": "object"}),
        move |_args, _ctx: InvokeContext| async move { format!("{name} ran") },
    )
}

fn names(listing: &Value) -> Vec<String> {
    listing["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn tools_come_and_go_and_legacy_sessions_hear_of_it() {
    let server = McpServer::builder()
        .live_tools()
        .tool(tool("first"))
        .build()
        .expect("builds");
    let client = TestClient::connect(server.clone())
        .await
        .expect("initialize");
    let caps = &client.initialize_result().expect("initialized")["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true, "{caps}");

    assert_eq!(
        server.add_tool(tool("second")).await,
        Ok(1),
        "one session told"
    );
    let note = client
        .next_notification(HANG_GUARD)
        .await
        .expect("a notification");
    assert_eq!(note["method"], "notifications/tools/list_changed", "{note}");
    let listing = client.request("tools/list", json!({})).await.expect("list");
    assert_eq!(names(&listing), ["first", "second"]);
    let result = client.call_tool("second", json!({})).await.expect("call");
    assert_eq!(result.text_content(), "second ran");

    assert_eq!(
        server.add_tool(tool("second")).await,
        Err(BuildError::DuplicateTool("second".into()))
    );
    assert_eq!(server.remove_tool("first").await, Some(1));
    let note = client
        .next_notification(HANG_GUARD)
        .await
        .expect("a notification");
    assert_eq!(note["method"], "notifications/tools/list_changed", "{note}");
    assert_eq!(server.remove_tool("first").await, None, "already gone");
    let listing = client.request("tools/list", json!({})).await.expect("list");
    assert_eq!(names(&listing), ["second"]);
    let gone = client
        .call_tool("first", json!({}))
        .await
        .expect_err("removed");
    assert!(gone.message.contains("Unknown tool"), "{gone:?}");
    assert_eq!(server.list_tools().len(), 1);
}

#[tokio::test]
async fn a_fixed_catalog_refuses_changes_and_says_so() {
    let server = McpServer::builder()
        .tool(tool("only"))
        .build()
        .expect("builds");
    assert_eq!(
        server.add_tool(tool("more")).await,
        Err(BuildError::CatalogNotLive)
    );
    assert_eq!(server.remove_tool("only").await, None);
    assert_eq!(
        server.server_capabilities().tools.map(|t| t.list_changed),
        Some(false)
    );
}

#[tokio::test]
async fn a_2026_listen_that_asks_hears_of_changes_tagged_and_a_listing_is_not_cached() {
    let server = McpServer::builder()
        .live_tools()
        .tool(tool("first"))
        .build()
        .expect("builds");
    let client = TestClient::start(
        server.clone(),
        StdioOptions::default(),
        ClientOptions::default(),
    );
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let listing = client
        .request("tools/list", json!({"_meta": meta}))
        .await
        .expect("list");
    assert_eq!(
        listing["ttlMs"], 0,
        "a live listing is not to be cached: {listing}"
    );

    let listen = client
        .start_request(
            "subscriptions/listen",
            json!({"_meta": meta, "notifications": {"toolsListChanged": true, "promptsListChanged": true}}),
        )
        .await;
    let ack = client
        .next_notification(HANG_GUARD)
        .await
        .expect("the acknowledgement");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "only what the server does: {ack}"
    );
    let listen_id = serde_json::to_value(&listen.id).expect("id");
    // The server registers the listener right after queueing the
    // acknowledgement, so by now it is (or is about to be) there: a change
    // made before it is retried, never counted.
    let mut told = 0;
    for _ in 0..100 {
        told = server.add_tool(tool("second")).await.unwrap_or(0);
        if told > 0 {
            break;
        }
        server.remove_tool("second").await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(told, 1);
    let note = client
        .next_notification(HANG_GUARD)
        .await
        .expect("a notification");
    assert_eq!(note["method"], "notifications/tools/list_changed", "{note}");
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen_id,
        "{note}"
    );
}

/// A stdio server with a live catalog ends at the end of its input, once
/// a session initialized: the session's list-change listener must not keep
/// its writer open (`examples/gateway` once hung there).
#[tokio::test]
async fn a_live_stdio_server_ends_with_its_input_after_initialize() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = McpServer::builder()
        .live_catalog()
        .server_info("live", "1")
        .build()
        .expect("server");
    let (mut client_w, server_r) = tokio::io::duplex(1 << 16);
    let (server_w, mut client_r) = tokio::io::duplex(1 << 16);
    let handle =
        mcp_core::transport::stdio::serve_io(server, server_r, server_w, StdioOptions::default());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    client_w
        .write_all(format!("{init}\n").as_bytes())
        .await
        .expect("write");
    drop(client_w);
    let mut out = String::new();
    tokio::time::timeout(HANG_GUARD, client_r.read_to_string(&mut out))
        .await
        .expect("the server closed its output at the end of its input")
        .expect("read");
    assert!(out.contains("\"id\":1"), "{out}");
    tokio::time::timeout(HANG_GUARD, handle.wait())
        .await
        .expect("the server ended")
        .expect("clean end");
}
