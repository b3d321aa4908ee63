//! [`RequestFacts`]: everything the stages after registration need to know
//! about one request, carried as one value (the facts of a request, not an
//! OAuth scope).

use std::sync::Arc;

use crate::cancel::CancelToken;
use crate::context::CallContext;
use crate::protocol::{Era, RequestId};
use crate::session::{InflightGuard, Session};

/// One registered request: its id (in flight in `session` until these facts
/// are dropped), method, era and the transport's context.
pub(crate) struct RequestFacts {
    /// The request's id.
    pub(crate) id: RequestId,
    /// The method name.
    pub(crate) method: super::decode::MethodName,
    /// The era it is served in (and, for 2026-07-28, its `_meta`).
    pub(crate) era: Era,
    /// The cancellation and routing scope it is registered in.
    pub(crate) session: Session,
    /// What the transport supplied with it, shared (not copied) with the
    /// transport's other requests.
    pub(crate) ctx: Arc<CallContext>,
    /// Keeps the id registered; holds the call's cancellation token.
    pub(crate) guard: InflightGuard,
}

impl RequestFacts {
    /// The call's cancellation token.
    pub(crate) fn token(&self) -> &CancelToken {
        self.guard.token()
    }

    /// True for a 2026-07-28 request.
    pub(crate) fn is_modern(&self) -> bool {
        matches!(self.era, Era::Modern(_))
    }
}
