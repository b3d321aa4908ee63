//! OAuth 2.1 authorization for HTTP deployments (feature `auth`): this
//! server as a *resource server*, as the MCP authorization spec describes.
//!
//! | piece | what it does |
//! |---|---|
//! | [`ResourceServer`] | set on [`HttpOptions::resource_server`](crate::HttpOptions::resource_server): serves Protected Resource Metadata (RFC 9728) at `/.well-known/oauth-protected-resource` and `/.well-known/oauth-protected-resource/<mcp path>`, requires a bearer token on the MCP endpoint, answers `401` with `WWW-Authenticate: Bearer resource_metadata="…"` (`error="invalid_token"` for a refused token) |
//! | [`TokenVerifier`] | checks a token, returns its [`AuthInfo`] or a [`Rejection`]; implement it for your own scheme |
//! | [`JwtVerifier`] | JWT access tokens: keys from the issuer's metadata (RFC 8414, OIDC fallback), trusted for a bounded age (10 minutes, or the JWKS's `Cache-Control: max-age` within 30 s..=24 h) then fetched again, and fetched again on an unknown `kid` (rate-limited); `iss`, `aud` = this resource (RFC 8707), `exp`/`nbf` with bounded leeway, asymmetric algorithms only |
//! | [`IntrospectionVerifier`] | opaque tokens through RFC 7662 introspection, answers cached (bounded) |
//!
//! # Principal and scopes
//! A verified token's principal is the request's principal: sessions,
//! tasks, sealed `requestState` and the per-principal limits are bound to
//! it, so a session id replayed with another principal's token is answered
//! `404` like an unknown one. [`JwtVerifier`] and [`IntrospectionVerifier`]
//! name it by kind, so that two different callers never share one:
//!
//! | the token (or introspection answer) has | principal |
//! |---|---|
//! | a `sub` | `sub:<sub>` (`sub:alice`) |
//! | no `sub`, a `client_id` (else `azp`) | `client:<client id>` (`client:app1`) |
//! | neither | `token:<32 hex digits>`: the first 128 bits of the token's SHA-256, a principal of the token's own |
//!
//! The prefix says which kind the rest is, so a user whose subject is
//! `client:app1` (principal `sub:client:app1`) is never the client `app1`;
//! an empty `sub` or `client_id` counts as absent. A token naming neither
//! is served, but shares nothing with any other token — not even the next
//! token of the same caller (a session started with it ends with it): have
//! the authorization server put a `sub` (or `client_id`) in its tokens, or
//! in its introspection answers, for sessions that outlive a token. One
//! verifier trusts one issuer (set [`IntrospectionVerifier::issuer`] when
//! the introspection endpoint answers for several), so a subject is
//! unique among the principals it makes. A [`TokenVerifier`] of your own
//! picks its principals ([`AuthInfo::new`]). Its [`AuthInfo`] (subject, client
//! id, scopes, claims) is in the request's extensions, for handlers
//! (`ctx.extensions().get::<AuthInfo>()`) and interceptors
//! ([`Request::extensions`](crate::intercept::Request::extensions),
//! [`Request::principal`](crate::intercept::Request::principal) for audit).
//!
//! Tools, resources and prompts declare the scopes they need
//! (`#[mcp_tool(scopes = ["files:write"])]`, or
//! [`McpToolDef::with_scopes`](crate::McpToolDef::with_scopes) and its
//! resource and prompt equivalents). A call whose token lacks one is
//! answered `403` with `WWW-Authenticate: Bearer error="insufficient_scope",
//! scope="<needed>", resource_metadata="…"` and a `-32003` JSON-RPC error
//! body naming the item, so a client can step up; listings show only what
//! the caller may use; the metadata's `scopes_supported` is every scope the
//! catalog declares (plus [`ResourceServer::scopes_supported`]).
//!
//! The token is used for verification only: the `Authorization` header is
//! removed from the request once verified, so handlers and interceptors
//! never see it (`ctx.headers()` lacks it), and a server that calls other
//! servers must get tokens of its own for them.
//!
//! ```no_run
//! use mcp_core::auth::ResourceServer;
//! use mcp_core::{serve_http, HttpOptions, McpServer, McpToolDef, InvokeContext, context::AuthInfo};
//! use serde_json::json;
//!
//! # #[tokio::main] async fn main() -> std::io::Result<()> {
//! let server = McpServer::builder()
//!     .tool(McpToolDef::new("whoami", "Who am I", json!({"type": "object"}),
//!         |_args, ctx: InvokeContext| async move {
//!             ctx.extensions().get::<AuthInfo>().map(|a| a.principal().to_owned()).unwrap_or_default()
//!         }))
//!     .tool(McpToolDef::new("wipe", "Erase everything", json!({"type": "object"}),
//!         |_args, _ctx: InvokeContext| async move { "wiped" })
//!         .with_scopes(["files:write"]))
//!     .build()
//!     .expect("valid server");
//! let rs = ResourceServer::jwt("http://127.0.0.1:8000/mcp", "http://127.0.0.1:9000");
//! let handle = serve_http(server, HttpOptions::new().port(8000).resource_server(rs)).await?;
//! # handle.close().await; Ok(()) }
//! ```
//!
//! # Fetching over `https://`
//! The metadata, JWKS and introspection fetches use hyper's client. With
//! the `tls` feature (turn it on next to `auth` for every real, `https://`
//! authorization server) it has the crate's rustls connector: `https://`
//! authorization servers are reached with Mozilla's and the platform's
//! roots trusted, plus any root installed with `tls::TlsConfig`. A server
//! whose certificate does not verify is never trusted: the fetch fails with
//! the reason (a `503` for the request). Without `tls` (`auth` alone is
//! pure Rust and needs no C compiler) an `https://` fetch fails the same
//! way, naming the feature. `http://` works too (a loopback or trusted
//! network); [`JwtVerifier::fixed_keys`] fetches nothing.
//!
//! # CORS
//! The Protected Resource Metadata is served to any origin
//! (`Access-Control-Allow-Origin: *`, the `OPTIONS` preflight answered),
//! ahead of the endpoint's Host/Origin guard: browser-based clients read it
//! from their own origin, and it is the same public document for everyone.
//! The MCP endpoint itself keeps the guard.
//!
//! # stdio
//! A stdio server has no OAuth: the spec has it take credentials from its
//! environment. Put the caller's [`AuthInfo`] in the connection's
//! extensions and the same scope checks apply (a refusal is a `-32003`
//! JSON-RPC error there, as stdio has no HTTP status):
//!
//! ```no_run
//! use mcp_core::{serve_stdio, McpServer, StdioOptions, context::AuthInfo};
//!
//! # async fn run(server: McpServer) -> std::io::Result<()> {
//! // Whoever started this process decided what it may do.
//! let user = std::env::var("MCP_USER").unwrap_or_else(|_| "local".to_owned());
//! let scopes = std::env::var("MCP_SCOPES").unwrap_or_default();
//! let who = AuthInfo::new(user.clone()).with_scopes(scopes.split_whitespace());
//! let options = StdioOptions::default().principal(user).extension(who);
//! serve_stdio(server, options).wait().await
//! # }
//! ```
//!
//! An interceptor can attach it instead (per request, from a header of the
//! options or anything else) with
//! [`Request::extensions_mut`](crate::intercept::Request::extensions_mut):
//! the checks read the extensions as the last interceptor left them.

mod algorithm;
mod cache;
mod claims;
mod fetch;
mod introspect;
mod jwt;
mod keys;
mod resource;
mod verifier;

// Linked from the module docs; its one public path is `context`.
#[allow(unused_imports)]
use crate::context::AuthInfo;

pub use algorithm::Algorithm;
pub use introspect::{IntrospectionVerifier, DEFAULT_INTROSPECTION_CACHE};
pub use jwt::{JwtVerifier, DEFAULT_KEY_MAX_AGE, DEFAULT_VERIFIED_CACHE, MAX_LEEWAY};
pub use keys::{MAX_KEY_AGE, MIN_KEY_AGE};
pub(crate) use resource::Refusal;
pub use resource::{ResourceServer, PROTECTED_RESOURCE_METADATA_PATH};
pub use verifier::{Rejection, TokenVerifier};
