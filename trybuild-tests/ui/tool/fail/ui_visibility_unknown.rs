use mcp_core::mcp_tool;

/// Refreshes the chart.
#[mcp_tool(ui = "ui://charts/view.html", ui_visibility = "user")]
async fn refresh() -> String {
    String::new()
}

/// A visibility with no view to be visible from.
#[mcp_tool(ui_visibility = "app")]
async fn orphan() -> String {
    String::new()
}

fn main() {}
