//! How messages reach a server and come back: a [`Link`] sends one message
//! at a time and pushes everything the server sends into the client's inbox.
//!
//! - [`lines`]: newline-delimited JSON over any byte stream (a child
//!   process's stdio, a socket, an in-memory pipe);
//! - [`http`]: Streamable HTTP, one POST per message, JSON or event-stream
//!   answers, the legacy session header and GET stream.

#[cfg(feature = "client")]
pub(crate) mod http;
pub(crate) mod lines;
#[cfg(feature = "client")]
pub(crate) mod sse;

use std::sync::Arc;

use super::error::ClientError;
use crate::cancel::CancelToken;
use crate::protocol::RequestId;

/// What a link delivers: a message the server sent, or the failure of a
/// request it could not deliver or whose answer was lost.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// One JSON-RPC message (or batch) as received, and the request whose
    /// response stream carried it, when the transport knows (HTTP).
    Message(Vec<u8>, Option<RequestId>),
    /// Request `id` failed on the way.
    Failed(RequestId, ClientError),
}

/// Where a link delivers what the server sent: straight into the
/// client's tables, on the link's own reading task (no queue, no hop; a
/// server that floods waits for the client to keep up).
pub(crate) trait Deliver: Send + Sync {
    /// One message or failure.
    fn deliver(&self, item: Inbound);
    /// The server's stream ended: nothing more will come.
    fn closed(&self);
    /// True while request `id` still waits for its answer: an event
    /// stream stops reading once what it delivered settled it (no second
    /// parse of every event to find the response).
    fn waiting(&self, id: &RequestId) -> bool;
}

/// A link's handle on the client.
pub(crate) type Inbox = Arc<dyn Deliver>;

/// One message on its way to the server, with what an HTTP link needs to
/// route it (the 2026-07-28 headers) and to abandon it.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The serialized message.
    pub(crate) body: Vec<u8>,
    /// The request's id (`None` for notifications and responses).
    pub(crate) id: Option<RequestId>,
    /// The request's or notification's method.
    pub(crate) method: Option<Arc<str>>,
    /// `Mcp-Name`: the tool or prompt name, or the resource URI.
    pub(crate) name: Option<String>,
    /// `Mcp-Param-{Name}` headers, name first (without the prefix).
    pub(crate) param_headers: Vec<(String, String)>,
    /// Headers for this message only (HTTP; already filtered of the
    /// client's own).
    pub(crate) headers: Vec<(String, String)>,
    /// `MCP-Protocol-Version`, once known.
    pub(crate) protocol_version: Option<Arc<str>>,
    /// Fires when the request is abandoned (dropped, timed out, cancelled):
    /// an HTTP link then drops the request's connection.
    pub(crate) abandon: Option<CancelToken>,
}

impl Outgoing {
    /// A message with nothing to route by.
    pub(crate) fn plain(body: Vec<u8>) -> Self {
        Self {
            body,
            id: None,
            method: None,
            name: None,
            param_headers: Vec::new(),
            headers: Vec::new(),
            protocol_version: None,
            abandon: None,
        }
    }
}

/// A transport the client sends through.
#[async_trait::async_trait]
pub(crate) trait Link: Send + Sync + 'static {
    /// Sends one message. Replies arrive through the inbox the link was
    /// built with; a failure to deliver a *request* may also be reported
    /// there ([`Inbound::Failed`]).
    async fn send(&self, message: Outgoing) -> Result<(), ClientError>;

    /// True when the link routes by [`Outgoing::method`] and
    /// [`Outgoing::name`] (HTTP's headers): other links are not handed
    /// them, which saves two allocations per request.
    fn routes(&self) -> bool {
        false
    }

    /// Tells the link the legacy handshake finished: HTTP opens the GET
    /// stream for server messages outside any request.
    async fn initialized(&self) {}

    /// Ends the connection (ends the session, stops the process).
    async fn close(&self);
}
