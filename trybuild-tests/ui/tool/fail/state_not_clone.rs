use mcp_core::{mcp_tool, State};

struct Db;

/// Query the database.
#[mcp_tool]
async fn query(State(_db): State<Db>, sql: String) -> String {
    sql
}

fn main() {
    let _ = query::tool();
}
