use mcp_core::{mcp_tool, InvokeContext};

/// Echo the input back.
#[mcp_tool]
async fn echo(ctx: &InvokeContext, text: String, again: InvokeContext) -> String {
    let _ = (ctx, again);
    text
}

fn main() {
    let _ = echo::tool();
}
