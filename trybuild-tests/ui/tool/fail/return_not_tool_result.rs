use mcp_core::mcp_tool;

/// Add two numbers.
#[mcp_tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let _ = add::tool();
}
