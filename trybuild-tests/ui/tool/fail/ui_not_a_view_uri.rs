use mcp_core::mcp_tool;

/// Draws a chart.
#[mcp_tool(ui = "https://example.com/chart.html")]
async fn chart() -> String {
    String::new()
}

/// Draws nothing.
#[mcp_tool(ui = "ui://")]
async fn empty() -> String {
    String::new()
}

fn main() {}
