//! An MCP client for both eras (feature `client`): a child process over
//! stdio, any byte stream, or Streamable HTTP on hyper's client.
//!
//! ```no_run
//! # async fn run() -> Result<(), mcp_core::client::ClientError> {
//! use mcp_core::client::{ClientBuilder, Handlers, RequestOptions};
//! use serde_json::json;
//!
//! let mut command = tokio::process::Command::new("my-server");
//! command.arg("--stdio");
//! let client = ClientBuilder::new("my-agent", "1.0.0")
//!     .handlers(Handlers::default().elicitation(|_request| async {
//!         Ok(json!({"action": "accept", "content": {"confirm": true}}))
//!     }))
//!     .connect_stdio(command)
//!     .await?;
//! let options = RequestOptions::new().progress(|p| eprintln!("{} of {:?}", p.progress, p.total));
//! let result = client
//!     .call_tool_with("slow", json!({"steps": 3}), &options)
//!     .await?;
//! println!("{:?}", result.content);
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! **Eras.** [`Protocol::Auto`] (the default) probes with `server/discover`
//! and speaks 2026-07-28 when the server does, else falls back to the
//! `initialize` handshake; [`Protocol::Legacy`] and [`Protocol::Modern`]
//! pin one. On 2026-07-28 every request carries the `_meta` claim
//! (version, capabilities, `clientInfo`), HTTP requests carry
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the
//! `Mcp-Param-{Name}` headers of `x-mcp-header` arguments, and a `-32022`
//! naming another stateless revision is retried once with it.
//!
//! **The server's questions.** The callbacks in [`Handlers`] answer
//! elicitation, sampling and roots: as legacy server→client requests, and
//! on 2026-07-28 as the entries of an `input_required` result, which the
//! client fulfils and retries (with `inputResponses` and the server's
//! `requestState` byte for byte, on a new request id) until the result
//! is complete.
//!
//! **Cancellation.** Dropping a call's future, its
//! [`RequestOptions::timeout`] or its [`RequestOptions::cancel`] token
//! abandons it: the server gets `notifications/cancelled`, or on
//! 2026-07-28 HTTP the request's connection is dropped.
//!
//! **Caching.** 2026-07-28 listings and reads are kept for their `ttlMs`
//! (`private` ones per principal), dropped on the server's change
//! notifications, within a byte bound: see [`CacheOptions`] and the
//! client guide.
//!
//! **Limits.** Each message from the server is bounded
//! ([`ClientBuilder::max_message_bytes`]); listings stop after 1,000 pages
//! or a repeated cursor; input rounds stop after 16.

//! **Without the `client` feature** (feature `stdio` alone) this module
//! is private and holds only the transport-neutral engine and the byte
//! stream link, which `testing::TestClient` drives: no HTTP client is built.

// With `stdio` alone the engine is compiled for `testing::TestClient`,
// which uses only part of it, and nothing here is public.
#![cfg_attr(not(feature = "client"), allow(dead_code, unreachable_pub))]

#[cfg(feature = "client")]
mod cache;
#[cfg(feature = "client")]
mod calls;
#[cfg(feature = "client")]
mod connect;
pub(crate) mod engine;
mod error;
#[cfg(feature = "client")]
mod forward;
mod handlers;
pub(crate) mod link;
#[cfg(feature = "client-oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "client-oauth")))]
pub mod oauth;
pub(crate) mod observer;
mod options;
#[cfg(feature = "client")]
pub mod proxy;
#[cfg(feature = "client")]
mod rounds;
mod speaking;
#[cfg(feature = "client")]
mod tool_headers;
mod wire;

#[cfg(feature = "client")]
use std::collections::HashMap;
#[cfg(feature = "client")]
use std::sync::{Arc, Mutex};

#[cfg(feature = "client")]
use serde_json::Value;

pub use error::ClientError;
pub use handlers::Handlers;
#[cfg(feature = "client")]
pub use handlers::{OnNotification, ServerRequestHandler};
pub use options::RequestOptions;
#[cfg(feature = "client")]
pub use options::{CacheOptions, DEFAULT_CACHE_BYTES};
#[cfg(feature = "client")]
pub use options::{ClientBuilder, ProgressEvent, Protocol};

#[cfg(feature = "client")]
use connect::Greeting;
#[cfg(feature = "client")]
use engine::Peer;

/// A connection to one MCP server; see the [module docs](self).
///
/// Calls take `&self` and may run concurrently. [`Client::close`] ends
/// the connection; dropping the client does too (a child process is
/// killed).
#[cfg(feature = "client")]
pub struct Client {
    peer: Arc<Peer>,
    greeting: Greeting,
    /// The `x-mcp-header` arguments of each listed tool (2026-07-28 HTTP).
    tool_headers: Mutex<HashMap<String, tool_headers::Annotated>>,
    /// Listings and reads kept by their `ttlMs` (see [`CacheOptions`]).
    cache: Arc<cache::Cache>,
}

#[cfg(feature = "client")]
impl Client {
    fn new(peer: Arc<Peer>, greeting: Greeting, cache: Arc<cache::Cache>) -> Self {
        Self {
            peer,
            greeting,
            tool_headers: Mutex::new(HashMap::new()),
            cache,
        }
    }

    /// Forgets every cached listing and read (see [`CacheOptions`]): the
    /// next of each goes to the server.
    pub fn clear_cache(&self) {
        self.cache.clear();
    }

    /// The revision spoken (`"2026-07-28"`, or what `initialize` negotiated).
    pub fn protocol_version(&self) -> &str {
        &self.greeting.version
    }

    /// True when speaking a stateless revision (2026-07-28).
    pub fn is_modern(&self) -> bool {
        self.peer.is_modern()
    }

    /// The `initialize` or `server/discover` result, whole.
    pub fn server_greeting(&self) -> &Value {
        &self.greeting.result
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> Option<&Value> {
        self.greeting.result.get("capabilities")
    }

    /// The server's name and version (`serverInfo`; on 2026-07-28 from
    /// the discover result's `_meta`).
    pub fn server_info(&self) -> Option<&Value> {
        self.greeting.result.get("serverInfo").or_else(|| {
            self.greeting
                .result
                .get("_meta")?
                .get(crate::protocol::meta::meta_keys::SERVER_INFO)
        })
    }

    /// The server's instructions for the model, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.greeting.result.get("instructions")?.as_str()
    }

    /// True once the server closed the connection (a child process
    /// exited, a stream ended).
    pub fn is_closed(&self) -> bool {
        self.peer.is_closed()
    }

    /// Ends the connection: a legacy HTTP session is deleted, a child
    /// process has its input closed (and is killed if it has not exited
    /// 2 s later).
    ///
    /// # Cancel safety
    /// Dropping the future leaves the connection half closed; dropping the
    /// client then finishes the job.
    pub async fn close(&self) {
        self.peer.link().close().await;
    }
}

#[cfg(feature = "client")]
impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("protocol_version", &self.greeting.version)
            .field("server_info", &self.server_info())
            .finish_non_exhaustive()
    }
}
