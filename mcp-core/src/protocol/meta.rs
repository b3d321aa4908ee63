//! What a 2026-07-28 request carries in its `_meta`: the reserved keys,
//! reading and validating them, and the era a request is served in. The
//! era is read from each request; nothing is inferred from earlier
//! requests on the same connection.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::capabilities::ClientCapabilities;
use super::jsonrpc::{ErrorCode, ErrorObject};
use super::lifecycle::{ClientInfo, Implementation};
use super::logging::LoggingLevel;
use super::version::MODERN_PROTOCOL_VERSIONS;

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

/// The keys above under the name the rest of the crate reads them by.
pub(crate) mod meta_keys {
    pub(crate) use super::{
        CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION, SERVER_INFO, SUBSCRIPTION_ID,
    };
}

/// What a modern request declared in its `_meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModernMeta {
    /// The protocol version, capabilities (for this request only) and
    /// implementation info the request declared.
    pub client: Arc<ClientInfo>,
    /// The requested log level, if sent.
    pub log_level: Option<LoggingLevel>,
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
fn log_level(meta: &Map<String, Value>) -> Result<Option<LoggingLevel>, ErrorObject> {
    match meta.get(meta_keys::LOG_LEVEL) {
        None => Ok(None),
        Some(other) => match other.as_str().and_then(LoggingLevel::from_name) {
            Some(level) => Ok(Some(level)),
            None => Err(ErrorObject::invalid_params(format!(
                "invalid log level {other}; expected one of {}",
                LoggingLevel::names()
            ))),
        },
    }
}

/// `-32022` naming the supported versions.
pub fn unsupported_version(requested: &str) -> ErrorObject {
    // The same list `server/discover` advertises: a per-request `_meta`
    // claim can only name a stateless revision (legacy ones go through
    // `initialize`).
    let supported = MODERN_PROTOCOL_VERSIONS;
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {requested}"),
    )
    .with_data(json!({ "supported": supported, "requested": requested }))
}

/// `-32021`: the request needs a client capability it did not declare.
pub fn missing_capability(required: Value) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with_data(json!({ "requiredCapabilities": required }))
}
