//! `examples/proxy.rs` with transform flags in front of `examples/demo`
//! over stdio: the listing shows the renamed tool, not the hidden one,
//! with the new description and the transformed schema; calls get the
//! default and the fixed value; a caller setting the fixed argument is
//! refused; the hidden tool is unknown; a flag naming no tool stops the
//! proxy with the reason.

use std::process::Stdio;

use mcp_core::protocol::LATEST_PROTOCOL_VERSION;
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_suite::example_command;
use serde_json::{json, Value};

/// The flags under test: every TOOL as the proxy lists it (`demo_` prefix).
const FLAGS: [&str; 12] = [
    "--rename",
    "demo_echo=demo_say",
    "--hide",
    "demo_confirm",
    "--describe",
    "demo_echo=Says the text back",
    "--default",
    "demo_slow.steps=2",
    "--fix",
    "demo_slow.delay_ms=1",
    "--rename-arg",
    "demo_echo.text=words",
];

async fn proxy(args: &[&str]) -> (TestClient, tokio::process::Child) {
    let mut child = example_command("proxy")
        .expect("the proxy example")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("proxy starts");
    let stdout = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take().expect("stdin");
    (
        TestClient::over(stdout, stdin, ClientOptions::default()),
        child,
    )
}

fn text(result: &mcp_core::protocol::CallToolResult) -> String {
    result.text_content()
}

#[tokio::test]
async fn the_proxy_serves_the_demo_transformed_by_its_flags() {
    let (mut client, _child) = proxy(&FLAGS).await;
    client
        .initialize(LATEST_PROTOCOL_VERSION)
        .await
        .expect("initialize");
    let listing = client
        .request("tools/list", json!({}))
        .await
        .expect("tools/list");
    let tools = listing["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["demo_big", "demo_say", "demo_slow"], "{listing}");
    let find = |name: &str| -> &Value {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed"))
    };
    let say = find("demo_say");
    assert_eq!(say["description"], "Says the text back");
    assert_eq!(say["inputSchema"]["required"], json!(["words"]), "{say}");
    assert!(say["inputSchema"]["properties"]["text"].is_null(), "{say}");
    let slow = find("demo_slow");
    assert_eq!(slow["inputSchema"]["properties"]["steps"]["default"], 2);
    assert!(
        slow["inputSchema"]["properties"]["delay_ms"].is_null(),
        "the fixed argument is not listed: {slow}"
    );

    let r = client
        .call_tool("demo_say", json!({"words": "hi"}))
        .await
        .expect("say");
    assert_eq!(text(&r), "hi");
    let r = client
        .call_tool("demo_slow", json!({}))
        .await
        .expect("slow");
    assert_eq!(
        text(&r),
        "done after 2 steps",
        "the default reached the demo"
    );
    let r = client
        .call_tool("demo_slow", json!({"delay_ms": 5000}))
        .await
        .expect("a tool error");
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).starts_with("Invalid arguments") && text(&r).contains("`delay_ms`"),
        "{}",
        text(&r)
    );
    let hidden = client
        .call_tool("demo_confirm", json!({}))
        .await
        .expect_err("hidden");
    let old = client
        .call_tool("demo_echo", json!({"text": "hi"}))
        .await
        .expect_err("renamed away");
    assert_eq!(hidden.code, old.code);
    assert_eq!(hidden.code, -32602, "{}", hidden.message);
}

#[tokio::test]
async fn a_flag_that_names_no_tool_stops_the_proxy_with_the_reason() {
    let output = example_command("proxy")
        .expect("the proxy example")
        .args(["--hide", "demo_nothing"])
        .stdin(Stdio::null())
        .output()
        .await
        .expect("proxy runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no tool `nothing`"), "{stderr}");
    let output = example_command("proxy")
        .expect("the proxy example")
        .args(["--default", "demo_slow.steps=not json"])
        .stdin(Stdio::null())
        .output()
        .await
        .expect("proxy runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not JSON"), "{stderr}");
}

/// The `catalog` example's lockfile of the proxy with transforms lists
/// the renamed tool, not the hidden one nor the old name.
#[tokio::test]
async fn the_catalog_lockfile_of_the_transformed_proxy() {
    let proxy = mcp_suite::example_path("proxy").expect("the proxy example");
    let lock = std::env::temp_dir().join(format!(
        "mcp-proxy-transforms-{}.lock.json",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&lock);
    let output = example_command("catalog")
        .expect("the catalog example")
        .arg("--lock")
        .arg(&lock)
        .args(["--update", "--"])
        .arg(&proxy)
        .args(["--rename", "demo_echo=demo_say", "--hide", "demo_confirm"])
        .stdin(Stdio::null())
        .output()
        .await
        .expect("catalog runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(&lock).expect("the lockfile was written");
    let _ = std::fs::remove_file(&lock);
    assert!(text.contains("\"demo_say\""), "{text}");
    assert!(text.contains("\"demo_slow\""), "{text}");
    assert!(!text.contains("demo_confirm"), "the hidden tool: {text}");
    assert!(!text.contains("demo_echo"), "the old name: {text}");
}
