use mcp_core::mcp_tool;

/// Weather.
#[mcp_tool(name = "get weather")]
async fn weather() -> String {
    "sunny".to_owned()
}

fn main() {
    let _ = weather::tool();
}
