//! The scope a transport gives a connection or HTTP session: in-flight request
//! ids (for cancellation), pending server→client requests, and what the client
//! announced in `initialize`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::cancel::{CancelToken, Signal};
use crate::fast_hash::FastHash;
use crate::protocol::{ClientInfo, ErrorObject, LoggingLevel, RequestId};

type Reply = Result<Value, ErrorObject>;

/// One cancellation and routing scope.
///
/// Each stdio stream is one session; over HTTP, one `Mcp-Session-Id` session
/// (or one per request when stateless). Two handles are the same session when
/// they were cloned from one another. Locks here are never held across an `.await`.
#[derive(Clone, Default)]
pub struct Session {
    inner: Arc<Inner>,
}

/// Request ids hashed with [`FastHash`].
type IdMap<V> = HashMap<RequestId, V, FastHash>;

#[derive(Default)]
struct Inner {
    inflight: Mutex<IdMap<CancelToken>>,
    pending: Mutex<IdMap<oneshot::Sender<Reply>>>,
    next_outbound_id: AtomicI64,
    client: RwLock<Option<Arc<ClientInfo>>>,
    /// Cancelled when the session closes (held in place: no one else
    /// holds it, so it needs no allocation of its own).
    closing: Signal,
    /// `logging/setLevel` rank + 1; 0 = not set.
    log_level: std::sync::atomic::AtomicU8,
    /// Something server-wide refers to this session (a resource subscription).
    registered: std::sync::atomic::AtomicBool,
    /// Called when what a session store keeps changes (HTTP sessions
    /// shared through a store only).
    on_change: std::sync::OnceLock<Arc<dyn Fn() + Send + Sync>>,
    /// The session of one request alone: nothing can name its id from
    /// elsewhere, so it is never entered in `inflight`.
    single_request: bool,
    /// Run once when the session closes, or is dropped unclosed (the open
    /// sessions gauge of `intercept::Metrics`).
    #[cfg(feature = "metrics")]
    on_end: Mutex<Option<OnEnd>>,
}

#[cfg(feature = "metrics")]
type OnEnd = Box<dyn FnOnce() + Send>;

#[cfg(feature = "metrics")]
impl Drop for Inner {
    fn drop(&mut self) {
        let hook = self
            .on_end
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(hook) = hook {
            hook();
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("client", &self.client())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A fresh session with nothing in flight.
    pub fn new() -> Self {
        Self::default()
    }

    /// The session of one request that nothing else can reach (a stateless
    /// HTTP POST that is not a batch): its id is not entered in the
    /// in-flight table, since no `notifications/cancelled` can arrive in
    /// it and no other request can reuse the id.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn single_request() -> Self {
        // Not `Inner { single_request: true, ..Default::default() }`: with
        // the `metrics` feature `Inner` has a `Drop`, which forbids that.
        #[allow(clippy::field_reassign_with_default)]
        let inner = {
            let mut inner = Inner::default();
            inner.single_request = true;
            inner
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// True when both handles are the same session.
    pub fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// What the client announced in `initialize`, if it has initialized.
    pub fn client(&self) -> Option<Arc<ClientInfo>> {
        self.inner
            .client
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_client(&self, info: ClientInfo) {
        *self
            .inner
            .client
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(info));
        self.changed();
    }

    /// Installs the hook told of changes to what a session store keeps
    /// (the first one installed stays).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn on_change(&self, hook: Arc<dyn Fn() + Send + Sync>) {
        let _ = self.inner.on_change.set(hook);
    }

    /// Tells the hook, if any, that the session's metadata changed.
    pub(crate) fn changed(&self) {
        if let Some(hook) = self.inner.on_change.get() {
            hook();
        }
    }

    /// Registers an in-flight request. `None` when the id is already in flight.
    pub(crate) fn begin(&self, id: &RequestId, token: CancelToken) -> Option<InflightGuard> {
        if self.inner.single_request {
            return Some(InflightGuard {
                session: self.clone(),
                id: id.clone(),
                token,
            });
        }
        let mut map = self
            .inner
            .inflight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if map.contains_key(id) {
            return None;
        }
        map.insert(id.clone(), token.clone());
        Some(InflightGuard {
            session: self.clone(),
            id: id.clone(),
            token,
        })
    }

    /// Cancels the in-flight request with this id. Returns whether one was found.
    pub fn cancel(&self, id: &RequestId) -> bool {
        let token = self
            .inner
            .inflight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned();
        token.map(|t| t.cancel()).is_some()
    }

    /// Marks the session as ending (input closed, session deleted):
    /// long-lived requests such as `subscriptions/listen` finish.
    pub fn close(&self) {
        self.inner.closing.cancel();
        #[cfg(feature = "metrics")]
        {
            let hook = self
                .inner
                .on_end
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(hook) = hook {
                hook();
            }
        }
    }

    /// Installs `hook`, run once when the session closes (or is dropped
    /// without closing); false, and `hook` dropped unrun, when one is
    /// installed already or the session is closed.
    #[cfg(feature = "metrics")]
    pub(crate) fn on_end(&self, hook: OnEnd) -> bool {
        let mut slot = self
            .inner
            .on_end
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if slot.is_some() || self.is_closed() {
            return false;
        }
        *slot = Some(hook);
        true
    }

    /// Completes once [`close`](Self::close) was called.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future only stops waiting.
    pub async fn closed(&self) {
        self.inner.closing.cancelled().await;
    }

    /// Number of requests in flight.
    pub fn inflight_len(&self) -> usize {
        self.inner
            .inflight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The minimum log level set by `logging/setLevel`, if any.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        let stored = self.inner.log_level.load(Ordering::Relaxed);
        LoggingLevel::ALL
            .get(usize::from(stored.checked_sub(1)?))
            .copied()
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        // Stored as its index + 1 (0 = not set); `ALL` is in declaration order.
        let index = LoggingLevel::ALL
            .iter()
            .position(|l| *l == level)
            .and_then(|i| u8::try_from(i + 1).ok())
            .unwrap_or(0);
        self.inner.log_level.store(index, Ordering::Relaxed);
        self.changed();
    }

    /// Notes that server-wide state refers to this session (until it closes).
    pub(crate) fn mark_registered(&self) {
        self.inner.registered.store(true, Ordering::Release);
    }

    /// True once [`mark_registered`](Self::mark_registered) was called.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn has_registered(&self) -> bool {
        self.inner.registered.load(Ordering::Acquire)
    }

    /// True once [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closing.is_cancelled()
    }

    /// Allocates an id for a server→client request and registers its waiter.
    pub(crate) fn begin_outbound(&self) -> (RequestId, PendingReply) {
        let n = self.inner.next_outbound_id.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::String(format!("srv-{n}"));
        let (tx, rx) = oneshot::channel();
        self.inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), tx);
        (
            id.clone(),
            PendingReply {
                session: self.clone(),
                id,
                rx,
            },
        )
    }

    /// Delivers a client response to the server→client request it answers.
    /// Returns false (and drops it) when no such request is pending.
    pub(crate) fn resolve(&self, id: &RequestId, reply: Reply) -> bool {
        let tx = self
            .inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        match tx {
            Some(tx) => tx.send(reply).is_ok(),
            None => false,
        }
    }
}

impl Session {
    /// Fails every pending server→client request (the connection is gone,
    /// so no answer can arrive).
    #[cfg(any(feature = "stdio", feature = "http"))]
    pub(crate) fn fail_pending(&self) {
        let drained: Vec<_> = self
            .inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        for (_, tx) in drained {
            let _ = tx.send(Err(ErrorObject::internal("the client connection closed")));
        }
    }
}

/// Removes an in-flight registration when the call ends, however it ends.
pub(crate) struct InflightGuard {
    session: Session,
    id: RequestId,
    token: CancelToken,
}

impl InflightGuard {
    pub(crate) fn token(&self) -> &CancelToken {
        &self.token
    }
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        if self.session.inner.single_request {
            return;
        }
        let mut map = self
            .session
            .inner
            .inflight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Only remove our own registration.
        if map.get(&self.id).is_some_and(|t| t.same_as(&self.token)) {
            map.remove(&self.id);
        }
    }
}

/// The waiting end of a server→client request; unregisters itself when dropped.
pub(crate) struct PendingReply {
    session: Session,
    id: RequestId,
    rx: oneshot::Receiver<Reply>,
}

impl PendingReply {
    /// Waits for the client's answer. An error when the session went away.
    pub(crate) async fn wait(mut self) -> Reply {
        (&mut self.rx)
            .await
            .unwrap_or_else(|_| Err(ErrorObject::internal("the client connection closed")))
    }
}

impl Drop for PendingReply {
    fn drop(&mut self) {
        self.session
            .inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}
