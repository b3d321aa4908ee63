//! The client's core, the same for every transport: request ids, the
//! table of requests waiting for their answer, progress routing,
//! cancellation, and answers to the server's own requests. An
//! [`Observer`] may watch it all (`testing::TestClient` does), and send
//! raw messages and wait for replies to ids of its own choosing
//! ([`Peer::send_raw`], [`Peer::expect`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, Weak};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use tokio::sync::oneshot;

use super::error::ClientError;
use super::handlers::Handlers;
use super::link::{Deliver, Inbound, Inbox, Link, Outgoing};
use super::observer::Observer;
use super::options::{ProgressEvent, RequestOptions};
#[cfg(feature = "client")]
pub(crate) use super::speaking::modern_meta;
pub(crate) use super::speaking::Speaking;
use super::wire;
use crate::cancel::CancelToken;
use crate::protocol::{ErrorObject, RequestId};

type Waiter = oneshot::Sender<Result<Box<RawValue>, ClientError>>;

/// Who waits for a reply.
enum Waiting {
    /// [`Peer::request`]: the result, or the error.
    Answer(Waiter),
    /// [`Peer::expect`]: the whole reply, as received.
    // `testing::TestClient`'s (feature `stdio`).
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    Message(oneshot::Sender<Vec<u8>>),
}

type ProgressFn = Arc<dyn Fn(ProgressEvent) + Send + Sync>;

/// One connection to a server.
pub(crate) struct Peer {
    /// Set once, right after the peer exists (the link needs its inbox).
    link: OnceLock<Box<dyn Link>>,
    /// A request abandoned over this link is cancelled by dropping its
    /// connection (2026-07-28 HTTP) rather than by `notifications/cancelled`.
    disconnect_cancels: bool,
    next_id: AtomicI64,
    pending: Mutex<HashMap<RequestId, Waiting>>,
    progress: Mutex<HashMap<String, ProgressFn>>,
    /// Requests that answer the server's questions about them themselves
    /// ([`RequestOptions::answer_with`]).
    overrides: Mutex<HashMap<RequestId, Handlers>>,
    pub(crate) handlers: Handlers,
    speaking: RwLock<Speaking>,
    closed: CancelToken,
    pub(crate) default_timeout: Option<Duration>,
    observer: Option<Arc<dyn Observer>>,
}

impl Peer {
    /// A peer over the link `make_link` builds, handed the peer's inbox:
    /// what the link receives goes straight into this peer's tables.
    ///
    /// # Errors
    /// `make_link`'s.
    pub(crate) fn start(
        make_link: impl FnOnce(Inbox) -> Result<Box<dyn Link>, ClientError>,
        disconnect_cancels: bool,
        handlers: Handlers,
        default_timeout: Option<Duration>,
    ) -> Result<Arc<Self>, ClientError> {
        let peer = Self::unlinked(disconnect_cancels, handlers, default_timeout, None);
        peer.attach(make_link(peer.inbox())?);
        Ok(peer)
    }

    /// A peer without its link yet, `observer` (if any) watching every
    /// message: hand [`inbox`](Self::inbox) to the link, then
    /// [`attach`](Self::attach) it.
    pub(crate) fn unlinked(
        disconnect_cancels: bool,
        handlers: Handlers,
        default_timeout: Option<Duration>,
        observer: Option<Arc<dyn Observer>>,
    ) -> Arc<Self> {
        Arc::new(Self {
            link: OnceLock::new(),
            disconnect_cancels,
            next_id: AtomicI64::new(1),
            pending: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            overrides: Mutex::new(HashMap::new()),
            handlers,
            speaking: RwLock::new(Speaking::default()),
            closed: CancelToken::new(),
            default_timeout,
            observer,
        })
    }

    /// Where a link delivers what it receives for this peer (it holds the
    /// peer weakly: a dropped peer is not kept alive by its link).
    pub(crate) fn inbox(self: &Arc<Self>) -> Inbox {
        Arc::new(ToPeer(Arc::downgrade(self)))
    }

    /// Sets the link this peer sends through (the first one set stays).
    pub(crate) fn attach(&self, link: Box<dyn Link>) {
        let _ = self.link.set(link);
    }

    pub(crate) fn speak(&self, speaking: Speaking) {
        *self
            .speaking
            .write()
            .unwrap_or_else(PoisonError::into_inner) = speaking;
    }

    pub(crate) fn speaking(&self) -> Speaking {
        self.speaking
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn is_modern(&self) -> bool {
        self.speaking
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .modern_meta
            .is_some()
    }

    pub(crate) fn link(&self) -> &dyn Link {
        self.link.get().map_or(&Detached as &dyn Link, |l| &**l)
    }

    /// True once the server closed the connection.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// A request id no other request of this peer's has had.
    // This and the next two: `testing::TestClient`'s (feature `stdio`).
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) fn fresh_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Waits for the reply to request `id`, sent (or to be sent) by the
    /// caller itself, with [`send_raw`](Self::send_raw): the receiver gets
    /// the whole reply as received, and fails when the connection closes.
    /// A later request with the same id replaces this wait.
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) fn expect(&self, id: RequestId) -> oneshot::Receiver<Vec<u8>> {
        let (tx, rx) = oneshot::channel();
        // Closed already: the sender drops here and the wait ends at once.
        if !self.is_closed() {
            self.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(id, Waiting::Message(tx));
        }
        rx
    }

    /// Sends `message` as it is (one line on a byte stream; the
    /// observer sees it first). Nothing in it is checked or routed.
    ///
    /// # Errors
    /// [`ClientError::Closed`] once the link is closed; the link's own.
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) async fn send_raw(&self, message: Vec<u8>) -> Result<(), ClientError> {
        self.send(Outgoing::plain(message)).await
    }

    /// Every message goes out here: the observer sees it, then the link.
    async fn send(&self, message: Outgoing) -> Result<(), ClientError> {
        if let Some(observer) = &self.observer {
            observer.sent(&message.body);
        }
        self.link().send(message).await
    }

    fn version(&self) -> Option<Arc<str>> {
        self.speaking
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .version
            .clone()
    }

    /// Sends request `method` and waits for its answer: the result object,
    /// or the server's error. `params` gets the 2026-07-28 `_meta` when
    /// speaking that revision, and a `progressToken` when `options` has a
    /// progress callback.
    ///
    /// Dropping the future, its timeout or its cancel token abandons the
    /// request: the server is told (`notifications/cancelled`, or a
    /// dropped connection on 2026-07-28 HTTP).
    pub(crate) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: &Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        if self.is_closed() {
            return Err(ClientError::Closed);
        }
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (version, fragment) = {
            let speaking = self.speaking.read().unwrap_or_else(PoisonError::into_inner);
            (speaking.version.clone(), speaking.fragment.clone())
        };
        // The CLIENT span, and `params` with its context in `_meta`.
        #[cfg(feature = "otel")]
        let (mut call, traced) =
            crate::otel::ClientCall::start(method, params, &id, &version, self);
        #[cfg(feature = "otel")]
        let params = traced.as_ref().unwrap_or(params);
        let token = options.progress.as_ref().map(|f| {
            let token = format!("p{id}");
            self.progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(token.clone(), Arc::clone(f));
            token
        });
        if let Some(handlers) = &options.handlers {
            self.overrides
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(id.clone(), handlers.clone());
        }
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), Waiting::Answer(tx));
        let abandon = CancelToken::new();
        let mut guard = InFlight {
            peer: Arc::clone(self),
            id: id.clone(),
            token,
            abandon: abandon.clone(),
            answered: false,
        };
        let body = wire::request(
            &id,
            method,
            params,
            fragment.as_deref(),
            guard.token.as_deref(),
        );
        let link = self.link();
        let routes = link.routes();
        let name = match method {
            _ if !routes => None,
            "tools/call" | "prompts/get" => params.get("name"),
            "resources/read" => params.get("uri"),
            _ => None,
        }
        .and_then(Value::as_str)
        .map(str::to_owned);
        let sent = self
            .send(Outgoing {
                body,
                id: Some(id),
                method: routes.then(|| Arc::from(method)),
                name,
                param_headers: options.param_headers.clone(),
                headers: options.headers.clone(),
                protocol_version: version,
                abandon: Some(abandon),
            })
            .await;
        #[cfg(feature = "otel")]
        call.sent(&sent);
        sent?;
        let timeout = if options.no_timeout {
            None
        } else {
            options.timeout.or(self.default_timeout)
        };
        let cancel = options.cancel.clone().unwrap_or_default();
        let result = tokio::select! {
            answer = rx => answer.unwrap_or(Err(ClientError::Closed)),
            () = sleep_or_never(timeout) => Err(ClientError::Timeout),
            () = cancel.cancelled() => Err(ClientError::Cancelled),
        };
        guard.answered = !matches!(result, Err(ClientError::Timeout | ClientError::Cancelled));
        #[cfg(feature = "otel")]
        call.finish(&result);
        result
    }

    /// Sends notification `method` (with the 2026-07-28 `_meta` when
    /// speaking that revision).
    pub(crate) async fn notify(
        &self,
        method: &str,
        params: &Map<String, Value>,
    ) -> Result<(), ClientError> {
        let (version, fragment) = {
            let speaking = self.speaking.read().unwrap_or_else(PoisonError::into_inner);
            (speaking.version.clone(), speaking.fragment.clone())
        };
        let mut out = Outgoing::plain(wire::notification(method, params, fragment.as_deref()));
        out.method = Some(Arc::from(method));
        out.protocol_version = version;
        self.send(out).await
    }

    fn settle(&self, id: &RequestId, outcome: Result<Box<RawValue>, ClientError>) {
        let waiter = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        match waiter {
            Some(Waiting::Answer(waiter)) => {
                let _ = waiter.send(outcome);
            }
            // The caller waits for a message: none comes (the sender drops).
            Some(Waiting::Message(_)) => {}
            None => tracing::debug!(target: "mcp_core::client", "a reply for unknown request {id}"),
        }
    }

    /// A message no request claims: the observer's, else a log line.
    fn unmatched(&self, message: &[u8], why: &str) {
        match &self.observer {
            Some(observer) => observer.unmatched(message),
            None => tracing::debug!(target: "mcp_core::client", "ignored {why}"),
        }
    }

    /// Everything still waiting fails: the connection is gone.
    fn close_all(&self) {
        self.closed.cancel();
        let waiting: Vec<Waiting> = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, w)| w)
            .collect();
        for waiter in waiting {
            if let Waiting::Answer(waiter) = waiter {
                let _ = waiter.send(Err(ClientError::Closed));
            }
        }
    }

    /// Who answers a server request about `related`: that request's own
    /// handlers; without a known relation, those of the only request that
    /// has some; otherwise the client's.
    fn handlers_for(&self, related: Option<&RequestId>) -> Handlers {
        let overrides = self
            .overrides
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let own = match related {
            Some(id) => overrides.get(id),
            None if overrides.len() == 1 => overrides.values().next(),
            None => None,
        };
        own.cloned().unwrap_or_else(|| self.handlers.clone())
    }

    fn on_message(self: &Arc<Self>, message: &[u8], related: Option<&RequestId>) {
        let message = message.trim_ascii();
        if let Some(observer) = &self.observer {
            observer.received(message);
            if observer.whole_batches() && message.first() == Some(&b'[') {
                observer.unmatched(message);
                return;
            }
        }
        if message.first() == Some(&b'[') {
            match serde_json::from_slice::<Vec<Box<RawValue>>>(message) {
                Ok(batch) => {
                    for m in batch {
                        self.on_message(m.get().as_bytes(), related);
                    }
                }
                Err(e) => {
                    tracing::warn!(target: "mcp_core::client", "ignored a batch that is not JSON: {e}");
                }
            }
            return;
        }
        let envelope = match serde_json::from_slice::<wire::Envelope>(message) {
            Ok(envelope) => envelope,
            Err(e) => {
                if let Some(observer) = &self.observer {
                    observer.unmatched(message);
                } else {
                    tracing::warn!(target: "mcp_core::client", "ignored a message that is not JSON-RPC: {e}");
                }
                return;
            }
        };
        let id = envelope.id.as_ref().and_then(RequestId::from_value);
        match (envelope.method, id) {
            (Some(method), Some(id)) => {
                let params = envelope
                    .params
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or_else(|| json!({}));
                let peer = Arc::clone(self);
                let handlers = self.handlers_for(related);
                tokio::spawn(async move { peer.answer(&handlers, id, &method, params).await });
            }
            (Some(method), None) => {
                self.on_notification(&method, envelope.params.as_deref(), message);
            }
            (None, id) => {
                // A refusal before routing carries a null id: over HTTP it
                // answers the request whose POST it came back on.
                let fallback = related.filter(|_| envelope.error.is_some()).cloned();
                let Some(id) = id.or(fallback) else {
                    self.unmatched(message, "a reply without an id");
                    return;
                };
                let waiter = self
                    .pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
                let waiter = match waiter {
                    Some(Waiting::Answer(waiter)) => waiter,
                    Some(Waiting::Message(waiter)) => {
                        let _ = waiter.send(message.to_vec());
                        return;
                    }
                    None => {
                        self.unmatched(message, "a reply for an unknown request");
                        return;
                    }
                };
                let outcome = match (envelope.result, envelope.error) {
                    (_, Some(error)) => match serde_json::from_str::<ErrorObject>(error.get()) {
                        Ok(e) => Err(ClientError::Rpc(e)),
                        Err(e) => Err(ClientError::protocol(format!(
                            "an error reply of the wrong shape: {e}"
                        ))),
                    },
                    (Some(result), None) => Ok(result),
                    (None, None) => Err(ClientError::protocol(
                        "a reply with neither result nor error",
                    )),
                };
                let _ = waiter.send(outcome);
            }
        }
    }

    fn on_notification(&self, method: &str, params: Option<&RawValue>, message: &[u8]) {
        if method == "notifications/progress" {
            let progress =
                params.and_then(|p| serde_json::from_str::<wire::ProgressParams>(p.get()).ok());
            if let Some(p) = progress {
                let token = match &p.progress_token {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                };
                let callback = token.and_then(|t| {
                    self.progress
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get(&t)
                        .cloned()
                });
                if let Some(callback) = callback {
                    callback(ProgressEvent {
                        progress: p.progress,
                        total: p.total,
                        message: p.message,
                    });
                    return;
                }
            }
        }
        if let Some(observer) = &self.observer {
            observer.notification(message);
        }
        if let Some(f) = &self.handlers.notification {
            let params = params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or(Value::Null);
            f(method, &params);
        }
    }

    /// Answers one server request with the user's callback.
    async fn answer(&self, handlers: &Handlers, id: RequestId, method: &str, params: Value) {
        let reply = match handlers.answer(method, params).await {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result}),
            Err(e) => crate::protocol::fail(id.to_value(), &e),
        };
        let Ok(body) = serde_json::to_vec(&reply) else {
            return;
        };
        let mut out = Outgoing::plain(body);
        out.protocol_version = self.version();
        if let Err(e) = self.send(out).await {
            tracing::warn!(target: "mcp_core::client", "could not answer the server's {method}: {e}");
        }
    }
}

async fn sleep_or_never(timeout: Option<Duration>) {
    match timeout {
        Some(t) => tokio::time::sleep(t).await,
        None => std::future::pending().await,
    }
}

/// The inbox a link delivers to: this peer, while it lives.
struct ToPeer(Weak<Peer>);

impl Deliver for ToPeer {
    fn deliver(&self, item: Inbound) {
        let Some(peer) = self.0.upgrade() else {
            return;
        };
        match item {
            Inbound::Message(message, related) => peer.on_message(&message, related.as_ref()),
            Inbound::Failed(id, e) => peer.settle(&id, Err(e)),
        }
    }

    fn closed(&self) {
        if let Some(peer) = self.0.upgrade() {
            peer.close_all();
        }
    }

    fn waiting(&self, id: &RequestId) -> bool {
        self.0.upgrade().is_some_and(|peer| {
            peer.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains_key(id)
        })
    }
}

/// Where a peer sends before its link is set (never in practice).
struct Detached;

#[async_trait::async_trait]
impl Link for Detached {
    async fn send(&self, _message: Outgoing) -> Result<(), ClientError> {
        Err(ClientError::Closed)
    }

    async fn close(&self) {}
}

/// A request between send and answer; abandoning it tells the server.
struct InFlight {
    peer: Arc<Peer>,
    id: RequestId,
    token: Option<String>,
    abandon: CancelToken,
    answered: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.peer
            .overrides
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
        if let Some(token) = &self.token {
            self.peer
                .progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(token);
        }
        if self.answered {
            return;
        }
        self.peer
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
        self.abandon.cancel();
        if self.peer.disconnect_cancels && self.peer.is_modern() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = Arc::clone(&self.peer);
        let id = self.id.to_value();
        runtime.spawn(async move {
            let mut params = Map::new();
            params.insert("requestId".into(), id);
            params.insert(
                "reason".into(),
                Value::String("cancelled by the client".into()),
            );
            let _ = peer.notify("notifications/cancelled", &params).await;
        });
    }
}
