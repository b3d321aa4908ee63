//! Where tokens and dynamic client registrations live between requests
//! (and, with a store of your own, between runs): [`TokenStore`],
//! [`Tokens`], [`Registration`], and [`MemoryTokenStore`], the default.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
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

/// A client registered dynamically (RFC 7591) at one authorization
/// server: kept by the [`TokenStore`] so the next run presents the same
/// client instead of registering again. Registrations made ahead of time
/// ([`PreRegistered`](super::PreRegistered)) and client ID metadata
/// documents are configuration, never stored.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Registration {
    /// The issuer of the authorization server that registered the client:
    /// the registration is never shown to another one.
    pub issuer: String,
    /// The `client_id` it assigned.
    pub client_id: String,
    /// The `client_secret` it assigned, for a confidential client.
    pub client_secret: Option<String>,
    /// When the secret expires (`client_secret_expires_at`), if it does:
    /// an expired registration is replaced by a new one.
    pub secret_expires_at: Option<SystemTime>,
    /// The `token_endpoint_auth_method` it assigned, if it said.
    pub token_endpoint_auth_method: Option<String>,
    /// The redirect URIs registered; a registration is reused only for
    /// one of them (for a loopback `http://127.0.0.1` or `[::1]` URI, on
    /// any port, as RFC 8252 §7.3 has servers allow).
    pub redirect_uris: Vec<String>,
}

impl Registration {
    /// A registration as a store of your own reads it back.
    pub fn new(issuer: impl Into<String>, client_id: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret: None,
            secret_expires_at: None,
            token_endpoint_auth_method: None,
            redirect_uris: Vec::new(),
        }
    }
}

impl std::fmt::Debug for Registration {
    /// Never prints the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("secret_expires_at", &self.secret_expires_at)
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("redirect_uris", &self.redirect_uris)
            .finish()
    }
}

/// Keeps tokens per MCP server (keyed by its endpoint URL), and dynamic
/// client registrations per authorization server (keyed by its issuer).
/// The client reads tokens before every request and writes them after
/// every grant or refresh; it reads a registration before it would
/// register, writes the one it made, and clears one the authorization
/// server refused (`invalid_client`) before registering again. Implement
/// it to keep them in a keychain or a file; the registration methods have
/// defaults that keep nothing (every run then registers anew).
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

    /// The dynamic registration kept for the authorization server
    /// `issuer`, if any (by default none).
    ///
    /// # Cancel safety
    /// The caller may drop the future; a store must not be left half-read.
    async fn load_registration(&self, issuer: &str) -> Option<Registration> {
        let _ = issuer;
        None
    }

    /// Keeps `registration` for its issuer, replacing any other (by
    /// default keeps nothing).
    ///
    /// # Cancel safety
    /// A dropped future may or may not have saved it.
    async fn save_registration(&self, registration: Registration) {
        let _ = registration;
    }

    /// Forgets the registration for `issuer` (by default nothing to do).
    ///
    /// # Cancel safety
    /// A dropped future may or may not have removed it.
    async fn clear_registration(&self, issuer: &str) {
        let _ = issuer;
    }
}

/// A shared store: several [`OAuth`](super::OAuth)s (say, one per run of
/// a test, or per backend of a proxy) keeping tokens and registrations in
/// one place.
#[async_trait::async_trait]
impl<T: TokenStore + ?Sized> TokenStore for Arc<T> {
    async fn load(&self, server: &str) -> Option<Tokens> {
        (**self).load(server).await
    }

    async fn save(&self, server: &str, tokens: Tokens) {
        (**self).save(server, tokens).await;
    }

    async fn clear(&self, server: &str) {
        (**self).clear(server).await;
    }

    async fn load_registration(&self, issuer: &str) -> Option<Registration> {
        (**self).load_registration(issuer).await
    }

    async fn save_registration(&self, registration: Registration) {
        (**self).save_registration(registration).await;
    }

    async fn clear_registration(&self, issuer: &str) {
        (**self).clear_registration(issuer).await;
    }
}

/// Tokens and registrations in memory, for the life of the process (the
/// default store).
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, Tokens>>,
    registrations: Mutex<HashMap<String, Registration>>,
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

    async fn load_registration(&self, issuer: &str) -> Option<Registration> {
        self.registrations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(issuer)
            .cloned()
    }

    async fn save_registration(&self, registration: Registration) {
        self.registrations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(registration.issuer.clone(), registration);
    }

    async fn clear_registration(&self, issuer: &str) {
        self.registrations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(issuer);
    }
}
