//! Reading a catalog: from a connected [`Client`] (any server), or from an
//! [`McpServer`] in process (over an in-memory stream, through the same
//! pipeline a client meets).

use std::collections::HashSet;

use serde_json::{json, Value};

use super::{Catalog, Surface};
use crate::client::{Client, ClientBuilder, ClientError, Protocol, RequestOptions};
use crate::transport::stdio::{serve_io, StdioOptions};
use crate::McpServer;

/// Listings longer than this many pages are refused (a server that never
/// stops paginating).
const MAX_PAGES: usize = 1000;

/// `-32601`: a listing the server does not offer.
const METHOD_NOT_FOUND: i64 = -32601;

impl Catalog {
    /// The surface `client` sees at its negotiated revision. Listings the
    /// server does not offer (no capability, or `-32601`) are empty.
    ///
    /// # Errors
    /// A transport failure or a listing of the wrong shape.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the listing requests.
    pub async fn collect(client: &Client) -> Result<Surface, ClientError> {
        Ok(Surface::from_listings(
            &list(client, "tools/list", "tools").await?,
            &list(client, "resources/list", "resources").await?,
            &list(client, "resources/templates/list", "resourceTemplates").await?,
            &list(client, "prompts/list", "prompts").await?,
        ))
    }

    /// The catalog of `server` at each of `revisions` (for instance
    /// [`DEFAULT_REVISIONS`](super::DEFAULT_REVISIONS)), read in process.
    ///
    /// # Errors
    /// A revision the server refuses, or a listing that fails.
    ///
    /// # Cancel safety
    /// Dropping the future stops the in-process connections.
    pub async fn of_server(server: &McpServer, revisions: &[&str]) -> Result<Self, String> {
        let mut catalog = Self::default();
        for revision in revisions {
            let (client_end, server_end) = tokio::io::duplex(1 << 20);
            let (server_read, server_write) = tokio::io::split(server_end);
            let handle = serve_io(
                server.clone(),
                server_read,
                server_write,
                StdioOptions::default(),
            );
            let (read, write) = tokio::io::split(client_end);
            let client = ClientBuilder::new("mcp-core-catalog", env!("CARGO_PKG_VERSION"))
                .protocol(Protocol::pinned(revision))
                .connect_io(read, write)
                .await
                .map_err(|e| format!("{revision}: {e}"))?;
            let surface = Self::collect(&client).await;
            client.close().await;
            handle.close();
            let surface = surface.map_err(|e| format!("{revision}: {e}"))?;
            catalog.revisions.insert((*revision).to_owned(), surface);
        }
        Ok(catalog)
    }
}

/// Every item of one paginated listing, as raw JSON.
async fn list(client: &Client, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => Value::Null,
        };
        let page = match client.request(method, params, &RequestOptions::new()).await {
            Ok(page) => page,
            // Not offered by this server: nothing listed.
            Err(e) if e.code() == Some(METHOD_NOT_FOUND) => return Ok(items),
            Err(e) => return Err(e),
        };
        match page.get(key) {
            Some(Value::Array(list)) => items.extend(list.iter().cloned()),
            None => {}
            Some(other) => {
                return Err(ClientError::protocol(format!(
                    "{method}: `{key}` is not an array: {other}"
                )))
            }
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if seen.insert(next.to_owned()) => cursor = Some(next.to_owned()),
            Some(_) => return Err(ClientError::protocol(format!("{method} repeated a cursor"))),
            None => return Ok(items),
        }
    }
    Err(ClientError::protocol(format!(
        "{method} has more than {MAX_PAGES} pages"
    )))
}
