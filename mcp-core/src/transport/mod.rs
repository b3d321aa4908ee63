//! Transports, and the API for writing your own: a transport decodes a
//! [`Frame`], hands it to [`McpServer::accept`](crate::McpServer::accept)
//! with a [`CallContext`] and its [`Session`], and writes the [`Response`]s.
//! The built-in ones are the modules `stdio` and `http` (features of the
//! same names); their entry points, `serve_stdio` and `serve_http`, are at
//! the crate root.

#[cfg(feature = "stdio")]
#[cfg_attr(docsrs, doc(cfg(feature = "stdio")))]
pub mod stdio;

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;

pub use crate::context::call::CallContext;
pub use crate::request_state::{StateKey, StateKeyError, StateKeys};
pub use crate::server::{
    parse_payload, Admission, Admit, Call, Frame, ParseError, PendingCall, Permit, Response,
    Started, Unpolled, DEFAULT_CLIENT_REQUEST_TIMEOUT, DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
};
pub use crate::session::Session;
