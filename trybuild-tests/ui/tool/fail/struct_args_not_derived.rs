use mcp_core::mcp_tool;

/// Arguments of `search`, with neither derive.
struct SearchArgs {
    query: String,
}

/// Search.
#[mcp_tool]
async fn search(args: SearchArgs) -> String {
    args.query
}

fn main() {
    let _ = search::tool();
}
