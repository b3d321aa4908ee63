//! Reading a catalog: from a connected [`Client`] (any server), or from an
//! [`McpServer`] in process (over an in-memory stream, through the same
//! pipeline a client meets).

use serde_json::Value;

use super::{Catalog, Surface};
use crate::client::{Client, ClientBuilder, ClientError, Protocol};
use crate::transport::stdio::{serve_io, StdioOptions};
use crate::McpServer;

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
    pub async fn of_server(
        server: &McpServer,
        revisions: &[&str],
    ) -> Result<Self, super::CatalogError> {
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
                .map_err(|e| super::CatalogError::Listing(format!("{revision}: {e}")))?;
            let surface = Self::collect(&client).await;
            client.close().await;
            handle.close();
            let surface =
                surface.map_err(|e| super::CatalogError::Listing(format!("{revision}: {e}")))?;
            catalog.revisions.insert((*revision).to_owned(), surface);
        }
        Ok(catalog)
    }
}

/// Every item of one paginated listing, as raw JSON; a listing the server
/// does not offer (`-32601`) is empty.
async fn list(client: &Client, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
    match client.list_all::<Value>(method, key).await {
        Err(e) if e.code() == Some(METHOD_NOT_FOUND) => Ok(Vec::new()),
        other => other,
    }
}
