//! The smallest useful MCP server: one `echo` tool, served over stdio.
//!
//! ```sh
//! cargo run --example hello
//! {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}
//! ```

use mcp_core::{serve_stdio, InvokeContext, McpServer, McpToolDef};
use serde_json::json;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let echo = McpToolDef::new(
        "echo",
        "Echo the input back",
        json!({
            "type": "object",
            "properties": { "text": { "type": "string", "description": "The text to echo" } },
            "required": ["text"],
        }),
        |args, _ctx: InvokeContext| async move {
            match args.get("text").and_then(|t| t.as_str()) {
                Some(text) => Ok(text.to_owned()),
                None => Err("`text` must be a string"),
            }
        },
    );
    let server = McpServer::builder()
        .server_info("hello", env!("CARGO_PKG_VERSION"))
        .tool(echo)
        .build()
        .map_err(std::io::Error::other)?;
    serve_stdio(server, Default::default()).wait().await
}
