//! Where tokens live between requests (and, with a store of your own,
//! between runs): [`TokenStore`], and [`MemoryTokenStore`], the default.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

/// The tokens one authorization server issued for one MCP server.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tokens {
    /// The access token, sent as `Authorization: Bearer`.
    pub access_token: String,
    /// The refresh token, if the server issued one.
    pub refresh_token: Option<String>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<SystemTime>,
    /// The scopes granted (or, when the server did not say, requested).
    pub scopes: Vec<String>,
    /// The issuer of the authorization server that issued them: tokens
    /// are never presented to, or refreshed at, another one.
    pub issuer: String,
    /// The `client_id` they were issued to (a refresh must use it).
    pub client_id: String,
    /// True for a DPoP-bound access token (sent as `Authorization: DPoP`
    /// with a proof; only the `OAuth` holding its key can use it).
    pub dpop_bound: bool,
}

impl Tokens {
    /// Tokens as a store of your own reads them back.
    pub fn new(
        access_token: impl Into<String>,
        issuer: impl Into<String>,
        client_id: impl Into<String>,
    ) -> Self {
        Self {
            access_token: access_token.into(),
            refresh_token: None,
            expires_at: None,
            scopes: Vec::new(),
            issuer: issuer.into(),
            client_id: client_id.into(),
            dpop_bound: false,
        }
    }

    /// True when the access token has expired, or will within `margin`.
    pub fn expires_within(&self, margin: std::time::Duration) -> bool {
        self.expires_at
            .is_some_and(|at| at <= SystemTime::now() + margin)
    }
}

impl std::fmt::Debug for Tokens {
    /// Never prints a token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("refresh_token", &self.refresh_token.is_some())
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("dpop_bound", &self.dpop_bound)
            .finish_non_exhaustive()
    }
}

/// Keeps tokens per MCP server (keyed by its endpoint URL). The client
/// reads them before every request and writes them after every grant or
/// refresh; implement it to keep them in a keychain or a file.
#[async_trait::async_trait]
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens for `server`, if any.
    ///
    /// # Cancel safety
    /// The caller may drop the future; a store must not be left half-read.
    async fn load(&self, server: &str) -> Option<Tokens>;

    /// Replaces the tokens for `server`.
    ///
    /// # Cancel safety
    /// A dropped future may or may not have saved the tokens.
    async fn save(&self, server: &str, tokens: Tokens);

    /// Forgets the tokens for `server`.
    ///
    /// # Cancel safety
    /// A dropped future may or may not have removed them.
    async fn clear(&self, server: &str);
}

/// Tokens in memory, for the life of the process (the default store).
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, Tokens>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait::async_trait]
impl TokenStore for MemoryTokenStore {
    async fn load(&self, server: &str) -> Option<Tokens> {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(server)
            .cloned()
    }

    async fn save(&self, server: &str, tokens: Tokens) {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(server.to_owned(), tokens);
    }

    async fn clear(&self, server: &str) {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(server);
    }
}
