use mcp_core::mcp_tool;

/// What to look for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Search {
    query: String,
}

/// Two whole arguments objects.
#[mcp_tool]
fn search(#[args] a: Search, #[args] b: Search) -> String {
    a.query + &b.query
}

fn main() {
    let _ = search::tool();
}
