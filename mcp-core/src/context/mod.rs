//! Contexts: what a transport supplies with each message ([`CallContext`])
//! and what a handler receives with each call ([`InvokeContext`]), with the
//! progress, elicitation and round-trip machinery they carry.
//!
//! Imports point one way: `outbound` ← `progress`, `elicit` ← `call` ←
//! `interrupt` ← `invoke`.

mod auth_info;
mod call;
mod elicit;
mod extensions;
pub(crate) mod interrupt;
mod invoke;
mod outbound;
mod progress;
pub(crate) mod state_map;

pub(crate) use auth_info::allowed as scopes_allowed;
#[cfg(feature = "auth")]
pub(crate) use auth_info::quoted;
#[cfg(feature = "http")]
pub(crate) use auth_info::scope_challenge;
pub use auth_info::AuthInfo;
pub use call::{CallContext, CallHeaders, HeaderValue, Headers};
pub use elicit::{CannotAsk, Confirmation, Elicit, ElicitResponse, Elicitor, InputRequest};
pub use extensions::Extensions;
pub use invoke::InvokeContext;
pub(crate) use invoke::Parts as InvokeParts;
pub use outbound::Outbound;
pub use progress::{Progress, ProgressSink, ProgressUpdate};
