//! [`Outbound`]: where server→client messages go.

use async_trait::async_trait;
use serde_json::Value;

/// Where server→client messages go (notifications and requests).
///
/// The stdio transport implements it over its output stream. Sending applies
/// back-pressure: when the client is not reading, `send` waits.
#[async_trait]
pub trait Outbound: Send + Sync {
    /// Sends one JSON-RPC message to the client. Returns false once the
    /// channel is closed.
    async fn send(&self, message: Value) -> bool;
}
