//! What a 2026-07-28 request carries in its `_meta`: the reserved keys,
//! reading and validating them, and the era a request is served in. The
//! era is read from each request; nothing is inferred from earlier
//! requests on the same connection.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::{to_raw_value, RawValue};
use serde_json::{json, Map, Value};

use super::capabilities::ClientCapabilities;
use super::jsonrpc::{ErrorCode, ErrorObject};
use super::lifecycle::ClientInfo;
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
/// (Requests decoded from bytes take a quicker way, reading `_meta` while
/// they are parsed; this one serves messages handed over as JSON values.)
///
/// # Errors
/// See above.
pub fn modern_claim(params: &Map<String, Value>) -> Option<Result<ModernMeta, ErrorObject>> {
    let meta = params.get("_meta")?.as_object()?;
    let version = meta.get(meta_keys::PROTOCOL_VERSION)?;
    let raw = |key: &str| meta.get(key).and_then(|v| to_raw_value(v).ok());
    let caps = raw(meta_keys::CLIENT_CAPABILITIES);
    let info = raw(meta_keys::CLIENT_INFO);
    Some(validate(
        version.as_str(),
        caps.as_deref(),
        info.as_deref(),
        meta.get(meta_keys::LOG_LEVEL),
    ))
}

/// A modern claim read while a request was decoded: the version as sent
/// (the HTTP transport compares it with the request's headers) and the
/// validated metadata or the error to answer.
#[derive(Debug, Clone)]
pub(crate) struct MetaClaim {
    /// `_meta["io.modelcontextprotocol/protocolVersion"]` as sent.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) version: ClaimedVersion,
    /// What [`modern_claim`] would have answered.
    pub(crate) meta: Result<ModernMeta, ErrorObject>,
}

/// The protocol version a `_meta` claims (read by the HTTP transport).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
#[derive(Debug, Clone)]
pub(crate) enum ClaimedVersion {
    /// One this crate serves (no copy of the text is kept).
    Supported(&'static str),
    /// Anything else, as sent.
    Other(Value),
}

impl ClaimedVersion {
    /// The version, when it is a string.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Self::Supported(v) => Some(v),
            Self::Other(v) => v.as_str(),
        }
    }
}

/// A request's `_meta` object taken apart while it is parsed: the reserved
/// keys are read as borrowed text (the client's declaration is parsed once
/// per distinct text and thread, see [`declared_client`]); every other
/// member is kept as JSON for the handler's context.
#[derive(Debug)]
pub(crate) struct DecodedMeta {
    /// Set when `_meta` carries a protocol version (a modern request).
    pub(crate) claim: Option<MetaClaim>,
    /// The other members (all of them, for a legacy request).
    pub(crate) rest: Map<String, Value>,
}

impl<'de> Deserialize<'de> for DecodedMeta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MetaVisitor)
    }
}

struct MetaVisitor;

impl<'de> Visitor<'de> for MetaVisitor {
    type Value = DecodedMeta;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a `_meta` object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DecodedMeta, A::Error> {
        // Borrowed: read as text below, with no copy when it has no escapes.
        let mut version: Option<&'de RawValue> = None;
        let mut caps: Option<&'de RawValue> = None;
        let mut info: Option<&'de RawValue> = None;
        let mut level: Option<Value> = None;
        let mut rest = Map::new();
        // A repeated key: the last one counts, as in a parsed JSON object.
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match &*key.0 {
                meta_keys::PROTOCOL_VERSION => version = Some(map.next_value()?),
                meta_keys::CLIENT_CAPABILITIES => caps = Some(map.next_value()?),
                meta_keys::CLIENT_INFO => info = Some(map.next_value()?),
                meta_keys::LOG_LEVEL => level = Some(map.next_value()?),
                _ => {
                    let value = map.next_value()?;
                    rest.insert(key.0.into_owned(), value);
                }
            }
        }
        let Some(version) = version else {
            // Not a modern request: every member stays as it was sent.
            let mut put = |key: &str, raw: Option<&RawValue>| -> Result<(), A::Error> {
                if let Some(raw) = raw {
                    let value = serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
                    rest.insert(key.to_owned(), value);
                }
                Ok(())
            };
            put(meta_keys::CLIENT_CAPABILITIES, caps)?;
            put(meta_keys::CLIENT_INFO, info)?;
            if let Some(level) = level {
                rest.insert(meta_keys::LOG_LEVEL.to_owned(), level);
            }
            return Ok(DecodedMeta { claim: None, rest });
        };
        let text = version_text(version);
        let meta = validate(text.as_deref(), caps, info, level.as_ref());
        let version = match &meta {
            Ok(meta) => ClaimedVersion::Supported(meta.client.protocol_version),
            // The text was read as valid JSON already.
            Err(_) => {
                ClaimedVersion::Other(serde_json::from_str(version.get()).unwrap_or_default())
            }
        };
        Ok(DecodedMeta {
            claim: Some(MetaClaim { version, meta }),
            rest,
        })
    }
}

impl DecodedMeta {
    /// Decodes a `_meta` object from its text. A client sends the same
    /// `_meta` on every request unless it asks for progress, so the last
    /// valid modern one without other members is kept per thread and
    /// reused when the text is the same.
    ///
    /// # Errors
    /// The text is not an object.
    pub(crate) fn from_raw(raw: &RawValue) -> Result<Self, serde_json::Error> {
        let text = raw.get();
        let hit = LAST_META.with(|last| {
            last.borrow()
                .as_ref()
                .and_then(|(seen, claim)| (**seen == *text).then(|| claim.clone()))
        });
        if let Some(claim) = hit {
            return Ok(Self {
                claim: Some(claim),
                rest: Map::new(),
            });
        }
        let decoded: Self = serde_json::from_str(text)?;
        if let Some(claim @ MetaClaim { meta: Ok(_), .. }) = &decoded.claim {
            if decoded.rest.is_empty() {
                let claim = claim.clone();
                LAST_META.with(|last| *last.borrow_mut() = Some((text.into(), claim)));
            }
        }
        Ok(decoded)
    }
}

thread_local! {
    /// The last `_meta` text [`DecodedMeta::from_raw`] kept, and its claim.
    static LAST_META: RefCell<Option<(Box<str>, MetaClaim)>> = const { RefCell::new(None) };
}

/// An object key, borrowed from the input unless it has escapes.
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

fn validate(
    version: Option<&str>,
    caps: Option<&RawValue>,
    info: Option<&RawValue>,
    level: Option<&Value>,
) -> Result<ModernMeta, ErrorObject> {
    let Some(version) = version else {
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
    let Some(caps) = caps else {
        return Err(ErrorObject::invalid_params(format!(
            "missing required `_meta[\"{}\"]`",
            meta_keys::CLIENT_CAPABILITIES
        )));
    };
    Ok(ModernMeta {
        client: declared_client(version, caps, info)?,
        log_level: log_level(level)?,
    })
}

/// The protocol version member as text: borrowed from the input when it
/// is a string without escapes, decoded when it has some, `None` when it
/// is not a string.
fn version_text(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<Key<'_>>(raw.get())
        .ok()
        .map(|key| key.0)
}

/// The last client declaration parsed on this thread, by its text.
struct Declared {
    version: &'static str,
    caps: Box<str>,
    info: Option<Box<str>>,
    client: Arc<ClientInfo>,
}

thread_local! {
    static LAST_DECLARED: RefCell<Option<Declared>> = const { RefCell::new(None) };
}

/// The client a modern request declares. A client sends the same
/// capabilities and `clientInfo` on every request, so the declaration
/// parsed last on this thread is reused when the text is the same: a
/// comparison of a few dozen bytes instead of building and dropping two
/// objects per call.
fn declared_client(
    version: &'static str,
    caps: &RawValue,
    info: Option<&RawValue>,
) -> Result<Arc<ClientInfo>, ErrorObject> {
    let (caps, info) = (caps.get(), info.map(RawValue::get));
    let hit = LAST_DECLARED.with(|last| {
        last.borrow().as_ref().and_then(|d| {
            (d.version == version && *d.caps == *caps && d.info.as_deref() == info)
                .then(|| Arc::clone(&d.client))
        })
    });
    if let Some(client) = hit {
        return Ok(client);
    }
    let client = Arc::new(ClientInfo {
        protocol_version: version,
        capabilities: parse_capabilities(caps)?,
        implementation: info.and_then(|text| serde_json::from_str(text).ok()),
    });
    LAST_DECLARED.with(|last| {
        *last.borrow_mut() = Some(Declared {
            version,
            caps: caps.into(),
            info: info.map(Into::into),
            client: Arc::clone(&client),
        });
    });
    Ok(client)
}

/// `clientCapabilities` checked (an object of objects) and read.
fn parse_capabilities(text: &str) -> Result<ClientCapabilities, ErrorObject> {
    let not_an_object = || {
        ErrorObject::invalid_params(format!(
            "`_meta[\"{}\"]` must be an object",
            meta_keys::CLIENT_CAPABILITIES
        ))
    };
    let caps: Value = serde_json::from_str(text).map_err(|_| not_an_object())?;
    let Value::Object(members) = &caps else {
        return Err(not_an_object());
    };
    for (name, value) in members {
        if !value.is_object() {
            return Err(ErrorObject::invalid_params(format!(
                "`_meta[\"{}\"].{name}` must be an object",
                meta_keys::CLIENT_CAPABILITIES
            )));
        }
    }
    ClientCapabilities::deserialize(&caps).map_err(|e| {
        ErrorObject::invalid_params(format!(
            "`_meta[\"{}\"]` is malformed: {e}",
            meta_keys::CLIENT_CAPABILITIES
        ))
    })
}

/// The request's `_meta` log level, checked.
fn log_level(level: Option<&Value>) -> Result<Option<LoggingLevel>, ErrorObject> {
    match level {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(version: &str) -> MetaClaim {
        let text = format!(
            r#"{{"{}":{version},"{}":{{}}}}"#,
            meta_keys::PROTOCOL_VERSION,
            meta_keys::CLIENT_CAPABILITIES
        );
        let decoded: DecodedMeta = serde_json::from_str(&text).expect("an object");
        decoded.claim.expect("a modern claim")
    }

    #[test]
    fn the_version_is_borrowed_unless_escaped_and_none_unless_a_string() {
        let plain = to_raw_value("2026-07-28").expect("json");
        assert!(matches!(
            version_text(&plain),
            Some(Cow::Borrowed("2026-07-28"))
        ));
        let escaped: Box<RawValue> =
            serde_json::from_str(r#""2026-07-\u0032\u0038""#).expect("json");
        assert_eq!(version_text(&escaped).as_deref(), Some("2026-07-28"));
        assert!(matches!(version_text(&escaped), Some(Cow::Owned(_))));
        let number = to_raw_value(&20260728).expect("json");
        assert_eq!(version_text(&number), None);
    }

    #[test]
    fn a_decoded_claim_judges_the_version_as_the_json_path_does() {
        let escaped = decode(r#""2026-07-\u0032\u0038""#);
        assert!(escaped.meta.is_ok());
        assert_eq!(escaped.version.as_str(), Some("2026-07-28"));

        let number = decode("20260728");
        let error = number.meta.expect_err("a number is refused");
        assert!(
            error.message.contains("must be a string"),
            "{}",
            error.message
        );
        assert!(matches!(
            number.version,
            ClaimedVersion::Other(Value::Number(_))
        ));

        let unknown = decode(r#""2099-01-01""#);
        assert!(unknown.meta.is_err());
        assert_eq!(unknown.version.as_str(), Some("2099-01-01"));

        // The same answers as for the message handed over as JSON.
        for version in [json!(20260728), json!("2099-01-01")] {
            let mut meta = Map::new();
            meta.insert(meta_keys::PROTOCOL_VERSION.into(), version);
            meta.insert(meta_keys::CLIENT_CAPABILITIES.into(), json!({}));
            let mut params = Map::new();
            params.insert("_meta".into(), Value::Object(meta));
            let text = serde_json::to_string(&params["_meta"]).expect("json");
            let decoded: DecodedMeta = serde_json::from_str(&text).expect("an object");
            let from_bytes = decoded.claim.expect("claim").meta.expect_err("refused");
            let from_json = modern_claim(&params).expect("claim").expect_err("refused");
            assert_eq!(from_bytes.code, from_json.code);
            assert_eq!(from_bytes.message, from_json.message);
        }
    }
}
