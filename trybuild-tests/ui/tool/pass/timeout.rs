use mcp_core::mcp_tool;

/// Renders.
#[mcp_tool(timeout = "1500ms")]
async fn render() -> String {
    String::new()
}

fn main() {
    assert_eq!(render::tool().timeout(), Some(std::time::Duration::from_millis(1500)));
}
