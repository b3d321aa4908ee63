use mcp_core::{mcp_prompt, mcp_resource, mcp_tool};

/// Save a file.
#[mcp_tool(scopes = ["files:write", "files:read"])]
async fn save(path: String) -> String {
    path
}

/// No scope at all.
#[mcp_tool(scopes = [])]
async fn open(path: String) -> String {
    path
}

/// The audit log.
#[mcp_resource(uri = "audit://log", scopes = ["audit:read"])]
async fn audit() -> String {
    String::new()
}

/// An administrator's prompt.
#[mcp_prompt(scopes = ["admin"])]
async fn admin() -> String {
    "You assist the administrator.".to_owned()
}

fn main() {
    assert_eq!(save::tool().scopes(), ["files:write", "files:read"]);
    assert!(open::tool().scopes().is_empty());
    assert_eq!(audit::resource().scopes(), ["audit:read"]);
    assert_eq!(admin::prompt().scopes(), ["admin"]);
}
