//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): the extension is
//! declared only with views (both eras), a view is read with its MIME type
//! and `_meta.ui`, a tool lists its `_meta.ui`, mounted views come along,
//! the client's declaration is seen, and each `BuildError::InvalidApp`.

mod common;
use common::guard;

use mcp_core::apps::{
    client_supports_apps, AppView, Csp, Permissions, ResourceUi, ToolUi, Visibility,
    APPS_EXTENSION, MIME_TYPE,
};
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_core::transport::CallContext;
use mcp_core::StdioOptions;
use mcp_core::{BuildError, InvokeContext, McpServer, McpServerBuilder, McpToolDef};
use serde_json::{json, Value};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const VIEW: &str = "ui://chart/view.html";
const HTML: &str = "<!doctype html><title>chart</title><svg></svg>";

fn modern(method: &str, mut params: Value, caps: Value) -> Value {
    params["_meta"] = json!({PV: "2026-07-28", CAPS: caps});
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

fn legacy_initialize(caps: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": caps,
        "clientInfo": {"name": "apps-test", "version": "1"},
    }})
}

async fn send(server: &McpServer, message: Value) -> Value {
    let shown = message.to_string();
    guard(&shown, server.handle_message(message, &CallContext::new()))
        .await
        .unwrap_or_else(|| panic!("no reply to {shown}"))
}

#[track_caller]
fn result(reply: &Value) -> &Value {
    assert!(reply.get("error").is_none(), "unexpected error: {reply}");
    &reply["result"]
}

fn tool(name: &str) -> McpToolDef {
    McpToolDef::new(
        name,
        "A test tool",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            if client_supports_apps(&ctx) {
                "apps"
            } else {
                "text"
            }
        },
    )
}

fn view() -> AppView {
    AppView::new(VIEW, "Chart", HTML).with_ui(
        ResourceUi::new()
            .csp(
                Csp::new()
                    .resource_domain("https://cdn.example.com")
                    .connect_domain("https://api.example.com"),
            )
            .permissions(Permissions {
                clipboard_write: true,
                ..Permissions::default()
            })
            .domain("abc.example-host.com")
            .prefers_border(false),
    )
}

fn apps_builder() -> McpServerBuilder {
    McpServer::builder()
        .server_info("apps-test", "1.0.0")
        .app_view(view())
        .tool(tool("chart").with_ui(ToolUi::new(VIEW)))
        .tool(tool("refresh").with_ui(ToolUi::new(VIEW).visibility([Visibility::App])))
}

/// The `extensions` map of both eras' capabilities: `initialize` (2025-11-25)
/// and `server/discover` (2026-07-28).
async fn both_eras_extensions(server: &McpServer) -> [Value; 2] {
    let init = send(server, legacy_initialize(json!({}))).await;
    let discover = send(server, modern("server/discover", json!({}), json!({}))).await;
    [
        result(&init)["capabilities"]["extensions"].clone(),
        result(&discover)["capabilities"]["extensions"].clone(),
    ]
}

#[tokio::test]
async fn the_extension_is_declared_in_both_eras_with_views() {
    let server = apps_builder().build().expect("valid");
    for extensions in both_eras_extensions(&server).await {
        assert_eq!(
            extensions[APPS_EXTENSION],
            json!({"mimeTypes": [MIME_TYPE]}),
            "{extensions}"
        );
    }
}

#[tokio::test]
async fn the_extension_is_not_declared_without_views() {
    let server = McpServer::builder()
        .server_info("plain", "1.0.0")
        .tool(tool("plain"))
        .build()
        .expect("valid");
    for extensions in both_eras_extensions(&server).await {
        assert!(extensions.get(APPS_EXTENSION).is_none(), "{extensions}");
    }
}

#[tokio::test]
async fn a_view_alone_declares_the_extension() {
    let server = McpServer::builder()
        .server_info("view-only", "1.0.0")
        .app_view(view())
        .build()
        .expect("valid");
    for extensions in both_eras_extensions(&server).await {
        assert!(extensions[APPS_EXTENSION].is_object(), "{extensions}");
    }
}

#[tokio::test]
async fn reading_the_view_gives_its_mime_type_and_meta() {
    let server = apps_builder().build().expect("valid");
    let reply = send(
        &server,
        modern("resources/read", json!({"uri": VIEW}), json!({})),
    )
    .await;
    let contents = &result(&reply)["contents"][0];
    assert_eq!(contents["uri"], VIEW);
    assert_eq!(contents["mimeType"], MIME_TYPE);
    assert_eq!(contents["text"], HTML);
    let ui = &contents["_meta"]["ui"];
    assert_eq!(
        ui["csp"],
        json!({
            "connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://cdn.example.com"],
        })
    );
    assert_eq!(ui["permissions"], json!({"clipboardWrite": {}}));
    assert_eq!(ui["domain"], "abc.example-host.com");
    assert_eq!(ui["prefersBorder"], false);

    let listed = send(&server, modern("resources/list", json!({}), json!({}))).await;
    let entry = &result(&listed)["resources"][0];
    assert_eq!(entry["uri"], VIEW);
    assert_eq!(entry["mimeType"], MIME_TYPE);
    assert_eq!(&entry["_meta"]["ui"], ui);
}

#[tokio::test]
async fn tools_list_their_ui_and_visibility() {
    let server = apps_builder().build().expect("valid");
    let reply = send(&server, modern("tools/list", json!({}), json!({}))).await;
    let tools = result(&reply)["tools"].as_array().expect("tools").clone();
    let meta = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed"))["_meta"]
            .clone()
    };
    assert_eq!(meta("chart")["ui"], json!({"resourceUri": VIEW}));
    assert_eq!(meta("chart")["ui/resourceUri"], VIEW);
    // An app-only tool is still listed: the host keeps it from the model.
    assert_eq!(
        meta("refresh")["ui"],
        json!({"resourceUri": VIEW, "visibility": ["app"]})
    );
}

#[tokio::test]
async fn with_ui_keeps_the_rest_of_meta() {
    let mut other = serde_json::Map::new();
    other.insert("example.com/flag".into(), json!(true));
    let def = tool("t")
        .with_meta(other)
        .with_ui(ToolUi::new(VIEW).visibility([
            Visibility::Model,
            Visibility::App,
            Visibility::App,
        ]));
    let meta = def.tool().meta.clone().expect("meta");
    assert_eq!(meta["example.com/flag"], true);
    assert_eq!(meta["ui"]["visibility"], json!(["model", "app"]));
}

#[tokio::test]
async fn mounted_views_come_along() {
    let server = McpServer::builder()
        .server_info("parent", "1.0.0")
        .mount("charts", apps_builder())
        .build()
        .expect("valid");
    let reply = send(
        &server,
        modern("resources/read", json!({"uri": VIEW}), json!({})),
    )
    .await;
    assert_eq!(result(&reply)["contents"][0]["mimeType"], MIME_TYPE);
    let tools = send(&server, modern("tools/list", json!({}), json!({}))).await;
    let chart = result(&tools)["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "charts_chart")
        .cloned()
        .expect("the mounted tool");
    assert_eq!(chart["_meta"]["ui"]["resourceUri"], VIEW);
    for extensions in both_eras_extensions(&server).await {
        assert!(extensions[APPS_EXTENSION].is_object(), "{extensions}");
    }
}

#[tokio::test]
async fn the_client_declaration_is_seen_in_the_modern_era() {
    let server = apps_builder().build().expect("valid");
    let call = |caps: Value| {
        modern(
            "tools/call",
            json!({"name": "chart", "arguments": {}}),
            caps,
        )
    };
    let with = json!({"extensions": {APPS_EXTENSION: {"mimeTypes": [MIME_TYPE]}}});
    let other_type = json!({"extensions": {APPS_EXTENSION: {"mimeTypes": ["text/html"]}}});
    for (caps, expected) in [(with, "apps"), (other_type, "text"), (json!({}), "text")] {
        let reply = send(&server, call(caps.clone())).await;
        assert_eq!(
            result(&reply)["content"][0]["text"],
            expected,
            "client capabilities {caps}"
        );
    }
}

#[tokio::test]
async fn the_client_declaration_is_seen_in_a_legacy_session() {
    for (caps, expected) in [
        (
            json!({"extensions": {APPS_EXTENSION: {"mimeTypes": [MIME_TYPE]}}}),
            "apps",
        ),
        (json!({}), "text"),
    ] {
        let server = apps_builder().build().expect("valid");
        let client = TestClient::start(server, StdioOptions::default(), ClientOptions::default());
        let init = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": caps,
            "clientInfo": {"name": "apps-test", "version": "1"},
        });
        client
            .request("initialize", init)
            .await
            .expect("initialized");
        assert!(client.notify("notifications/initialized", json!({})).await);
        let answer = client
            .call_tool("chart", json!({}))
            .await
            .expect("the tool answers");
        let answer = serde_json::to_value(answer).expect("json");
        assert_eq!(answer["content"][0]["text"], expected, "{caps}");
    }
}

#[track_caller]
fn invalid_app(built: Result<McpServer, BuildError>, words: &str) {
    match built {
        Err(BuildError::InvalidApp(why)) => assert!(why.contains(words), "{why}"),
        Err(other) => panic!("expected InvalidApp, got {other}"),
        Ok(_) => panic!("expected InvalidApp, the server was built"),
    }
}

#[test]
fn a_view_uri_must_be_ui() {
    for uri in [
        "https://example.com/view.html",
        "ui://",
        "file:///view.html",
    ] {
        let built = McpServer::builder()
            .app_view(AppView::new(uri, "View", HTML))
            .build();
        invalid_app(built, "must start with `ui://`");
    }
}

#[test]
fn a_csp_entry_must_be_an_origin() {
    // A `;` would let the entry add a directive of its own (here one that
    // allows every script) to the policy the host builds from the list.
    for entry in [
        "https://cdn.example.com; script-src *",
        "https://cdn.example.com 'unsafe-eval'",
        "cdn.example.com",
        "https://cdn.example.com/lib.js",
    ] {
        let view = AppView::new(VIEW, "View", HTML)
            .with_ui(ResourceUi::new().csp(Csp::new().frame_domain(entry)));
        let built = McpServer::builder().app_view(view).build();
        invalid_app(built, "is not an origin");
    }
}

#[test]
fn a_tool_must_name_a_view_of_the_server() {
    let built = McpServer::builder()
        .tool(tool("chart").with_ui(ToolUi::new("ui://chart/missing.html")))
        .build();
    invalid_app(built, "ui://chart/missing.html");
    // A plain resource at that URI is not a view.
    let built = McpServer::builder()
        .resource(mcp_core::McpResourceDef::new(
            VIEW,
            "not a view",
            |_req: mcp_core::handler::ResourceRequest, _ctx: InvokeContext| async { "<p>" },
        ))
        .tool(tool("chart").with_ui(ToolUi::new(VIEW)))
        .build();
    invalid_app(built, "no such view");
}

#[test]
fn a_visibility_must_not_be_empty() {
    let built = McpServer::builder()
        .app_view(view())
        .tool(tool("chart").with_ui(ToolUi::new(VIEW).visibility([])))
        .build();
    invalid_app(built, "visibility");
}

#[test]
fn a_visibility_must_use_the_known_names() {
    let mut meta = serde_json::Map::new();
    meta.insert(
        "ui".into(),
        json!({"resourceUri": VIEW, "visibility": ["user"]}),
    );
    let built = McpServer::builder()
        .app_view(view())
        .tool(tool("chart").with_meta(meta))
        .build();
    invalid_app(built, "\"user\"");
}

/// A view written by hand (a `ui://` resource served as the MCP Apps MIME
/// type, its `_meta.ui` made by its handler at each read) has its CSP
/// checked as an `AppView`'s is: before, only `app_view` checked origins,
/// and such a view reached the host with an entry that added a directive
/// of its own (`script-src *`) to the iframe's policy.
#[tokio::test]
async fn a_hand_written_view_has_its_csp_checked_at_each_read() {
    use mcp_core::handler::ResourceRequest;
    use mcp_core::protocol::ResourceContents;
    let hand_written = |uri: &'static str, origin: &'static str| {
        mcp_core::McpResourceDef::new(
            uri,
            "By hand",
            move |req: ResourceRequest, _ctx: InvokeContext| {
                let mut contents = ResourceContents::text(req.uri, HTML);
                contents.mime_type = Some(MIME_TYPE.to_owned());
                let meta = json!({"ui": {"csp": {"connectDomains": [origin]}}});
                contents.meta = meta.as_object().cloned();
                std::future::ready(contents)
            },
        )
        .with_mime_type(MIME_TYPE)
    };
    let server = McpServer::builder()
        .resource(hand_written(
            "ui://hand/bad.html",
            "https://a.example.com; script-src *",
        ))
        .resource(hand_written("ui://hand/good.html", "https://a.example.com"))
        .build()
        .expect("server");
    let client = TestClient::connect(server).await.expect("client");
    let bad = client
        .request("resources/read", json!({"uri": "ui://hand/bad.html"}))
        .await;
    let refused = bad.expect_err("an injected directive never reaches the host");
    assert!(
        format!("{refused:?}").contains("is not an origin"),
        "{refused:?}"
    );
    let good = client
        .request("resources/read", json!({"uri": "ui://hand/good.html"}))
        .await
        .expect("a valid view reads");
    let csp = &good["contents"][0]["_meta"]["ui"]["csp"];
    assert_eq!(csp["connectDomains"][0], "https://a.example.com");
}
