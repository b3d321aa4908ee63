//! Everything that differs between the eras, in one place: `initialize`
//! and `ping` (legacy), `server/discover` and removed methods (2026-07-28),
//! the decoration of modern results, log thresholds, and the channel a
//! handler's questions travel on (real requests on a legacy session,
//! `input_required` round trips on 2026-07-28).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::outcome::{Answer, Stop};
use super::request_facts::RequestFacts;
use crate::context::interrupt::{Channel, Interrupt};
use crate::protocol::meta::meta_keys;
use crate::protocol::{
    negotiate_version, CacheHint, ClientCapabilities, ClientInfo, Era, ErrorObject, Implementation,
    LoggingLevel, ServerCapabilities, MODERN_PROTOCOL_VERSIONS, REMOVED_METHODS,
};
use crate::session::Session;

/// What the lifecycle stage answers from: who the server is, what it
/// offers, and the settings of the eras' own methods.
pub(crate) struct Lifecycle {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: ServerCapabilities,
    /// The same, as `initialize` and `server/discover` send it.
    pub(crate) capabilities_json: Value,
    pub(crate) server_info_json: Arc<Value>,
    /// The same, serialized once: written verbatim into typed results.
    pub(crate) server_info_raw: Arc<super::encode::ServerInfoRaw>,
    pub(crate) discover_cache: CacheHint,
    pub(crate) logging: bool,
    /// How long a client has to answer a server→client request (legacy).
    pub(crate) client_request_timeout: std::time::Duration,
}

impl Lifecycle {
    /// Answers the methods that need no handler and no registration for
    /// their era (`initialize`, `ping`, `server/discover`, removed methods);
    /// `None` for everything else.
    #[inline]
    pub(crate) fn answer(
        &self,
        era: &Era,
        method: &str,
        params: &Map<String, Value>,
        session: &Session,
    ) -> Option<Result<Value, ErrorObject>> {
        match (era, method) {
            (Era::Legacy, "initialize") => Some(self.initialize(params, session)),
            (Era::Legacy, "ping") => Some(Ok(Value::Object(Map::new()))),
            (Era::Legacy, "server/discover") => Some(Err(ErrorObject::invalid_params(format!(
                "server/discover requires `_meta[\"{}\"]`",
                meta_keys::PROTOCOL_VERSION
            )))),
            (Era::Modern(_), m) if REMOVED_METHODS.contains(&m) => {
                Some(Err(ErrorObject::method_not_found(m)))
            }
            (Era::Modern(_), "server/discover") => Some(Ok(self.discover())),
            _ => None,
        }
    }

    /// `initialize` (legacy): negotiates the version and records the client
    /// in its session.
    fn initialize(
        &self,
        params: &Map<String, Value>,
        session: &Session,
    ) -> Result<Value, ErrorObject> {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = negotiate_version(requested);
        let capabilities = match params.get("capabilities") {
            Some(caps @ Value::Object(_)) => {
                serde_json::from_value::<ClientCapabilities>(caps.clone()).map_err(|e| {
                    ErrorObject::invalid_params(format!("initialize: invalid capabilities: {e}"))
                })?
            }
            None | Some(Value::Null) => ClientCapabilities::default(),
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "initialize: `capabilities` must be an object",
                ))
            }
        };
        let implementation = params
            .get("clientInfo")
            .and_then(|v| serde_json::from_value::<Implementation>(v.clone()).ok());
        session.set_client(ClientInfo {
            protocol_version: version,
            capabilities,
            implementation,
        });
        let mut result = Map::with_capacity(4);
        result.insert("protocolVersion".into(), Value::String(version.to_owned()));
        result.insert("capabilities".into(), self.capabilities_json.clone());
        result.insert("serverInfo".into(), (*self.server_info_json).clone());
        if let Some(instructions) = &self.instructions {
            result.insert("instructions".into(), Value::String(instructions.clone()));
        }
        Ok(Value::Object(result))
    }

    /// `server/discover` (2026-07-28).
    fn discover(&self) -> Value {
        let mut result = Map::new();
        result.insert(
            "supportedVersions".into(),
            Value::from(MODERN_PROTOCOL_VERSIONS.to_vec()),
        );
        result.insert("capabilities".into(), self.capabilities_json.clone());
        if let Some(instructions) = &self.instructions {
            result.insert("instructions".into(), Value::String(instructions.clone()));
        }
        self.discover_cache.apply(&mut result);
        self.decorate(&mut result);
        Value::Object(result)
    }

    /// A method's JSON result as the answer (a 2026-07-28 result
    /// decorated).
    pub(crate) fn json_answer(
        &self,
        scope: &RequestFacts,
        json: Result<Value, Stop>,
    ) -> Result<Answer, Stop> {
        let mut json = json?;
        if let (true, Value::Object(map)) = (scope.is_modern(), &mut json) {
            self.decorate(map);
        }
        Ok(Answer::Json(json))
    }

    /// Adds `resultType` (when absent) and `_meta` server info to a
    /// 2026-07-28 result.
    pub(crate) fn decorate(&self, result: &mut Map<String, Value>) {
        result
            .entry("resultType")
            .or_insert_with(|| Value::String("complete".into()));
        let meta = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(
                meta_keys::SERVER_INFO.into(),
                (*self.server_info_json).clone(),
            );
        }
    }

    /// What the client declared for this request, and the channel its
    /// handler's questions go out on.
    pub(crate) fn client_and_channel(
        &self,
        facts: &RequestFacts,
        interrupt: &Arc<Interrupt>,
    ) -> (Option<Arc<ClientInfo>>, Channel) {
        match &facts.era {
            Era::Legacy => (
                facts.session.client(),
                match &facts.ctx.outbound {
                    Some(outbound) => Channel::Legacy {
                        session: facts.session.clone(),
                        outbound: Arc::clone(outbound),
                        timeout: self.client_request_timeout,
                    },
                    None => Channel::None,
                },
            ),
            // Servers never send requests in this revision: questions
            // become `input_required` results answered on the retry.
            Era::Modern(meta) => (
                Some(Arc::clone(&meta.client)),
                Channel::RoundTrip(Arc::clone(interrupt)),
            ),
        }
    }

    /// The lowest log level a handler of this request may send; `None`
    /// when the server offers no logging or a modern request named none.
    pub(crate) fn log_threshold(&self, facts: &RequestFacts) -> Option<LoggingLevel> {
        if !self.logging {
            return None;
        }
        match &facts.era {
            Era::Legacy => Some(facts.session.log_level().unwrap_or(LoggingLevel::Debug)),
            Era::Modern(meta) => meta.log_level,
        }
    }
}
