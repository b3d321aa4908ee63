//! [`ClientError`]: what a client call can fail with.

use std::fmt;

use crate::protocol::ErrorObject;

/// Why a client call failed.
///
/// A JSON-RPC error from the server keeps its code, message and data
/// ([`ClientError::Rpc`]); everything else says what went wrong on the way.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    Rpc(ErrorObject),
    /// The transport failed: the process could not start, the connection
    /// was refused or reset, an HTTP status without a JSON-RPC body.
    Transport(String),
    /// The server answered something that is not a valid reply (a result
    /// of the wrong shape, an unknown `resultType`, too many input rounds).
    Protocol(String),
    /// Authorization failed: the OAuth flow could not get a token the
    /// server accepts (feature `client-oauth`), or the server kept
    /// refusing the one it got.
    Authorization(String),
    /// No answer within the request's timeout (the request was cancelled).
    Timeout,
    /// The call was cancelled by its token.
    Cancelled,
    /// The connection is closed: no request can be sent, or it closed
    /// before this one was answered.
    Closed,
}

impl ClientError {
    /// The JSON-RPC error code, for [`ClientError::Rpc`].
    pub fn code(&self) -> Option<i64> {
        match self {
            Self::Rpc(e) => Some(e.code),
            _ => None,
        }
    }

    pub(crate) fn transport(what: impl fmt::Display) -> Self {
        Self::Transport(what.to_string())
    }

    pub(crate) fn protocol(what: impl fmt::Display) -> Self {
        Self::Protocol(what.to_string())
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rpc(e) => write!(f, "server error {}: {}", e.code, e.message),
            Self::Transport(what) => write!(f, "transport: {what}"),
            Self::Protocol(what) => write!(f, "invalid reply: {what}"),
            Self::Authorization(what) => write!(f, "authorization: {what}"),
            Self::Timeout => f.write_str("no answer within the request's timeout"),
            Self::Cancelled => f.write_str("cancelled"),
            Self::Closed => f.write_str("the connection is closed"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<ErrorObject> for ClientError {
    fn from(e: ErrorObject) -> Self {
        Self::Rpc(e)
    }
}
