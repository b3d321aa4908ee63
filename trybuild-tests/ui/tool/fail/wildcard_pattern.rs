use mcp_core::mcp_tool;

/// Ignore the input.
#[mcp_tool]
async fn ignore(_: String) -> String {
    String::new()
}

fn main() {
    let _ = ignore::tool();
}
