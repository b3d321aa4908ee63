//! Contexts: what a handler receives with each call
//! ([`InvokeContext`], at the crate root) and the
//! types it carries: headers, auth, extensions, progress, elicitation and
//! round trips. What a transport supplies with each message is
//! [`CallContext`].
//!
//! Imports point one way: `outbound` ← `progress`, `elicit` ← `call` ←
//! `interrupt` ← `invoke`.

mod auth_info;
pub(crate) mod call;
pub(crate) mod elicit;
mod extensions;
pub(crate) mod interrupt;
pub(crate) mod invoke;
mod outbound;
pub(crate) mod progress;
pub(crate) mod state_map;

pub(crate) use auth_info::allowed as scopes_allowed;
#[cfg(feature = "auth")]
pub(crate) use auth_info::quoted;
#[cfg(feature = "http")]
pub(crate) use auth_info::scope_challenge;
pub use auth_info::AuthInfo;
pub(crate) use call::CallContext;
pub use call::{CallHeaders, HeaderValue, Headers};
pub use elicit::{CannotAsk, ElicitResponse, Elicitor, InputRequest};
pub use extensions::Extensions;
pub(crate) use invoke::InvokeContext;
pub(crate) use invoke::Parts as InvokeParts;
pub use outbound::Outbound;
pub(crate) use progress::Progress;
pub use progress::{ProgressSink, ProgressUpdate};
