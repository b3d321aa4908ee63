use mcp_core::mcp_tool;

/// Echo the input back.
#[mcp_tool]
async fn echo(text: impl Into<String>) -> String {
    text.into()
}

fn main() {
    let _ = echo::tool();
}
