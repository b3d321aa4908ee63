//! Protocol revisions this server speaks and version negotiation.

/// The legacy (handshake-based) revisions this server can negotiate through
/// `initialize`, newest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The newest revision `initialize` can negotiate.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Picks the revision to answer an `initialize` with: the client's requested
/// version when this server supports it, otherwise [`LATEST_PROTOCOL_VERSION`].
///
/// A request for a revision without an `initialize` handshake (such as the
/// stateless 2026-07-28) also gets the newest legacy revision, never an echo.
///
/// ```
/// use mcp_core::protocol::negotiate_version;
/// assert_eq!(negotiate_version(Some("2025-06-18")), "2025-06-18");
/// assert_eq!(negotiate_version(Some("2026-07-28")), "2025-11-25");
/// assert_eq!(negotiate_version(None), "2025-11-25");
/// ```
pub fn negotiate_version(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| SUPPORTED_PROTOCOL_VERSIONS.iter().find(|v| **v == r))
        .copied()
        .unwrap_or(LATEST_PROTOCOL_VERSION)
}

/// Stateless revisions this server serves per request (their version is
/// named in each request's `_meta`, never negotiated).
pub const MODERN_PROTOCOL_VERSIONS: &[&str] = &["2026-07-28"];

/// Methods 2026-07-28 removed; a modern request for one is `-32601`.
pub const REMOVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// True when the legacy revision `version` is `since` or a later one,
/// both among [`SUPPORTED_PROTOCOL_VERSIONS`] (an unknown one is never
/// known to be late enough).
pub(crate) fn revision_at_least(version: &str, since: &str) -> bool {
    let at = |v: &str| SUPPORTED_PROTOCOL_VERSIONS.iter().position(|s| *s == v);
    // Newest first: a later revision has a smaller position.
    matches!((at(version), at(since)), (Some(v), Some(s)) if v <= s)
}
