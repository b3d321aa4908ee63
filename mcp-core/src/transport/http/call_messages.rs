//! Where a call's server→client messages go over HTTP.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::queue::LazyStream;
use super::sessions::SessionEntry;
use crate::cancel::CancelToken;
use crate::context::Outbound;
use crate::session::Session;

/// Server→client messages of one call: onto its POST's event stream until
/// the call is answered; after that (a legacy `resources/subscribe` keeps
/// the call's outbound for its updates) onto the session's GET stream, when
/// one is open, as messages unrelated to a live request belong there.
pub(super) struct StreamOutbound {
    pub(super) stream: LazyStream,
    /// Set by the call's task, under this lock, before its reply goes onto
    /// `stream`: nothing is queued behind the reply (the stream ends there).
    pub(super) answered: tokio::sync::Mutex<bool>,
    pub(super) session: Option<Arc<SessionEntry>>,
}

#[async_trait]
impl Outbound for StreamOutbound {
    async fn send(&self, message: Value) -> bool {
        {
            let answered = self.answered.lock().await;
            if !*answered {
                return self.stream.tx().message(&message).await;
            }
        }
        match &self.session {
            Some(entry) => to_session_stream(entry, message).await,
            None => false,
        }
    }
}

/// Server→client messages of a call whose POST cannot stream: onto the
/// session's GET stream, when one is open.
pub(super) struct SessionOutbound(pub(super) Arc<SessionEntry>);

#[async_trait]
impl Outbound for SessionOutbound {
    async fn send(&self, message: Value) -> bool {
        to_session_stream(&self.0, message).await
    }
}

pub(super) async fn to_session_stream(entry: &SessionEntry, message: Value) -> bool {
    match entry.stream() {
        Some(tx) => tx.message(&message).await,
        None => false,
    }
}

/// The session of one request (sessions off, or a 2026-07-28 request):
/// closed when the request is done if the request registered something in
/// it (a legacy `resources/subscribe` answered as an event stream), so the
/// server's subscription registry lets go of it; nothing otherwise.
pub(super) struct EndsWithRequest(pub(super) Session);

impl Drop for EndsWithRequest {
    fn drop(&mut self) {
        if self.0.has_registered() {
            self.0.close();
        }
    }
}

/// Cancels a call's external signal when its response (future or stream)
/// is dropped: the client went away.
pub(super) struct DisconnectGuard(pub(super) CancelToken);

impl Drop for DisconnectGuard {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
