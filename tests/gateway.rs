//! `examples/gateway.rs` driven as a client would (issue 12): over stdio
//! and Streamable HTTP, in both eras — the sealed envelope on every tool,
//! the error taxonomy with an errorId, the access check before the
//! arguments are parsed, the audit file holding successful writes only.

use std::path::PathBuf;
use std::process::Stdio;

use mcp_core::protocol::LATEST_PROTOCOL_VERSION;
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_suite::{example_command, post_mcp, serve_example_http};
use serde_json::{json, Value};

/// The gateway's access rule, the very file the example compiles.
#[path = "../examples/gateway_access/mod.rs"]
mod gateway_access;

use gateway_access::{Policy, Role};

const MODERN: &str = "2026-07-28";

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN,
           "io.modelcontextprotocol/clientCapabilities": {}})
}

/// A fresh audit file path.
fn audit_path(tag: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("gateway-audit-{tag}-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn audit_lines(path: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("an audit line is JSON"))
        .collect()
}

/// The envelope sealed into a `tools/call` result.
fn envelope(result: &Value) -> Value {
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {result}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not an envelope ({e}): {text}"))
}

async fn stdio_gateway(args: &[&str]) -> (TestClient, tokio::process::Child) {
    let mut child = example_command("gateway")
        .expect("the gateway example")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("gateway starts");
    let stdout = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take().expect("stdin");
    (
        TestClient::over(stdout, stdin, ClientOptions::default()),
        child,
    )
}

/// One `tools/call` over stdio, legacy or 2026-07-28.
async fn call(client: &TestClient, modern: bool, name: &str, args: Value) -> Value {
    let mut params = json!({"name": name, "arguments": args});
    if modern {
        params["_meta"] = meta();
    }
    client
        .request("tools/call", params)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

#[tokio::test]
async fn stdio_both_eras_envelopes_taxonomy_and_audit() {
    let audit = audit_path("stdio");
    let path = audit.to_string_lossy().into_owned();
    let (mut client, _child) = stdio_gateway(&["--audit", &path]).await;
    client
        .initialize(LATEST_PROTOCOL_VERSION)
        .await
        .expect("initialize");
    for modern in [false, true] {
        let ok = envelope(&call(&client, modern, "echo", json!({"text": "hi"})).await);
        assert_eq!(
            ok,
            json!({"ok": true, "data": "hi", "meta": {"tool": "echo", "version": "0.1.0"}})
        );

        let name = if modern { "apollo-2026" } else { "apollo" };
        let created =
            envelope(&call(&client, modern, "project_create", json!({"name": name})).await);
        assert_eq!(created["ok"], true, "{created}");
        assert_eq!(created["data"]["created"], name, "{created}");

        let again = call(&client, modern, "project_create", json!({"name": name})).await;
        assert_eq!(again["isError"], true, "{again}");
        let again = envelope(&again);
        assert_eq!(again["ok"], false, "{again}");
        assert_eq!(again["error"]["code"], "CONFLICT", "{again}");
        assert!(
            again["error"]["errorId"]
                .as_str()
                .is_some_and(|id| id.starts_with("gw-")),
            "{again}"
        );

        let invalid = envelope(&call(&client, modern, "task_close", json!({"id": "x"})).await);
        assert_eq!(invalid["error"]["code"], "VALIDATION_ERROR", "{invalid}");
        let missing = envelope(&call(&client, modern, "task_close", json!({"id": 9})).await);
        assert_eq!(missing["error"]["code"], "NOT_FOUND", "{missing}");
    }
    // Only the two successful writes: not the read-only echo, not failures.
    let lines = audit_lines(&audit);
    let tools: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["tool"].as_str().unwrap_or(""),
                l["principal"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [("project_create", "admin"), ("project_create", "admin")],
        "{lines:?}"
    );
    let metrics = client
        .request("resources/read", json!({"uri": "gateway://metrics"}))
        .await
        .expect("metrics");
    let metrics: Value =
        serde_json::from_str(metrics["contents"][0]["text"].as_str().unwrap_or("{}"))
            .expect("JSON");
    assert_eq!(
        metrics["project_create"],
        json!({"calls": 4, "errors": 2}),
        "{metrics}"
    );
    let _ = std::fs::remove_file(&audit);
}

#[tokio::test]
async fn a_viewer_is_refused_before_the_arguments_are_parsed() {
    let audit = audit_path("viewer");
    let path = audit.to_string_lossy().into_owned();
    let (mut client, _child) = stdio_gateway(&["--audit", &path, "--role", "viewer"]).await;
    client
        .initialize(LATEST_PROTOCOL_VERSION)
        .await
        .expect("initialize");
    // Arguments that would fail validation: the denial comes first, so the
    // parser never ran.
    for modern in [false, true] {
        let denied = envelope(&call(&client, modern, "task_close", json!({"id": "x"})).await);
        assert_eq!(denied["error"]["code"], "ACCESS_DENIED", "{denied}");
    }
    let ok = envelope(&call(&client, true, "project_list", json!({})).await);
    assert_eq!(ok["ok"], true, "{ok}");
    assert!(audit_lines(&audit).is_empty(), "nothing was written");
    let _ = std::fs::remove_file(&audit);
}

#[test]
fn over_http_each_request_names_its_role_in_both_eras() {
    let audit = audit_path("http");
    let path = audit.to_string_lossy().into_owned();
    let (mut child, port) = serve_example_http(
        "gateway",
        &["--http", "127.0.0.1:0", "--stateless", "--audit", &path],
    );

    // `role` None sends no `X-Gateway-Role` header at all.
    let legacy = |id: u64, name: &str, args: Value, role: Option<&str>| {
        let mut headers = vec![("MCP-Protocol-Version", "2025-11-25")];
        headers.extend(role.map(|r| ("X-Gateway-Role", r)));
        post_mcp(
            port,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}}),
            &headers,
        )
    };
    let modern = |id: u64, name: &str, args: Value, role: Option<&str>| {
        let mut headers = vec![
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", name),
        ];
        headers.extend(role.map(|r| ("X-Gateway-Role", r)));
        post_mcp(
            port,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": name, "arguments": args, "_meta": meta()}}),
            &headers,
        )
    };
    for (i, send) in [
        &legacy as &dyn Fn(u64, &str, Value, Option<&str>) -> Value,
        &modern,
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("web-{i}");
        let created =
            envelope(&send(1, "project_create", json!({"name": name}), Some("admin"))["result"]);
        assert_eq!(created["ok"], true, "{created}");
        // Deny by default: only the exact role `admin` may write. A viewer,
        // a caller naming no role, an empty role, another spelling of a
        // known role or an unknown one all get the least privilege.
        for role in [
            Some("viewer"),
            None,
            Some(""),
            Some("Viewer"),
            Some("guest"),
            Some("Admin"),
        ] {
            let denied = envelope(&send(2, "project_create", json!({"name": "x"}), role)["result"]);
            assert_eq!(
                denied["error"]["code"], "ACCESS_DENIED",
                "{role:?}: {denied}"
            );
            let listed = envelope(&send(3, "project_list", json!({}), role)["result"]);
            assert!(
                listed["data"].to_string().contains(&name),
                "{role:?}: {listed}"
            );
        }
    }
    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.iter().all(|l| l["principal"] == "admin"), "{lines:?}");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_file(&audit);
}

/// A gateway with `demo` proxied (`--remote demo=…`), driven by
/// `mcp_core::client` across processes: proxied results are not sealed,
/// the audit counts a proxied call as a write even though `demo` marks its
/// `echo` read-only, and the viewer role may not call a proxied tool.
#[tokio::test]
async fn proxied_entries_pass_through_intact_and_are_audited_as_writes() {
    use mcp_core::client::{ClientBuilder, Protocol};
    let demo = mcp_suite::example_path("demo").expect("the demo example");
    let remote = format!("demo={} --stdio", demo.display());
    for (protocol, tag) in [
        (Protocol::pinned("2025-11-25"), "legacy"),
        (Protocol::pinned(MODERN), "modern"),
    ] {
        let audit = audit_path(&format!("proxied-{tag}"));
        let mut command = example_command("gateway").expect("the gateway example");
        command.args(["--remote", &remote, "--audit", &audit.to_string_lossy()]);
        let client = ClientBuilder::new("gateway-test", "0")
            .protocol(protocol.clone())
            .connect_stdio(command)
            .await
            .expect("gateway over stdio");
        let names: Vec<String> = client
            .list_tools()
            .await
            .expect("tools")
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert!(
            names.iter().any(|n| n == "demo_echo") && names.iter().any(|n| n == "echo"),
            "{tag}: {names:?}"
        );

        let proxied = client
            .call_tool("demo_echo", json!({"text": "hi"}))
            .await
            .expect("proxied echo");
        assert_eq!(
            proxied.text_content(),
            "hi",
            "{tag}: a proxied result is not sealed"
        );
        let built_in = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .expect("echo");
        let sealed = envelope(&serde_json::to_value(&built_in).expect("json"));
        assert_eq!(sealed["ok"], true, "{tag}: {sealed}");
        assert_eq!(sealed["data"], "hi", "{tag}: {sealed}");
        client.close().await;

        let lines = audit_lines(&audit);
        let tools: Vec<&str> = lines.iter().filter_map(|l| l["tool"].as_str()).collect();
        assert_eq!(
            tools,
            ["demo_echo"],
            "{tag}: only the proxied call is a write"
        );
    }

    let mut command = example_command("gateway").expect("the gateway example");
    command.args(["--remote", &remote, "--role", "viewer"]);
    let client = ClientBuilder::new("gateway-test", "0")
        .connect_stdio(command)
        .await
        .expect("gateway over stdio");
    let denied = client
        .call_tool("demo_echo", json!({"text": "hi"}))
        .await
        .expect("an answer");
    assert_eq!(denied.is_error, Some(true));
    assert_eq!(
        denied
            .structured_content
            .as_ref()
            .and_then(|s| s.get("code")),
        Some(&json!("ACCESS_DENIED"))
    );
    client.close().await;
}

/// Only the exact role `admin` is granted writes: a missing, empty,
/// differently spelled or unknown role is parsed to the least privilege.
#[test]
fn unknown_roles_get_the_least_privilege() {
    assert_eq!(Role::parse(Some("admin")), Role::Admin);
    for principal in [
        None,
        Some(""),
        Some("viewer"),
        Some("Viewer"),
        Some("guest"),
        Some("Admin"),
        Some(" admin"),
    ] {
        let role = Role::parse(principal);
        assert_eq!(role, Role::Viewer, "{principal:?}");
        assert!(!role.may_write(), "{principal:?}");
    }
}

/// A backend's destructive `list` mounted under `project` is served as
/// `project_list`, the name of the gateway's own read-only tool. Judged by
/// that local name, a viewer could call it; judged by its mount, it is a
/// proxied tool, not read-only unless the gateway's configuration says so.
#[test]
fn a_proxied_tool_named_like_a_local_read_only_one_is_not_read_only() {
    let mut policy = Policy {
        local_read_only: ["echo", "project_list"].map(String::from).into(),
        mounts: vec!["project".to_owned(), "demo".to_owned()],
        proxied_read_only: Default::default(),
    };
    assert!(policy.is_proxied("project_list"));
    assert!(!policy.is_read_only("project_list"));
    assert!(!policy.may_call(Role::Viewer, "project_list"));
    assert!(
        !policy.may_call(Role::Viewer, "demo_echo"),
        "annotations are the backend's word"
    );
    assert!(policy.may_call(Role::Admin, "project_list"));
    // Local tools keep their own annotations; a name merely starting like a
    // mount is not proxied.
    assert!(policy.may_call(Role::Viewer, "echo"));
    assert!(!policy.is_proxied("projects"));
    assert!(!policy.may_call(Role::Viewer, "task_close"));
    // The gateway's own configuration may vouch for a proxied tool.
    policy.proxied_read_only.insert("demo_echo".to_owned());
    assert!(policy.may_call(Role::Viewer, "demo_echo"));
    assert!(!policy.may_call(Role::Viewer, "demo_confirm"));
}
