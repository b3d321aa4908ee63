use mcp_core::mcp_resource;

/// The project notes.
#[mcp_resource(mime_type = "text/markdown")]
async fn notes() -> String {
    "# Notes".to_owned()
}

fn main() {
    let _ = notes::resource();
}
