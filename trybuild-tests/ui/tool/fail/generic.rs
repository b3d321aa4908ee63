use mcp_core::mcp_tool;

/// Echo anything.
#[mcp_tool]
async fn echo<T: ToString>(text: T) -> String {
    text.to_string()
}

fn main() {
    let _ = echo::tool();
}
