//! Fixed resources with every return shape, async and sync.

use mcp_core::{mcp_resource, McpServer, protocol::{ErrorObject, ResourceContents}};

/// Owned text.
#[mcp_resource(uri = "notes://owned", mime_type = "text/markdown")]
async fn owned() -> String {
    "# Notes".to_owned()
}

/// Static text.
#[mcp_resource(uri = "notes://static", name = "static-notes", title = "Static notes")]
fn borrowed() -> &'static str {
    "notes"
}

/// Bytes.
#[mcp_resource(uri = "blob://one", mime_type = "application/octet-stream")]
fn bytes() -> Vec<u8> {
    vec![0, 1, 2]
}

/// One contents value.
#[mcp_resource(uri = "notes://one", description = "Overrides the doc comment")]
fn one() -> ResourceContents {
    ResourceContents::text("notes://one", "one")
}

/// Several contents values.
#[mcp_resource(uri = "notes://many")]
fn many() -> Vec<ResourceContents> {
    vec![
        ResourceContents::text("", "a"),
        ResourceContents::blob("", &[1]),
    ]
}

/// A fallible read with a JSON-RPC error.
#[mcp_resource(uri = "notes://fallible")]
async fn fallible() -> Result<String, ErrorObject> {
    Err(ErrorObject::invalid_params("nope"))
}

/// A fallible read with an `std::error::Error`.
#[mcp_resource(uri = "file:///etc/motd")]
async fn motd() -> Result<String, std::io::Error> {
    std::fs::read_to_string("/nonexistent/motd")
}

fn main() {
    let server = McpServer::builder()
        .resource(owned::resource())
        .resource(borrowed::resource())
        .resource(bytes::resource())
        .resource(one::resource())
        .resource(many::resource())
        .resource(fallible::resource())
        .resource(motd::resource())
        .build()
        .expect("valid server");
    let _ = server;
    assert!(!owned::resource().is_template());
}
