use mcp_core::mcp_tool;

/// Renders.
#[mcp_tool(timeout = "30 seconds")]
async fn render() -> String {
    String::new()
}

/// Renders too.
#[mcp_tool(timeout = "0s")]
async fn instant() -> String {
    String::new()
}

fn main() {}
