//! Questions for the client: elicitation forms ([`Elicitor`]) and the
//! requests a handler may send ([`InputRequest`]).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use crate::protocol::{ClientCapabilities, ErrorObject};

/// An explicit elicitation hook: receives `elicitation/create` params and
/// returns the client's result object.
#[async_trait]
pub trait Elicit: Send + Sync {
    /// Asks the client; returns its `ElicitResult` (`{action, content?}`).
    async fn elicit(&self, params: Value) -> Result<Value, ErrorObject>;

    /// Like [`elicit`](Self::elicit), under a caller-chosen key (the
    /// `inputRequests` key of a 2026-07-28 round trip). Defaults to `elicit`.
    async fn elicit_keyed(&self, key: &str, params: Value) -> Result<Value, ErrorObject> {
        let _ = key;
        self.elicit(params).await
    }
}

/// The answer to a form elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitResponse<T> {
    /// The user submitted the form; here is its typed content.
    Accept(T),
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

/// What came of asking the user to confirm
/// ([`InvokeContext::confirm`](crate::InvokeContext::confirm),
/// [`Elicitor::confirm`]).
///
/// Only [`Accepted`](Self::Accepted) is consent. The other outcomes are
/// kept apart so a tool can answer each as it should — a user who said no
/// is not a client that could not be asked — but a tool that acts only on
/// [`is_accepted`](Self::is_accepted) fails closed.
#[must_use = "a confirmation is consent only when it is `Accepted`"]
#[derive(Debug, Clone, PartialEq)]
pub enum Confirmation {
    /// The user accepted with `confirm: true`.
    Accepted,
    /// The user said no: declined the form, or submitted `confirm: false`.
    Declined,
    /// The user dismissed the question without choosing.
    Cancelled,
    /// The user was never asked, or no answer came back; the reason says why.
    CannotAsk(CannotAsk),
}

impl Confirmation {
    /// True only when the user accepted with `confirm: true`.
    #[must_use]
    pub fn is_accepted(&self) -> bool {
        matches!(self, Self::Accepted)
    }

    /// The outcome an `ElicitResult` (`{action, content?}`) of the
    /// confirmation form means.
    fn from_result(result: &Value) -> Self {
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => match result.pointer("/content/confirm").and_then(Value::as_bool) {
                Some(true) => Self::Accepted,
                Some(false) => Self::Declined,
                None => Self::CannotAsk(CannotAsk::NoAnswer(ErrorObject::invalid_params(
                    "the accepted confirmation has no boolean `confirm`",
                ))),
            },
            Some("decline") => Self::Declined,
            Some("cancel") => Self::Cancelled,
            _ => Self::CannotAsk(CannotAsk::NoAnswer(ErrorObject::invalid_params(
                "elicitation result has no valid action",
            ))),
        }
    }
}

/// Why the user could not be asked to confirm (see [`Confirmation::CannotAsk`]).
///
/// Its `Display` is a sentence a tool can hand to its caller.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CannotAsk {
    /// The client did not declare form elicitation (in `initialize`, or in
    /// the 2026-07-28 request's `clientCapabilities`).
    NotDeclared,
    /// A legacy (2025-era) request served over HTTP without sessions
    /// (`HttpOptions::stateless()`): the server does not know what the
    /// client declared and cannot route an answer back. Serve with
    /// sessions (the default) or send 2026-07-28 requests.
    SessionlessHttp,
    /// The client declared elicitation, but this legacy request has no
    /// channel to send it a request on (for HTTP: a POST that does not
    /// accept `text/event-stream`).
    NoChannel,
    /// A 2026-07-28 call that cannot end in `input_required`: a tool that
    /// declared it [never asks](crate::McpToolDef::never_asks), or a request
    /// (such as `completion/complete`) that has no round trips.
    NoRoundTrip,
    /// No client is known to this call: a
    /// [`detached`](crate::InvokeContext::detached) context,
    /// `McpServer::call_tool`, or a legacy request before `initialize`.
    NoClient,
    /// The question was sent but no usable answer came back: the client's
    /// error, a closed connection, a timeout, or an answer that does not
    /// fit the form.
    NoAnswer(ErrorObject),
}

impl fmt::Display for CannotAsk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotDeclared => f.write_str("the client does not support elicitation"),
            Self::SessionlessHttp => f.write_str(
                "this server serves legacy HTTP requests without sessions, so it cannot \
                 send the client a question; use sessions or the 2026-07-28 protocol",
            ),
            Self::NoChannel => {
                f.write_str("this request has no channel to send the client a question on")
            }
            Self::NoRoundTrip => f.write_str("this call cannot ask for input by round trip"),
            Self::NoClient => f.write_str("no client is known to this call"),
            Self::NoAnswer(e) => write!(f, "the client gave no usable answer: {}", e.message),
        }
    }
}

/// Asks the client's user for input (`elicitation/create`, form mode).
#[derive(Clone)]
pub struct Elicitor {
    inner: Arc<dyn Elicit>,
}

impl fmt::Debug for Elicitor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Elicitor")
    }
}

impl Elicitor {
    pub(crate) fn new(inner: Arc<dyn Elicit>) -> Self {
        Self { inner }
    }

    /// Sends raw `elicitation/create` params and returns the raw result.
    ///
    /// # Errors
    /// The client's error, or an internal error when the connection closed.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the question; on a legacy session its late answer is ignored.
    pub async fn raw(&self, params: Value) -> Result<Value, ErrorObject> {
        self.inner.elicit(params).await
    }

    /// Like [`raw`](Self::raw) under a key you choose: on a 2026-07-28
    /// request it is the `inputRequests` key the client answers under.
    ///
    /// # Errors
    /// The client's error, or an internal error when the connection closed.
    ///
    /// # Cancel safety
    /// As for [`raw`](Self::raw).
    pub async fn raw_keyed(&self, key: &str, params: Value) -> Result<Value, ErrorObject> {
        self.inner.elicit_keyed(key, params).await
    }

    /// Asks a yes/no question (a form with one required boolean `confirm`)
    /// and says what came of it: [`Confirmation::Accepted`] only when the
    /// user accepted with `confirm: true`; a client error, a closed
    /// connection or an answer that does not fit the form is
    /// [`CannotAsk::NoAnswer`]. Nothing here ends the call: the tool decides.
    ///
    /// On a 2026-07-28 request the question ends this round with
    /// `input_required` (the future never completes) and the call runs again
    /// on the retry, where the recorded answer is returned.
    ///
    /// # Cancel safety
    /// As for [`raw`](Self::raw).
    pub async fn confirm(&self, prompt: &str) -> Confirmation {
        let params = json!({
            "message": prompt,
            "requestedSchema": {
                "type": "object",
                "properties": { "confirm": { "type": "boolean", "title": "Confirm" } },
                "required": ["confirm"],
            },
        });
        match self.raw(params).await {
            Ok(result) => Confirmation::from_result(&result),
            Err(e) => Confirmation::CannotAsk(CannotAsk::NoAnswer(e)),
        }
    }

    /// Asks for a form whose schema comes from `T` and returns the typed answer.
    ///
    /// `T` should be a flat struct of strings, numbers, booleans and enums, as
    /// elicitation forms allow.
    ///
    /// # Errors
    /// The client's error; `-32602` when accepted content does not fit `T`.
    ///
    /// # Cancel safety
    /// As for [`raw`](Self::raw).
    pub async fn form<T: DeserializeOwned + JsonSchema>(
        &self,
        message: &str,
    ) -> Result<ElicitResponse<T>, ErrorObject> {
        let schema = crate::schema::schema_for::<T>();
        let params = json!({ "message": message, "requestedSchema": schema });
        let result = self.raw(params).await?;
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = result
                    .get("content")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                serde_json::from_value(content)
                    .map(ElicitResponse::Accept)
                    .map_err(|e| {
                        ErrorObject::invalid_params(format!(
                            "elicitation content does not fit: {e}"
                        ))
                    })
            }
            Some("decline") => Ok(ElicitResponse::Decline),
            Some("cancel") => Ok(ElicitResponse::Cancel),
            _ => Err(ErrorObject::invalid_params(
                "elicitation result has no valid action",
            )),
        }
    }
}

/// One question for the client: an `elicitation/create`,
/// `sampling/createMessage` or `roots/list` request under a key.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    /// The key the answer comes back under.
    pub key: String,
    /// The client method.
    pub method: String,
    /// Its params (`Value::Null` for none).
    pub params: Value,
}

impl InputRequest {
    /// An `elicitation/create` request (form or URL mode, by `params.mode`).
    pub fn elicit(key: impl Into<String>, params: Value) -> Self {
        Self {
            key: key.into(),
            method: "elicitation/create".into(),
            params,
        }
    }

    /// A `sampling/createMessage` request.
    pub fn sample(key: impl Into<String>, params: Value) -> Self {
        Self {
            key: key.into(),
            method: "sampling/createMessage".into(),
            params,
        }
    }

    /// A `roots/list` request.
    pub fn list_roots(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            method: "roots/list".into(),
            params: Value::Null,
        }
    }

    /// The client capability this request needs, as a capabilities object.
    pub(crate) fn required_capability(&self) -> Value {
        match self.method.as_str() {
            "sampling/createMessage" => json!({ "sampling": {} }),
            "roots/list" => json!({ "roots": {} }),
            _ if self.params.get("mode").and_then(Value::as_str) == Some("url") => {
                json!({ "elicitation": { "url": {} } })
            }
            _ => json!({ "elicitation": {} }),
        }
    }
}

/// True when `caps` (the client's) cover every member of `required`: each
/// required member is present; for `elicitation`, a `url` or `form` mode
/// the client announced (an empty object means form only).
pub(crate) fn covers(caps: &ClientCapabilities, required: &Value) -> bool {
    let Some(required) = required.as_object() else {
        return true;
    };
    required.iter().all(|(name, want)| match name.as_str() {
        "elicitation" => match &caps.elicitation {
            Some(Value::Object(have)) => {
                let wants_url = want.get("url").is_some();
                if wants_url {
                    have.contains_key("url")
                } else {
                    have.is_empty() || have.contains_key("form")
                }
            }
            _ => false,
        },
        "sampling" => caps.sampling.is_some(),
        "roots" => caps.roots.is_some(),
        other => caps.extra.contains_key(other),
    })
}
