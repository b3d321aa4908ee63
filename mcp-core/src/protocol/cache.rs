//! Caching hints of 2026-07-28 results (`ttlMs`, `cacheScope`).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Who may reuse a cached result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: any client or gateway may reuse it.
    Public,
    /// Reuse only within the same authorization context.
    Private,
}

/// A caching hint (`ttlMs` + `cacheScope`) for 2026-07-28 results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// Freshness in milliseconds; 0 means immediately stale.
    pub ttl_ms: u64,
    /// Who may reuse it.
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint.
    pub const fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        Self { ttl_ms, scope }
    }

    /// Writes the hint into a result object.
    pub(crate) fn apply(self, result: &mut Map<String, Value>) {
        result.insert("ttlMs".into(), Value::from(self.ttl_ms));
        result.insert("cacheScope".into(), json!(self.scope));
    }
}
