use mcp_core::mcp_tool;

/// Echo the input back.
#[mcp_tool(name = 5)]
async fn echo(text: String) -> String {
    text
}

fn main() {
    let _ = echo::tool();
}
