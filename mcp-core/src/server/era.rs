//! The protocol era of one request: legacy (a session set up by
//! `initialize`) or stateless 2026-07-28 (everything in the request's
//! `_meta`). The era is read from each request; nothing is inferred from
//! earlier requests on the same connection.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::extras::LOG_LEVELS;
use crate::protocol::{ClientCapabilities, ClientInfo, ErrorObject, Implementation, RPC_ERRORS};

/// `_meta` keys of the 2026-07-28 revision.
pub mod meta_keys {
    /// The request's protocol version (required on modern requests).
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The request's client capabilities (required on modern requests).
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The client's implementation info (optional).
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The minimum log level for this request (optional, deprecated).
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// The server's implementation info, on every modern result.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// The listen request a notification belongs to.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
}

/// Stateless revisions this server serves per request.
pub const MODERN_PROTOCOL_VERSIONS: &[&str] = &["2026-07-28"];

/// Methods 2026-07-28 removed; a modern request for one is `-32601`.
pub const REMOVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// What a modern request declared in its `_meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModernMeta {
    /// The protocol version, capabilities (for this request only) and
    /// implementation info the request declared.
    pub client: Arc<ClientInfo>,
    /// The requested log level, if sent.
    pub log_level: Option<String>,
}

/// How a request is served.
#[derive(Debug, Clone, PartialEq)]
pub enum Era {
    /// 2024-11-05 … 2025-11-25: `initialize` and a session.
    Legacy,
    /// 2026-07-28: stateless, per-request `_meta`.
    Modern(ModernMeta),
}

/// Reads the era claim of a request's params: `None` without a modern
/// protocol version in `_meta`; otherwise the validated metadata or the
/// error to answer (`-32602` malformed, `-32022` unsupported version).
///
/// # Errors
/// See above.
pub fn modern_claim(params: &Map<String, Value>) -> Option<Result<ModernMeta, ErrorObject>> {
    let meta = params.get("_meta")?.as_object()?;
    let version = meta.get(meta_keys::PROTOCOL_VERSION)?;
    Some(validate(meta, version))
}

fn validate(meta: &Map<String, Value>, version: &Value) -> Result<ModernMeta, ErrorObject> {
    let Some(version) = version.as_str() else {
        return Err(ErrorObject::invalid_params(format!(
            "`_meta[\"{}\"]` must be a string",
            meta_keys::PROTOCOL_VERSION
        )));
    };
    let Some(version) = MODERN_PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == version)
        .copied()
    else {
        return Err(unsupported_version(version));
    };
    let client_info = meta.get(meta_keys::CLIENT_INFO);
    let capabilities = match meta.get(meta_keys::CLIENT_CAPABILITIES) {
        // A client that declares nothing (the common case for simple
        // clients): one shared description, nothing to deserialize.
        Some(Value::Object(members)) if members.is_empty() && client_info.is_none() => {
            static NOTHING_DECLARED: std::sync::OnceLock<Arc<ClientInfo>> =
                std::sync::OnceLock::new();
            let client = NOTHING_DECLARED.get_or_init(|| {
                Arc::new(ClientInfo {
                    protocol_version: version,
                    capabilities: ClientCapabilities::default(),
                    implementation: None,
                })
            });
            if client.protocol_version == version {
                return Ok(ModernMeta {
                    client: Arc::clone(client),
                    log_level: log_level(meta)?,
                });
            }
            ClientCapabilities::default()
        }
        Some(caps @ Value::Object(members)) => {
            for (name, value) in members {
                if !value.is_object() {
                    return Err(ErrorObject::invalid_params(format!(
                        "`_meta[\"{}\"].{name}` must be an object",
                        meta_keys::CLIENT_CAPABILITIES
                    )));
                }
            }
            // Deserialized from the borrowed value: one copy, not two.
            ClientCapabilities::deserialize(caps).map_err(|e| {
                ErrorObject::invalid_params(format!(
                    "`_meta[\"{}\"]` is malformed: {e}",
                    meta_keys::CLIENT_CAPABILITIES
                ))
            })?
        }
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "`_meta[\"{}\"]` must be an object",
                meta_keys::CLIENT_CAPABILITIES
            )))
        }
        None => {
            return Err(ErrorObject::invalid_params(format!(
                "missing required `_meta[\"{}\"]`",
                meta_keys::CLIENT_CAPABILITIES
            )))
        }
    };
    let client_info = client_info.and_then(|v| Implementation::deserialize(v).ok());
    Ok(ModernMeta {
        client: Arc::new(ClientInfo {
            protocol_version: version,
            capabilities,
            implementation: client_info,
        }),
        log_level: log_level(meta)?,
    })
}

/// The request's `_meta` log level, checked.
fn log_level(meta: &Map<String, Value>) -> Result<Option<String>, ErrorObject> {
    match meta.get(meta_keys::LOG_LEVEL) {
        None => Ok(None),
        Some(Value::String(level)) if LOG_LEVELS.contains(&level.as_str()) => {
            Ok(Some(level.clone()))
        }
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "invalid log level {other}; expected one of {}",
            LOG_LEVELS.join(", ")
        ))),
    }
}

/// `-32022` naming the supported versions.
pub fn unsupported_version(requested: &str) -> ErrorObject {
    // The same list `server/discover` advertises: a per-request `_meta`
    // claim can only name a stateless revision (legacy ones go through
    // `initialize`).
    let supported = MODERN_PROTOCOL_VERSIONS;
    ErrorObject::new(
        RPC_ERRORS::UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {requested}"),
    )
    .with_data(json!({ "supported": supported, "requested": requested }))
}

/// `-32021`: the request needs a client capability it did not declare.
pub fn missing_capability(required: Value) -> ErrorObject {
    ErrorObject::new(
        RPC_ERRORS::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with_data(json!({ "requiredCapabilities": required }))
}

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

    pub(crate) fn apply(self, result: &mut Map<String, Value>) {
        result.insert("ttlMs".into(), Value::from(self.ttl_ms));
        result.insert("cacheScope".into(), json!(self.scope));
    }
}

/// Adds `resultType` (when absent) and `_meta.serverInfo` to a modern result.
pub(crate) fn decorate(result: &mut Map<String, Value>, server_info: &Value) {
    result
        .entry("resultType")
        .or_insert_with(|| Value::String("complete".into()));
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert(meta_keys::SERVER_INFO.into(), server_info.clone());
    }
}
