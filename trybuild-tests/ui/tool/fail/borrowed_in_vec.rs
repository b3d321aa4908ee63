use mcp_core::mcp_tool;

/// Join words.
#[mcp_tool]
fn join(words: Vec<&str>) -> String {
    words.join(" ")
}

fn main() {
    let _ = join::tool();
}
