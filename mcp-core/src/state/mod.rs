//! Per-principal state that spans calls, without sessions.
//!
//! The 2026-07-28 revision has no sessions: state that spans calls travels
//! in a *handle* the server mints and the model passes back as an ordinary
//! tool argument. A [`Handle<T>`] is that argument: a tool mints one for a
//! new value of a [`Stateful`] kind (`cart`, `conversation`, …), returns
//! it, and takes it back in later calls. State keyed by the caller alone
//! needs no handle: [`PrincipalState<T>`].
//!
//! Every entry is keyed by (principal, kind, id): a handle is useless to
//! any other principal, and looks to them exactly like one that never
//! existed. Before a tool runs, the framework checks each of its handle
//! arguments (the top-level arguments whose schema is a `Handle`): a
//! forged, altered, wrong-kind, unknown or expired handle is an error
//! result (`isError: true`, a [`ToolError`] whose code says which:
//! `HANDLE_FORGED`, `HANDLE_WRONG_KIND`, `HANDLE_UNKNOWN`,
//! `HANDLE_EXPIRED`), and the tool does not run.
//!
//! Updates are read–modify–compare-and-set, retried on a conflict, so two
//! replicas changing one entry at once lose no update. Entries idle longer
//! than [`McpServerBuilder::state_ttl`](crate::McpServerBuilder::state_ttl)
//! (default one hour) expire; a principal's entries hold at most
//! [`McpServerBuilder::state_byte_cap`](crate::McpServerBuilder::state_byte_cap)
//! bytes (default 1 MiB). The store is the server's
//! [`Storage`](crate::storage::Storage)'s ([`StateStore`](crate::storage::StateStore)):
//! in memory by default, on Redis with the `redis` feature. The guide
//! chapter `mcp_core::guide::state` says what survives a restart, a replica
//! change and an era change.
//!
//! ```
//! use mcp_core::state::{Handle, Stateful};
//! use mcp_core::{mcp_tool, InvokeContext, Json, ToolError};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Default, Serialize, Deserialize)]
//! struct Cart { items: Vec<String> }
//!
//! impl Stateful for Cart {
//!     const KIND: &'static str = "cart";
//!     const MINTED_BY: &'static str = "open_cart";
//! }
//!
//! #[derive(Serialize, schemars::JsonSchema)]
//! struct Opened { cart: Handle<Cart> }
//!
//! /// Opens an empty cart.
//! #[mcp_tool]
//! async fn open_cart(ctx: &InvokeContext) -> Result<Json<Opened>, ToolError> {
//!     Ok(Json(Opened { cart: Handle::mint(ctx, Cart::default()).await? }))
//! }
//!
//! /// Adds an item; returns how many the cart holds.
//! #[mcp_tool]
//! async fn add_item(ctx: &InvokeContext, cart: Handle<Cart>, item: String) -> Result<Json<usize>, ToolError> {
//!     let n = cart.update(ctx, |c| { c.items.push(item.clone()); c.items.len() }).await?;
//!     Ok(Json(n))
//! }
//! # let _ = (open_cart::tool(), add_item::tool());
//! ```

mod handle;
pub(crate) mod service;
mod token;

pub use handle::{Handle, PrincipalState};

use crate::handler::tool_error::ToolError;
use crate::InvokeContext;
use service::StateService;

/// The JSON Schema keyword that marks a handle argument:
/// `{"kind": "<kind>", "mintedBy": "<tool>"}`.
pub use crate::handler::handle_args::MARKER;

/// A kind of state a [`Handle`] or [`PrincipalState`] holds: a value
/// stored as JSON under a kind name.
pub trait Stateful: serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static {
    /// The kind's name (`cart`): in the handle's text and its schema.
    const KIND: &'static str;
    /// The tool that mints handles of this kind, named in the argument's
    /// schema and in the errors a model gets (so it knows what to call).
    const MINTED_BY: &'static str;
}

/// The state service and the caller's principal, or why a handler cannot
/// reach state.
fn service(ctx: &InvokeContext) -> Result<(&StateService, &str), ToolError> {
    let service = ctx.state::<StateService>().ok_or_else(|| {
        ToolError::new(
            "STATE_UNAVAILABLE",
            "this call cannot reach per-principal state",
        )
        .detail(&"the invoke context has no state service: take the context given to the handler (a detached context has none)")
    })?;
    let principal = ctx
        .call_context()
        .principal
        .as_deref()
        .unwrap_or(service::ANONYMOUS);
    Ok((service, principal))
}
