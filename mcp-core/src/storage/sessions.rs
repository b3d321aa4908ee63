//! Where legacy session metadata is shared between the replicas of a
//! deployment: the [`SessionStore`] trait and its [`SessionRecord`].
//! Transport-neutral: a store (the `redis` feature's) depends on these
//! types only, never on the HTTP transport that saves and restores
//! sessions with them.

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a replica needs to serve a legacy session another one created.
///
/// Kept: the principal it is bound to, the negotiated protocol version,
/// the client's capabilities and implementation info, the
/// `logging/setLevel` level, and the URIs of its resource subscriptions.
/// Not kept (they live in the process that holds them): requests in
/// flight, server→client requests waiting for their answer (elicitation,
/// sampling, roots: such calls need the balancer's affinity), and the open
/// GET stream (the client opens a new one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionRecord {
    /// The principal the session is bound to.
    pub principal: Option<String>,
    /// The negotiated protocol version (`None` before `initialize`).
    pub protocol_version: Option<String>,
    /// The client's capabilities, as it declared them.
    pub capabilities: Option<Value>,
    /// The client's implementation info (`clientInfo`).
    pub client_info: Option<Value>,
    /// The `logging/setLevel` level, when set.
    pub log_level: Option<String>,
    /// The URIs of its resource subscriptions.
    pub subscriptions: Vec<String>,
}

/// Where legacy session metadata is shared (the `redis` feature's
/// `RedisSessionStore`, or your own); part of a
/// [`Storage`](super::Storage). Errors are strings for the log: a
/// failing store only costs the sessions their survival, never a request.
#[async_trait]
pub trait SessionStore: Send + Sync + 'static {
    /// Saves `record` under `id`, to expire after `ttl` unless saved again.
    ///
    /// # Errors
    /// The store failed.
    ///
    /// # Cancel safety
    /// Dropping the future may or may not have saved it.
    async fn save(&self, id: &str, record: &SessionRecord, ttl: Duration) -> Result<(), String>;

    /// The record under `id`, or `None`.
    ///
    /// # Errors
    /// The store failed.
    ///
    /// # Cancel safety
    /// Cancel-safe: nothing changes.
    async fn load(&self, id: &str) -> Result<Option<SessionRecord>, String>;

    /// Forgets `id` (the session was deleted).
    ///
    /// # Errors
    /// The store failed.
    ///
    /// # Cancel safety
    /// Dropping the future may or may not have removed it.
    async fn remove(&self, id: &str) -> Result<(), String>;
}
