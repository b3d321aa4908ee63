use mcp_core::mcp_tool;

/// What to look for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Search {
    query: String,
}

/// Paging.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Page {
    size: u32,
}

/// Search: `page` is a client argument, which `#[args]` leaves no room for.
#[mcp_tool]
fn search(#[args] args: Search, page: Page) -> String {
    format!("{}{}", args.query, page.size)
}

fn main() {
    let _ = search::tool();
}
