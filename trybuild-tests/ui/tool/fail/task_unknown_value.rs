use mcp_core::mcp_tool;

/// Renders.
#[mcp_tool(task = "sometimes")]
async fn render() -> String {
    String::new()
}

fn main() {}
