//! `ui` and `ui_visibility` write the tool's `_meta.ui` (MCP Apps).

use mcp_core::apps::AppView;
use mcp_core::{mcp_tool, McpServer};
use serde_json::json;

/// Shown with its view.
#[mcp_tool(ui = "ui://charts/view.html")]
fn shown() -> String {
    String::new()
}

/// Called by the view only.
#[mcp_tool(ui = "ui://charts/view.html", ui_visibility = "app")]
fn app_only() -> String {
    String::new()
}

/// Called by the model only.
#[mcp_tool(ui = "ui://charts/view.html", ui_visibility = "model")]
fn model_only() -> String {
    String::new()
}

/// Called by both, said explicitly.
#[mcp_tool(ui = "ui://charts/view.html", ui_visibility = "model_and_app")]
fn both() -> String {
    String::new()
}

fn main() {
    let server = McpServer::builder()
        .app_view(AppView::new("ui://charts/view.html", "Chart", "<svg></svg>"))
        .tool(shown::tool())
        .tool(app_only::tool())
        .tool(model_only::tool())
        .tool(both::tool())
        .build()
        .expect("valid server");
    let ui = |name: &str| {
        server
            .list_tools()
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.meta.as_ref())
            .map(|m| m["ui"].clone())
            .expect("listed with _meta.ui")
    };
    assert_eq!(ui("shown"), json!({"resourceUri": "ui://charts/view.html"}));
    assert_eq!(ui("app_only")["visibility"], json!(["app"]));
    assert_eq!(ui("model_only")["visibility"], json!(["model"]));
    assert_eq!(ui("both")["visibility"], json!(["model", "app"]));
}
