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

    /// The hint of a result computed for one caller (a listing filtered by
    /// the caller's scopes or a tool's `visible` hook): the same freshness,
    /// but never `public`, since another caller may be shown other items.
    #[must_use]
    pub(crate) const fn per_caller(self) -> Self {
        Self {
            ttl_ms: self.ttl_ms,
            scope: CacheScope::Private,
        }
    }

    /// Writes the hint into a result object.
    pub(crate) fn apply(self, result: &mut Map<String, Value>) {
        result.insert("ttlMs".into(), Value::from(self.ttl_ms));
        result.insert("cacheScope".into(), json!(self.scope));
    }
}
