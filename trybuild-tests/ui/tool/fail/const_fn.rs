use mcp_core::mcp_tool;

/// The answer.
#[mcp_tool]
const fn answer() -> &'static str {
    "42"
}

fn main() {
    let _ = answer::tool();
}
