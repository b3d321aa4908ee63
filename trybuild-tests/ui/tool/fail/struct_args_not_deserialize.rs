use mcp_core::mcp_tool;
use schemars::JsonSchema;

/// Arguments of `search`.
#[derive(JsonSchema)]
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
