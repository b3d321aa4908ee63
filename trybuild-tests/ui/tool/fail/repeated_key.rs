use mcp_core::mcp_tool;

/// Echo the input back.
#[mcp_tool(name = "echo", title = "Echo", name = "say")]
async fn echo(text: String) -> String {
    text
}

fn main() {
    let _ = echo::tool();
}
