//! State of the optional server features: logging (`logging/setLevel`,
//! `notifications/message`), argument completion (`completion/complete`)
//! and resource subscriptions (`resources/subscribe`, `subscriptions/listen`
//! with `resourceSubscriptions`, `notifications/resources/updated`).

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{json, Map, Value};

use crate::boxed::BoxFuture;
use crate::context::{InvokeContext, Outbound};
use crate::protocol::{self, ErrorObject};
use crate::session::Session;

/// What `completion/complete` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionRequest {
    /// `"ref/prompt"` or `"ref/resource"`.
    pub ref_type: String,
    /// The prompt name or the resource (template) URI.
    pub ref_name: String,
    /// The argument being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Values of the other arguments, when the client sent them.
    pub context: Map<String, Value>,
}

pub(crate) type Completer = Arc<
    dyn Fn(CompletionRequest, InvokeContext) -> BoxFuture<Result<Vec<String>, ErrorObject>>
        + Send
        + Sync,
>;

/// Wraps a user completion function.
pub(crate) fn completer<F, Fut>(f: F) -> Completer
where
    F: Fn(CompletionRequest, InvokeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<String>, ErrorObject>> + Send + 'static,
{
    let f = Arc::new(f);
    Arc::new(move |req, ctx| {
        let f = Arc::clone(&f);
        Box::pin(async move { f(req, ctx).await })
    })
}

/// Reads `completion/complete` params.
pub(crate) fn completion_request(
    params: &Map<String, Value>,
) -> Result<CompletionRequest, ErrorObject> {
    let bad =
        |what: &str| ErrorObject::invalid_params(format!("completion/complete requires {what}"));
    let reference = params
        .get("ref")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("a `ref` object"))?;
    let ref_type = reference
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("`ref.type`"))?;
    let ref_name = match ref_type {
        "ref/prompt" => reference.get("name"),
        "ref/resource" => reference.get("uri"),
        _ => return Err(bad("`ref.type` \"ref/prompt\" or \"ref/resource\"")),
    }
    .and_then(Value::as_str)
    .ok_or_else(|| bad("`ref.name` (prompt) or `ref.uri` (resource)"))?;
    let argument = params
        .get("argument")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("an `argument` object"))?;
    Ok(CompletionRequest {
        ref_type: ref_type.to_owned(),
        ref_name: ref_name.to_owned(),
        argument: argument
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`argument.name`"))?
            .to_owned(),
        value: argument
            .get("value")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        context: params
            .get("context")
            .and_then(|c| c.get("arguments"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    })
}

/// The `completion/complete` result: at most 100 values.
pub(crate) fn completion_result(mut values: Vec<String>) -> Value {
    let total = values.len();
    values.truncate(100);
    json!({ "completion": { "values": values, "total": total, "hasMore": total > 100 } })
}

/// Who wants `notifications/resources/updated` for which URIs.
struct Subscriber {
    session: Session,
    /// `None`: a legacy `resources/subscribe`; `Some(id)`: a modern listen.
    listen: Option<Value>,
    outbound: Arc<dyn Outbound>,
    uris: HashSet<String>,
}

/// Default of [`McpServerBuilder::max_subscriptions_per_session`](crate::McpServerBuilder::max_subscriptions_per_session).
pub const DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION: usize = 1000;

/// The live resource subscriptions of a server.
pub(crate) struct Subscriptions {
    subscribers: Mutex<Vec<Subscriber>>,
    /// URIs one session may hold through `resources/subscribe`.
    max_per_session: usize,
}

impl Default for Subscriptions {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION)
    }
}

impl Subscriptions {
    pub(crate) fn new(max_per_session: usize) -> Self {
        Self {
            subscribers: Mutex::default(),
            max_per_session: max_per_session.max(1),
        }
    }

    /// Number of subscribers of live sessions (legacy subscriptions, and
    /// listens); closed sessions' are swept first.
    pub(crate) fn len(&self) -> usize {
        self.with(|subs| subs.len())
    }

    fn with<R>(&self, f: impl FnOnce(&mut Vec<Subscriber>) -> R) -> R {
        let mut subs = self
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subs.retain(|s| !s.session.is_closed());
        f(&mut subs)
    }

    /// A legacy `resources/subscribe` / `resources/unsubscribe`; refused
    /// past the per-session cap of URIs.
    pub(crate) fn set_legacy(
        &self,
        session: &Session,
        outbound: Option<&Arc<dyn Outbound>>,
        uri: &str,
        on: bool,
    ) -> Result<(), ErrorObject> {
        let max = self.max_per_session;
        let changed = self.with(|subs| {
            let existing = subs
                .iter_mut()
                .find(|s| s.listen.is_none() && s.session.same_as(session));
            match (existing, on, outbound) {
                (Some(s), true, _) => {
                    if s.uris.len() >= max && !s.uris.contains(uri) {
                        return Err(ErrorObject::new(
                            protocol::ErrorCode::INVALID_REQUEST,
                            format!(
                                "Too many resource subscriptions in this session (max {max}); \
                                 unsubscribe from some first"
                            ),
                        ));
                    }
                    s.uris.insert(uri.to_owned());
                }
                (Some(s), false, _) => {
                    s.uris.remove(uri);
                }
                (None, true, Some(outbound)) => {
                    session.mark_registered();
                    subs.push(Subscriber {
                        session: session.clone(),
                        listen: None,
                        outbound: Arc::clone(outbound),
                        uris: HashSet::from([uri.to_owned()]),
                    });
                }
                (None, _, _) => {}
            }
            Ok(())
        });
        if changed.is_ok() {
            session.changed();
        }
        changed
    }

    /// The URIs of `session`'s legacy subscriptions (a session store keeps them).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn legacy_uris(&self, session: &Session) -> Vec<String> {
        self.with(|subs| {
            subs.iter()
                .find(|s| s.listen.is_none() && s.session.same_as(session))
                .map(|s| s.uris.iter().cloned().collect())
                .unwrap_or_default()
        })
    }

    /// A modern listen with `resourceSubscriptions`; removed by [`end_listen`](Self::end_listen).
    pub(crate) fn add_listen(
        &self,
        session: &Session,
        id: Value,
        outbound: Arc<dyn Outbound>,
        uris: HashSet<String>,
    ) {
        self.with(|subs| {
            subs.push(Subscriber {
                session: session.clone(),
                listen: Some(id),
                outbound,
                uris,
            });
        });
    }

    /// Drops every subscription of a closed session (so nothing keeps its
    /// output channel alive).
    pub(crate) fn forget_closed(&self) {
        self.with(|_| ());
    }

    pub(crate) fn end_listen(&self, session: &Session, id: &Value) {
        self.with(|subs| {
            subs.retain(|s| !(s.session.same_as(session) && s.listen.as_ref() == Some(id)))
        });
    }

    /// Sends `notifications/resources/updated` to every subscriber of `uri`
    /// (or of a URI it lies under). Returns how many were notified.
    pub(crate) async fn notify_updated(&self, uri: &str) -> usize {
        let targets: Vec<(Arc<dyn Outbound>, Option<Value>)> = self.with(|subs| {
            subs.iter()
                .filter(|s| {
                    s.uris.iter().any(|u| {
                        uri == u || uri.starts_with(&format!("{}/", u.trim_end_matches('/')))
                    })
                })
                .map(|s| (Arc::clone(&s.outbound), s.listen.clone()))
                .collect()
        });
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_owned()));
        send_tagged(targets, "notifications/resources/updated", &params).await
    }
}

/// Sends the notification `method` with `params` to each target; a
/// target that belongs to a 2026-07-28 listen gets its id in
/// `_meta["io.modelcontextprotocol/subscriptionId"]`. How many took it.
pub(crate) async fn send_tagged(
    targets: Vec<(Arc<dyn Outbound>, Option<Value>)>,
    method: &str,
    params: &Map<String, Value>,
) -> usize {
    let mut sent = 0;
    for (outbound, listen) in targets {
        let mut params = params.clone();
        if let Some(id) = listen {
            params.insert(
                "_meta".into(),
                json!({ crate::protocol::meta::SUBSCRIPTION_ID: id }),
            );
        }
        if outbound
            .send(protocol::notification(method, Value::Object(params)))
            .await
        {
            sent += 1;
        }
    }
    sent
}

/// What a transport that shares sessions between replicas needs of the
/// server: a session's legacy subscriptions, read out to be saved and put
/// back when the session is restored. Weak: the server holds its sessions
/// (through their subscriptions), so what saves a session must not hold
/// the server.
#[cfg(feature = "http")]
#[derive(Clone)]
pub(crate) struct SubscriptionsHandle(pub(super) std::sync::Weak<super::Inner>);

#[cfg(feature = "http")]
impl SubscriptionsHandle {
    /// The URIs `session` is subscribed to; `None` once the server is gone.
    pub(crate) fn legacy_uris(&self, session: &Session) -> Option<Vec<String>> {
        let inner = self.0.upgrade()?;
        Some(inner.pipeline.features.subscriptions.legacy_uris(session))
    }
}

/// The optional features' state: completion, resource subscriptions.
pub(crate) struct Features {
    pub(crate) completer: Option<Completer>,
    /// `resources/subscribe` is offered.
    pub(crate) resource_subscriptions: bool,
    pub(crate) subscriptions: Subscriptions,
}

#[cfg(feature = "http")]
impl Subscriptions {
    /// Puts back a restored session's legacy subscriptions (past the
    /// per-session cap, the rest are dropped as a client's would be).
    pub(crate) fn restore_legacy(
        &self,
        session: &Session,
        outbound: &Arc<dyn Outbound>,
        uris: &[String],
    ) {
        for uri in uris {
            let _ = self.set_legacy(session, Some(outbound), uri, true);
        }
    }
}
