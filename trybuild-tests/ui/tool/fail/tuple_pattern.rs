use mcp_core::mcp_tool;

/// Add a pair.
#[mcp_tool]
async fn add((a, b): (i64, i64)) -> String {
    (a + b).to_string()
}

fn main() {
    let _ = add::tool();
}
