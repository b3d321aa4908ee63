#![deny(deprecated)]

use mcp_core::mcp_tool;

#[mcp_tool]
async fn echo(text: String) -> String {
    text
}

fn main() {
    let _ = echo::tool();
}
