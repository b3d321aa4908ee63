//! What a connection speaks: the negotiated revision and, on 2026-07-28,
//! the per-request `_meta` every message carries.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::wire;
use crate::protocol::meta::meta_keys;

/// The negotiated protocol: which revision every message speaks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Speaking {
    /// `MCP-Protocol-Version` (and, modern, the `_meta` claim).
    pub(crate) version: Option<Arc<str>>,
    /// The per-request `_meta` of the 2026-07-28 revision, when speaking it.
    pub(crate) modern_meta: Option<Map<String, Value>>,
    /// The same, serialized once ([`wire::fragment`]).
    pub(crate) fragment: Option<Arc<str>>,
}

impl Speaking {
    /// A legacy revision (after `initialize`).
    pub(crate) fn legacy(version: &str) -> Self {
        Self {
            version: Some(Arc::from(version)),
            modern_meta: None,
            fragment: None,
        }
    }

    /// A stateless revision with its per-request `_meta`.
    pub(crate) fn modern(version: &str, meta: Map<String, Value>) -> Self {
        Self {
            version: Some(Arc::from(version)),
            fragment: Some(Arc::from(wire::fragment(&meta))),
            modern_meta: Some(meta),
        }
    }
}

/// The per-request `_meta` of a 2026-07-28 request.
pub(crate) fn modern_meta(
    version: &str,
    capabilities: &Map<String, Value>,
    info: &Value,
) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(
        meta_keys::PROTOCOL_VERSION.into(),
        Value::String(version.into()),
    );
    meta.insert(
        meta_keys::CLIENT_CAPABILITIES.into(),
        Value::Object(capabilities.clone()),
    );
    meta.insert(meta_keys::CLIENT_INFO.into(), info.clone());
    meta
}
