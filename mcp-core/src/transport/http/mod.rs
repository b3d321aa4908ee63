//! Streamable HTTP on hyper 1.x: [`serve_http`] runs a server,
//! [`McpHttpService`] mounts the same endpoint in yours.
//!
//! One endpoint ([`HttpOptions::path`], default `/mcp`):
//!
//! | Status | When |
//! |---|---|
//! | 200 | A JSON-RPC response (`application/json`), or an event stream (see below) |
//! | 202 | The POST held only notifications or responses (or its call was cancelled) |
//! | 400 | Invalid JSON (`-32700`); an id-less invalid message; an unsupported `MCP-Protocol-Version`; with sessions, a request other than `initialize` without `Mcp-Session-Id`; for 2026-07-28 requests see below |
//! | 401 | [`HttpOptions::authorize`] returned false (or panicked) |
//! | 403 | The `Host`/`Origin` guard refused the request (checked first) |
//! | 404 | Another path (`-32601`, naming the requested and the configured path and the fix, [`HttpOptions::path`]; both paths in `data`), or a method other than POST/GET/DELETE (`-32601 Not found: <method> <url>`); with sessions, an unknown, expired, evicted or foreign session; a 2026-07-28 request for an unknown or removed method |
//! | 405 | GET or DELETE while sessions are off |
//! | 406 | A GET, or a 2026-07-28 `subscriptions/listen` POST, whose `Accept` lacks `text/event-stream` |
//! | 408 | The body did not arrive within [`HttpOptions::body_read_timeout`] (connection closed) |
//! | 413 | The body exceeds [`HttpOptions::max_body_bytes`]: never buffered; the rest of it is read and discarded (up to 4× the limit, 2 s) so that a client still sending sees the 413, not a reset; a larger declared `Content-Length` or `Expect: 100-continue` is refused before reading (connection closed) |
//! | 415 | A POST whose `Content-Type` is not `application/json` |
//! | 503 | Over [`HttpOptions::max_concurrent_requests`] with no client holding two calls more than the caller's (otherwise the oldest call of the one holding the most is evicted with this error), the per-principal or the per-connection limit, or a GET past [`HttpOptions::max_event_streams`] (`-32000`, `Retry-After: 1`); an `initialize` of a principal holding [`SessionOptions::max_per_principal`] sessions (`-32000` with its id) |
//! | 204 | DELETE of a live session |
//!
//! Error bodies are JSON-RPC error responses with id `null`.
//!
//! **Streamable HTTP.** A POSTed request runs on its own task. When the
//! client's `Accept` includes `text/event-stream` and the call sends
//! something before answering (progress, an `elicitation/create` request),
//! the response turns into an event stream: those messages, then the
//! response, then the end of the stream. A call that just answers gets a
//! plain `application/json` response. A client answer to `elicitation/create`
//! arrives as its own POST (202) and resumes the waiting tool through the
//! session. A client that disconnects cancels its call (the call's
//! `CallContext::signal` fires).
//!
//! **Sessions** ([`HttpOptions::sessions`], on by default; off with
//! [`HttpOptions::stateless`] / [`HttpOptions::without_sessions`]): a
//! successful legacy `initialize` gets
//! an `Mcp-Session-Id` (32 bytes from the OS RNG, hex); every later request
//! must carry it; `DELETE` ends it. Each session is one [`Session`](crate::transport::Session),
//! so a `notifications/cancelled` POSTed in the same session cancels the
//! call, and no other session can. A session is bound to its principal
//! ([`HttpOptions::principal`]); another principal gets 404 as if it did not
//! exist. A GET with `Accept: text/event-stream` opens the session's stream
//! for server→client messages of calls whose POST cannot stream (one per
//! session; a new GET replaces the old stream). Ending a session (DELETE,
//! expiry, eviction) cancels its running calls, and each still gets one
//! answer: the JSON-RPC error `-32000` with its id ("The session ended or
//! the server is closing; the call was cancelled"), as a 503 JSON response
//! or as the last event of its event stream; so do calls cancelled at the
//! drain deadline of [`HttpHandle::close`]. Without sessions every request is its own session:
//! the server forgets `initialize`, so a legacy call cannot be asked
//! anything (`ctx.confirm` says `CannotAsk::SessionlessHttp`; the other
//! questions answer `-32603`).
//!
//! A call the client cancelled gets no response; its response stays open
//! (sending nothing) until the client leaves, the session ends, the server
//! closes or [`HttpOptions::cancelled_linger`] passes, because some clients
//! read a stream that just ends as a failure of the request they cancelled.
//!
//! **2026-07-28 requests** are told apart by their body: a request whose
//! `params._meta` carries `io.modelcontextprotocol/protocolVersion` is
//! served statelessly, on the same endpoint as legacy sessions (the header
//! never overrides the body). Such a request needs no `Mcp-Session-Id`
//! (one sent is ignored) and never gets one, and its routing headers must
//! mirror its body, else it is refused with HTTP 400 and a `-32020`
//! (HeaderMismatch) error carrying the request id:
//!
//! | Header | Must equal |
//! |---|---|
//! | `MCP-Protocol-Version` | `_meta["io.modelcontextprotocol/protocolVersion"]` |
//! | `Mcp-Method` | `method` |
//! | `Mcp-Name` | `params.name` (`tools/call`, `prompts/get`), `params.uri` (`resources/read`) |
//! | `Mcp-Param-{Name}` | the `tools/call` argument whose input-schema property has `"x-mcp-header": "Name"` (found through `properties` from the root, in the tools as they are when the request arrives, so a tool added to a live catalog counts), when present and not `null` |
//!
//! Header names are case-insensitive and values case-sensitive, with
//! surrounding spaces and tabs trimmed; a `=?base64?…?=` value is decoded
//! (padded standard base64 of UTF-8; anything else is refused); numbers
//! compare numerically (`42` equals `42.0`), booleans as `true`/`false`. A
//! missing or repeated header, or one with bytes outside visible ASCII, is
//! refused too. An `MCP-Protocol-Version` naming 2026-07-28 on a request
//! without the `_meta` claim is `-32602` (400), and 2026-07-28 messages
//! cannot be batched (`-32600`, 400).
//!
//! Statuses of a 2026-07-28 reply: 404 for `-32601` (an unknown method, or
//! one the revision removed: `initialize`, `ping`, `logging/setLevel`,
//! `resources/subscribe`, `resources/unsubscribe`), 400 for `-32602`,
//! `-32020`, `-32021` and `-32022`, 200 for results and every other error;
//! the JSON-RPC error is always in the body. The response is JSON, or an
//! event stream when the client accepts one and the call sends progress or
//! log messages first; closing that stream cancels the call. GET and DELETE
//! stay legacy session operations (405 when sessions are off). Event
//! streams carry `X-Accel-Buffering: no`.
//!
//! **Hardening**: a loopback-only `Host`/`Origin` guard by default; header,
//! body and keep-alive timeouts (the header timeout also ends slowloris
//! clients); server-wide, per-principal and per-connection request limits;
//! a connection cap ([`HttpOptions::max_connections`]) at which a new
//! connection takes the place of the one idle the longest, with connections
//! holding event streams counted apart ([`HttpOptions::max_event_streams`])
//! so that held streams never lock new clients out; bounded queues between calls and streams (a client that
//! stops reading stalls its own call, nothing else), each event stream also
//! bounded in bytes ([`HttpOptions::stream_budget_bytes`], 4 MiB: past it the
//! stream ends, its call is cancelled and its connection closed);
//! `TCP_NODELAY`. Bodies
//! being read are buffered up to [`HttpOptions::max_body_bytes`] each, so
//! the worst case is that times [`HttpOptions::max_connections`].
//!
//! **Disconnects** are noticed while a call runs on a keep-alive connection
//! and when writing to an event stream. A client that only half-closes
//! (`shutdown(SHUT_WR)` after its POST) sends the same FIN as one that went
//! away, so on a FIN during a call the server writes one interim
//! `HTTP/1.1 102 Processing` response (HTTP/1.1 clients accept unexpected
//! 1xx responses) and watches for the reset a closed socket answers it
//! with: a reset cancels the call; otherwise the call runs on and the
//! half-closed client gets its answer (JSON or the whole event stream). A request
//! sent with `Connection: close` whose call streams nothing is noticed only
//! when its response is written: hyper stops reading such a connection once
//! the body is in.
//!
//! **Embedding**: [`McpHttpService`] implements `hyper::service::Service`
//! (and, with the `tower` feature, `tower::Service`, for axum's
//! `Router::route_service`); its response body is [`McpBody`].
//!
//! ```no_run
//! use mcp_core::{serve_http, HttpOptions};
//! # async fn run(server: mcp_core::McpServer) -> std::io::Result<()> {
//! // Legacy sessions on (the default); `HttpOptions::stateless()` for none.
//! let handle = serve_http(server, HttpOptions::new().port(8080)).await?;
//! eprintln!("MCP endpoint: {}", handle.url());
//! // ... serve until it is time to stop, then drain:
//! handle.close().await;
//! # Ok(()) }
//! ```

mod activity;
mod body;
mod call_messages;
mod conns;
mod fair;
mod guard;
mod halfclose;
mod lifetime;
mod modern;
mod names;
#[cfg(feature = "auth")]
mod oauth;
pub(crate) mod options;
mod post;
mod post_rest;
mod principal;
mod queue;
mod respond;
mod scopes;
pub(crate) mod server;
mod service;
mod session_store;
mod sessions;
mod sse;

// The module docs link to the entry points, whose public path is the root.
#[allow(unused_imports)]
use crate::{serve_http, HttpOptions};
pub use names::{PROTOCOL_VERSION_HEADER, SESSION_HEADER};
pub use options::{
    AllowRequestFn, AuthorizeFn, PrincipalFn, SessionOptions, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_PRINCIPAL, DEFAULT_SESSION_TTL,
    DEFAULT_STREAM_BUDGET_BYTES,
};
pub use server::HttpHandle;
pub use service::McpHttpService;
pub use sse::McpBody;
