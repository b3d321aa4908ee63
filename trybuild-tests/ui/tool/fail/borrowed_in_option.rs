use mcp_core::mcp_tool;

/// Greet someone, maybe.
#[mcp_tool]
async fn greet(who: Option<&str>) -> String {
    who.unwrap_or("world").to_owned()
}

fn main() {
    let _ = greet::tool();
}
