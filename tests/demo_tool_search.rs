//! `examples/demo.rs --tool-search` as a client meets it: over stdio and
//! over Streamable HTTP in both eras, `tools/list` shows `search_tools`,
//! `call_tool` and the pinned `echo`; a search finds `slow` with its input
//! schema; `call_tool` runs a tool that is not listed (with its progress);
//! every tool stays callable by its own name.

use std::process::Stdio;
use std::time::Duration;

use mcp_core::protocol::LATEST_PROTOCOL_VERSION;
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_suite::{example_command, post_mcp, serve_example_http};
use serde_json::{json, Value};
use tokio::time::timeout;

/// Hang guard for anything that should happen promptly.
const GUARD: Duration = Duration::from_secs(20);

const MODERN: &str = "2026-07-28";

fn names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .unwrap_or_else(|| panic!("not a list of tools: {tools}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect()
}

#[tokio::test]
async fn over_stdio_the_demo_lists_the_search_tools_and_calls_through_them() {
    let mut child = example_command("demo")
        .expect("the demo example")
        .arg("--tool-search")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("demo starts");
    let stdout = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take().expect("stdin");
    let mut client = TestClient::over(stdout, stdin, ClientOptions::default());
    timeout(GUARD, client.initialize(LATEST_PROTOCOL_VERSION))
        .await
        .expect("initialize in time")
        .expect("initialize");

    let listed = client.request("tools/list", json!({})).await.expect("list");
    assert_eq!(
        names(&listed["tools"]),
        ["search_tools", "call_tool", "echo"]
    );

    let found = client
        .call_tool("search_tools", json!({"query": "progress steps"}))
        .await
        .expect("search");
    let tools = &found.structured_content.as_ref().expect("structured")["tools"];
    assert_eq!(names(tools)[0], "slow", "{tools}");
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["steps"]["type"],
        "integer"
    );

    // `slow` is not listed; `call_tool` runs it with its progress.
    let (result, progress) = timeout(
        GUARD,
        client.call_tool_with_progress(
            "call_tool",
            json!({"name": "slow", "arguments": {"steps": 2, "delay_ms": 1}}),
        ),
    )
    .await
    .expect("slow in time")
    .expect("slow");
    assert_eq!(result.text_content(), "done after 2 steps");
    mcp_suite::assert_progress_counts_up(&progress, 2.0);
    assert_eq!(progress.len(), 2, "{progress:?}");

    // Every tool keeps its own name.
    let direct = client
        .call_tool("slow", json!({"steps": 1, "delay_ms": 1}))
        .await
        .expect("direct");
    assert_eq!(direct.text_content(), "done after 1 steps");
    let unknown = client
        .call_tool("call_tool", json!({"name": "nope"}))
        .await
        .expect_err("an unknown tool");
    assert_eq!(unknown.message, "Unknown tool: nope");
}

/// A request in either era: a 2026-07-28 one carries the `_meta` claim
/// and the routing headers (`Mcp-Name`: the body's `params.name`).
fn send(port: u16, modern: bool, id: u64, method: &str, params: Value) -> Value {
    let mut params = params;
    let name = params["name"].as_str().map(str::to_owned);
    if modern {
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
                                 "io.modelcontextprotocol/clientCapabilities": {}});
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut headers = vec![(
        "MCP-Protocol-Version",
        if modern { MODERN } else { "2025-11-25" },
    )];
    if modern {
        headers.push(("Mcp-Method", method));
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name));
        }
    }
    post_mcp(port, &body, &headers)
}

#[test]
fn over_http_in_both_eras_call_tool_carries_its_own_name() {
    let (mut child, port) = serve_example_http(
        "demo",
        &["--tool-search", "--http", "127.0.0.1:0", "--stateless"],
    );

    for modern in [false, true] {
        let listed = send(port, modern, 1, "tools/list", json!({}));
        assert_eq!(
            names(&listed["result"]["tools"]),
            ["search_tools", "call_tool", "echo"],
            "{listed}"
        );
        let found = send(
            port,
            modern,
            2,
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "confirm"}}),
        );
        assert_eq!(
            names(&found["result"]["structuredContent"]["tools"])[0],
            "confirm",
            "{found}"
        );
        // `Mcp-Name: call_tool`, the name in the body, is accepted.
        let called = send(
            port,
            modern,
            3,
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "slow", "arguments": {"steps": 1, "delay_ms": 1}}}),
        );
        assert_eq!(
            called["result"]["content"][0]["text"], "done after 1 steps",
            "{called}"
        );
        let direct = send(
            port,
            modern,
            4,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        );
        assert_eq!(
            direct["result"]["content"][0]["text"], "still here",
            "{direct}"
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}
