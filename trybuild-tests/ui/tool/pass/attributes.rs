//! Every key of `#[mcp_tool(...)]`.

use mcp_core::{mcp_tool, McpServer};
use serde_json::json;

/// Overridden by `description`.
#[mcp_tool(
    name = "weather.get-v2",
    title = "Weather",
    description = "Get the weather",
    read_only,
    destructive = false,
    idempotent = true,
    open_world,
    icon = "https://example.com/sun.png",
    meta = r#"{"example.com/tier": "free"}"#,
    keep_defs,
    crate = "::mcp_core",
)]
async fn weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Flags set to false explicitly; the crate path without quotes.
#[mcp_tool(read_only = false, crate = mcp_core)]
fn plain() {}

fn main() {
    let server = McpServer::builder()
        .tool(weather::tool())
        .tool(plain::tool())
        .build()
        .expect("valid server");
    let tools = server.list_tools();
    let tool = serde_json::to_value(&tools[0]).expect("serializes");
    assert_eq!(tool["name"], "weather.get-v2");
    assert_eq!(tool["title"], "Weather");
    assert_eq!(tool["description"], "Get the weather");
    assert_eq!(
        tool["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
    );
    assert_eq!(tool["_meta"], json!({"example.com/tier": "free"}));
}
