//! What a client answers when the server asks: elicitation, sampling and
//! roots, in both eras (a legacy server→client request, or one entry of a
//! 2026-07-28 `input_required` result), and what it does with the server's
//! notifications.

use std::future::Future;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::handler::BoxFuture;
use crate::protocol::ErrorObject;

/// A callback answering one kind of server request: gets the request's
/// `params`, returns its result object (or a JSON-RPC error).
pub type ServerRequestHandler =
    Arc<dyn Fn(Value) -> BoxFuture<Result<Value, ErrorObject>> + Send + Sync>;

/// One callback answering every kind of server question (`method`,
/// `params`): how a proxy relays them to its own caller.
pub(crate) type Relay =
    Arc<dyn Fn(&'static str, Value) -> BoxFuture<Result<Value, ErrorObject>> + Send + Sync>;

/// A callback seeing one server notification: its `method` and `params`.
pub type OnNotification = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// The callbacks a client answers the server with. A capability is declared
/// exactly when its callback is set.
#[derive(Clone, Default)]
pub struct Handlers {
    pub(crate) elicitation: Option<ServerRequestHandler>,
    pub(crate) sampling: Option<ServerRequestHandler>,
    pub(crate) roots: Option<ServerRequestHandler>,
    pub(crate) notification: Option<OnNotification>,
    /// Answers elicitation, sampling and roots alike (set alone).
    pub(crate) relay: Option<Relay>,
}

fn boxed<F, Fut>(f: F) -> ServerRequestHandler
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    Arc::new(move |params| Box::pin(f(params)))
}

impl Handlers {
    /// Answers `elicitation/create` (form mode) with `f`: it gets the
    /// request (`message`, `requestedSchema`) and returns
    /// `{action, content?}`.
    #[must_use]
    pub fn elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    {
        self.elicitation = Some(boxed(f));
        self
    }

    /// Answers `sampling/createMessage` with `f`.
    #[must_use]
    pub fn sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    {
        self.sampling = Some(boxed(f));
        self
    }

    /// Answers `roots/list` with these roots (`{uri, name?}` objects).
    #[must_use]
    pub fn roots(mut self, roots: Vec<Value>) -> Self {
        let result = json!({ "roots": roots });
        self.roots = Some(Arc::new(move |_| {
            let result = result.clone();
            Box::pin(async move { Ok(result) })
        }));
        self
    }

    /// Calls `f` for every notification the server sends outside a
    /// request's own progress (list changes, resource updates, log messages).
    #[must_use]
    pub fn on_notification(mut self, f: impl Fn(&str, &Value) + Send + Sync + 'static) -> Self {
        self.notification = Some(Arc::new(f));
        self
    }

    /// The capabilities these callbacks declare.
    pub(crate) fn capabilities(&self) -> Map<String, Value> {
        let mut caps = Map::new();
        if self.elicitation.is_some() {
            caps.insert("elicitation".into(), json!({"form": {}}));
        }
        if self.sampling.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if self.roots.is_some() {
            caps.insert("roots".into(), json!({"listChanged": false}));
        }
        caps
    }

    /// The server-question methods a client may answer.
    const QUESTIONS: [&'static str; 3] =
        ["elicitation/create", "sampling/createMessage", "roots/list"];

    /// Handlers answering every question with `relay`.
    pub(crate) fn relaying(relay: Relay) -> Self {
        Self {
            relay: Some(relay),
            ..Self::default()
        }
    }

    /// The callback for a server request `method`, if any.
    fn for_method(&self, method: &str) -> Option<&ServerRequestHandler> {
        match method {
            "elicitation/create" => self.elicitation.as_ref(),
            "sampling/createMessage" => self.sampling.as_ref(),
            "roots/list" => self.roots.as_ref(),
            _ => None,
        }
    }

    /// True when these handlers answer `method`.
    pub(crate) fn answers(&self, method: &str) -> bool {
        self.for_method(method).is_some()
            || (self.relay.is_some() && Self::QUESTIONS.contains(&method))
    }

    /// Answers one server request: `ping` with `{}`, a known method with
    /// its callback, anything else with `-32601`.
    pub(crate) async fn answer(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        if method == "ping" {
            return Ok(json!({}));
        }
        if let Some(f) = self.for_method(method) {
            return f(params).await;
        }
        match (&self.relay, Self::QUESTIONS.iter().find(|q| **q == method)) {
            (Some(relay), Some(question)) => relay(question, params).await,
            _ => Err(ErrorObject::method_not_found(method)),
        }
    }
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("elicitation", &self.elicitation.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("roots", &self.roots.is_some())
            .field("notification", &self.notification.is_some())
            .field("relay", &self.relay.is_some())
            .finish()
    }
}
