use mcp_core::mcp_tool;

/// Echo the input back.
#[mcp_tool]
async fn echo(#[arg(desc = "The text")] text: String) -> String {
    text
}

fn main() {
    let _ = echo::tool();
}
