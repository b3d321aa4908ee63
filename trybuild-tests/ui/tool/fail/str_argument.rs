use mcp_core::mcp_tool;

/// Echo the input back.
#[mcp_tool]
async fn echo(text: &str) -> String {
    text.to_owned()
}

fn main() {
    let _ = echo::tool();
}
