use mcp_core::mcp_tool;

/// Weather.
#[mcp_tool]
async fn météo() -> String {
    "sunny".to_owned()
}

fn main() {
    let _ = météo::tool();
}
