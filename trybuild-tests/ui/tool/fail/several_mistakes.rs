//! Every attribute and signature mistake is reported in one build.
use mcp_core::mcp_tool;

/// Echo the input back.
#[mcp_tool(nmae = "echo", read_only = 1, title = "Echo", title = "Again")]
async fn echo(text: &str, (a, b): (u8, u8), #[arg(descripton = "x")] n: u8) -> String {
    format!("{text}{a}{b}{n}")
}

fn main() {
    let _ = echo::tool();
}
