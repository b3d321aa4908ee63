//! The server's name when the builder was given none, and
//! [`server_info!`](crate::server_info): the calling crate's name and version.

use std::sync::Once;

use crate::protocol::Implementation;

/// The calling crate's name and version (`CARGO_PKG_NAME`,
/// `CARGO_PKG_VERSION`, read by Cargo where the macro is written) as an
/// [`Implementation`](crate::protocol::Implementation), for
/// [`McpServerBuilder::implementation`](crate::McpServerBuilder::implementation).
///
/// A function cannot know which crate called it, so
/// [`McpServer::builder`](crate::McpServer::builder) alone reports
/// `mcp-core <version>` (and [`build`](crate::McpServerBuilder::build) says
/// so once on stderr); this macro expands in your crate and names it:
///
/// ```
/// use mcp_core::McpServer;
///
/// let server = McpServer::builder()
///     .implementation(mcp_core::server_info!())
///     .build()
///     .expect("server");
/// // Doctests are their own crate, named after the package they test.
/// assert_eq!(server.info().name, env!("CARGO_PKG_NAME"));
/// assert_eq!(server.info().version, env!("CARGO_PKG_VERSION"));
/// ```
#[macro_export]
macro_rules! server_info {
    () => {
        $crate::protocol::Implementation::new(
            ::core::env!("CARGO_PKG_NAME"),
            ::core::env!("CARGO_PKG_VERSION"),
        )
    };
}

/// The line [`unnamed`] writes on stderr.
pub(crate) const UNNAMED_WARNING: &str = "mcp-core: warning: this MCP server was built without \
    `.server_info(..)`, so it reports itself to clients as `mcp-core` (the framework, not your \
    server); name it with `McpServer::builder().implementation(mcp_core::server_info!())` (your \
    crate's name and version) or `.server_info(\"name\", \"1.0.0\")`";

/// The info of a server built without any: the framework's own
/// ([`Implementation::default`]), after one warning per process naming the
/// fix: a `tracing` event when a subscriber is installed, else a line on
/// stderr (stdout may be the stdio transport's protocol stream).
pub(crate) fn unnamed() -> Implementation {
    static WARNED: Once = Once::new();
    // Through `tracing` when the application installed a subscriber; with
    // none it would be lost, so it goes straight to stderr.
    WARNED.call_once(|| {
        if tracing::dispatcher::has_been_set() {
            tracing::warn!(target: "mcp_core", "{UNNAMED_WARNING}");
        } else {
            eprintln!("{UNNAMED_WARNING}");
        }
    });
    Implementation::default()
}
