//! Per-tool time limits (issue 12): `#[mcp_tool(timeout = "…")]` and the
//! server's `tool_timeout` default end a call with a tool error and drop
//! its work; a tool's own limit wins over the default; tools added to a
//! live catalog get the default.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_core::{mcp_tool, InvokeContext, McpServer, McpToolDef};
use serde_json::json;

/// Sleeps 200 ms, then answers.
#[mcp_tool(timeout = "5s")]
async fn patient() -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    "done".into()
}

/// Sleeps 200 ms, then answers (no limit of its own).
#[mcp_tool]
async fn plain() -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    "done".into()
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn hanging(name: &str, dropped: &Arc<AtomicBool>) -> McpToolDef {
    let dropped = Arc::clone(dropped);
    McpToolDef::new(
        name,
        "hangs",
        json!({"type": "object"}),
        move |_args, _ctx: InvokeContext| {
            let guard = SetOnDrop(Arc::clone(&dropped));
            async move {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                drop(guard);
                "never"
            }
        },
    )
}

#[tokio::test]
async fn the_server_default_ends_a_call_and_drops_its_work_while_a_tool_limit_wins() {
    let dropped = Arc::new(AtomicBool::new(false));
    let server = McpServer::builder()
        .tool_timeout(Duration::from_millis(50))
        .tool(hanging("hang", &dropped))
        .tool(patient::tool())
        .tool(plain::tool())
        .build()
        .expect("builds");
    let result = server.call_tool("hang", json!({})).await.expect("answer");
    assert!(result.is_error());
    assert!(
        result
            .text_content()
            .contains("`hang` timed out after 50ms"),
        "{result:?}"
    );
    assert!(
        dropped.load(Ordering::SeqCst),
        "the handler's future was dropped"
    );

    // Its own 5 s limit, not the 50 ms default.
    let result = server
        .call_tool("patient", json!({}))
        .await
        .expect("answer");
    assert_eq!(result.text_content(), "done");
    // No limit of its own: the default applies.
    let result = server.call_tool("plain", json!({})).await.expect("answer");
    assert!(
        result.is_error() && result.text_content().contains("timed out"),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_tool_added_to_a_live_catalog_gets_the_default() {
    let dropped = Arc::new(AtomicBool::new(false));
    let server = McpServer::builder()
        .live_tools()
        .tool_timeout(Duration::from_millis(50))
        .build()
        .expect("builds");
    server
        .add_tool(hanging("late", &dropped))
        .await
        .expect("added");
    let result = server.call_tool("late", json!({})).await.expect("answer");
    assert!(
        result.text_content().contains("timed out after 50ms"),
        "{result:?}"
    );
}
