//! A resource function's `Result` takes any `Display` error, as a tool's
//! does: `String`, an own error type, a boxed error (the shape of
//! `anyhow::Result`), and `ErrorObject`.

use mcp_core::{mcp_resource, McpServer, protocol::ErrorObject};

/// An error with only `Display`.
#[derive(Debug)]
struct Locked;

impl std::fmt::Display for Locked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("locked")
    }
}

/// A `String` error.
#[mcp_resource(uri = "notes://string")]
fn string_error() -> Result<String, String> {
    Err("no notes".to_owned())
}

/// An own error type.
#[mcp_resource(uri = "notes://own")]
async fn own_error() -> Result<Vec<u8>, Locked> {
    Err(Locked)
}

/// A boxed error.
#[mcp_resource(uri = "notes://{day}")]
async fn boxed_error(day: u32) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    Err(format!("no notes for day {day}").into())
}

/// A JSON-RPC error.
#[mcp_resource(uri = "notes://coded")]
fn coded_error() -> Result<String, ErrorObject> {
    Err(ErrorObject::invalid_params("bad"))
}

fn main() {
    let _ = McpServer::builder()
        .resource(string_error::resource())
        .resource(own_error::resource())
        .resource(boxed_error::resource())
        .resource(coded_error::resource())
        .build();
}
