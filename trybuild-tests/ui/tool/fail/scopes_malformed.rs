use mcp_core::mcp_tool;

/// Save a file: `scopes` is an array, not one string.
#[mcp_tool(scopes = "files:write")]
async fn save(path: String) -> String {
    path
}

/// Delete a file: a scope is one word, without spaces.
#[mcp_tool(scopes = ["files:write", "files delete", 3])]
async fn delete(path: String) -> String {
    path
}

fn main() {
    let _ = save::tool();
    let _ = delete::tool();
}
