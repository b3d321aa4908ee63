use mcp_core::mcp_resource;

/// An error without `Display`.
#[derive(Debug)]
struct NotFound;

/// The project notes.
#[mcp_resource(uri = "notes://project")]
fn notes() -> Result<String, NotFound> {
    Err(NotFound)
}

fn main() {
    let _ = notes::resource();
}
