use mcp_core::mcp_resource;

/// The project notes.
#[mcp_resource(uri = "notes://project")]
async fn notes(section: String) -> String {
    section
}

fn main() {
    let _ = notes::resource();
}
