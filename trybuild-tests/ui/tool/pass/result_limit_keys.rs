use mcp_core::handler::ResultLimit;
use mcp_core::mcp_tool;

/// Cut over 50,000 bytes.
#[mcp_tool(max_result_bytes = 50_000)]
async fn cut() -> String {
    String::new()
}

/// Refused over 4 KiB.
#[mcp_tool(max_result_bytes = 4096, result_over_limit = "fail")]
async fn refused() -> String {
    String::new()
}

/// Whole, always.
#[mcp_tool(no_result_limit)]
async fn whole() -> String {
    String::new()
}

fn main() {
    let _ = (cut::tool(), refused::tool(), whole::tool());
    let _ = ResultLimit::bytes(50_000);
}
