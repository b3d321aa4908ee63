use mcp_core::mcp_tool;

/// What to look for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Search {
    query: String,
}

/// Search: the whole arguments object is `Search`, so `limit` has no place.
#[mcp_tool]
fn search(#[args] args: Search, limit: u32) -> String {
    format!("{}{limit}", args.query)
}

fn main() {
    let _ = search::tool();
}
