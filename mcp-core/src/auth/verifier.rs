//! [`TokenVerifier`]: what turns a bearer token into an [`AuthInfo`], and
//! [`Rejection`]: why it did not.

use std::fmt;

use crate::context::AuthInfo;

/// Checks a bearer access token and says who it belongs to.
///
/// [`JwtVerifier`](super::JwtVerifier) (signed JWTs against the
/// authorization server's keys) and
/// [`IntrospectionVerifier`](super::IntrospectionVerifier) (opaque tokens,
/// RFC 7662) implement it; implement it yourself for anything else. A
/// verifier must check that the token was issued for *this* resource
/// (its audience), and must never send the token anywhere but to the
/// authorization server that issued it.
///
/// ```
/// use mcp_core::auth::{Rejection, TokenVerifier};
/// use mcp_core::context::AuthInfo;
///
/// /// Accepts one fixed token (a development setup).
/// struct Fixed;
///
/// #[async_trait::async_trait]
/// impl TokenVerifier for Fixed {
///     async fn verify(&self, token: &str) -> Result<AuthInfo, Rejection> {
///         if token == "dev-token" {
///             Ok(AuthInfo::new("developer").with_scopes(["files:read"]))
///         } else {
///             Err(Rejection::invalid("unknown token"))
///         }
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the bearer token, without the `Bearer ` prefix).
    ///
    /// # Cancel safety
    /// Dropping the future abandons the verification; a verifier's caches
    /// stay consistent (a fetch it started may finish for a later call).
    async fn verify(&self, token: &str) -> Result<AuthInfo, Rejection>;
}

/// Why a token was not accepted; decides the HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// The token is malformed, forged, expired, not yet valid, from another
    /// issuer, for another resource, revoked or inactive: `401` with
    /// `error="invalid_token"`. The text says which (to the client too:
    /// it never includes the token).
    InvalidToken(String),
    /// The token is valid but lacks scopes every request needs: `403` with
    /// `error="insufficient_scope"` naming them.
    InsufficientScope(Vec<String>),
    /// The verifier could not decide (the authorization server is
    /// unreachable or answered nonsense): `503`, retry later.
    Unavailable(String),
}

impl Rejection {
    /// An [`InvalidToken`](Self::InvalidToken) rejection.
    pub fn invalid(why: impl Into<String>) -> Self {
        Self::InvalidToken(why.into())
    }

    /// An [`Unavailable`](Self::Unavailable) rejection.
    pub fn unavailable(why: impl Into<String>) -> Self {
        Self::Unavailable(why.into())
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidToken(why) => write!(f, "invalid token: {why}"),
            Self::InsufficientScope(scopes) => {
                write!(f, "insufficient scope: needs {}", scopes.join(" "))
            }
            Self::Unavailable(why) => write!(f, "authorization unavailable: {why}"),
        }
    }
}

impl std::error::Error for Rejection {}
