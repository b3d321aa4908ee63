//! What a peer shows an [`Observer`] besides its own routing: every message
//! sent and received, and what no request of the peer's claims.
//!
//! A [`Client`](super::Client) has no observer (each hook is one `None`
//! check). `testing::TestClient` is one: it records traces, queues the
//! server's notifications, and hands a test what matched no request (an
//! error with a `null` id, a line that is not JSON, a batch reply).

/// Sees the messages of one peer. Every method has a do-nothing default;
/// each is called on the task that sends or receives, so it must not block.
pub(crate) trait Observer: Send + Sync + 'static {
    /// One message on its way out, as written (a line, a batch, or bytes
    /// that are not JSON at all).
    fn sent(&self, _message: &[u8]) {}

    /// One message as received, before it is routed (a batch whole).
    fn received(&self, _message: &[u8]) {}

    /// A notification no request's progress callback consumed, whole.
    fn notification(&self, _message: &[u8]) {}

    /// A message no waiting request claims: a reply to an unknown id or
    /// to none, a message that is not JSON-RPC, and (when
    /// [`whole_batches`](Self::whole_batches)) every batch.
    fn unmatched(&self, _message: &[u8]) {}

    /// True to get batches whole through [`unmatched`](Self::unmatched)
    /// instead of routed entry by entry.
    fn whole_batches(&self) -> bool {
        false
    }
}
