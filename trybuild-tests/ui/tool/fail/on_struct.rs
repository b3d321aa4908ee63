use mcp_core::mcp_tool;

/// Not a function.
#[mcp_tool]
struct Echo {
    text: String,
}

fn main() {
    let _ = Echo { text: String::new() }.text;
}
