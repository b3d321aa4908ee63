//! [`IntrospectionVerifier`]: opaque access tokens checked with the
//! authorization server's introspection endpoint (RFC 7662), answers
//! cached for a bounded time in a bounded table.

use std::time::Duration;

use hyper::header::HeaderValue;
use serde_json::{Map, Value};

use super::cache::{key_of, AnswerCache, TokenKey};
use super::claims::{auth_info, check_times, numeric_date, reusable_for};
use super::fetch::{form_encode, Fetcher};
use super::verifier::{Rejection, TokenVerifier};
use crate::context::AuthInfo;

/// Default [`IntrospectionVerifier::cache_entries`].
pub const DEFAULT_INTROSPECTION_CACHE: usize = 1024;
/// Default [`IntrospectionVerifier::cache_ttl`].
const DEFAULT_TTL: Duration = Duration::from_secs(60);
/// Longest token sent for introspection (16 KiB).
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Verifies tokens by asking the authorization server (RFC 7662
/// introspection), authenticating as a confidential client with HTTP
/// Basic (`client_secret_basic`).
///
/// An active answer must name this resource in `aud` when it has an
/// `aud` (and must have one when [`require_audience`](Self::require_audience)
/// is set), must be unexpired and valid already (`exp`, `nbf` as RFC 7519
/// NumericDates, a fraction counted; a malformed one refuses the token), and
/// must come from the configured issuer when one is set. Its principal is
/// `sub:<sub>`, else `client:<client_id>`; an answer with neither (RFC 7662
/// requires only `active`) gives the token a principal of its own,
/// `token:<hash>`, shared with no other token (see the
/// [module docs](super#principal-and-scopes)). Answers (active or not) are cached, keyed by a
/// SHA-256 of the token (the token itself is not kept), for at most
/// [`cache_ttl`](Self::cache_ttl) and never past the token's `exp`; the
/// table holds at most [`cache_entries`](Self::cache_entries) answers.
///
/// ```
/// use mcp_core::auth::IntrospectionVerifier;
///
/// let verifier = IntrospectionVerifier::new(
///     "http://127.0.0.1:9000/token/introspection",
///     "mcp-server",
///     "its-secret",
///     "http://127.0.0.1:8000/mcp",
/// );
/// # drop(verifier);
/// ```
pub struct IntrospectionVerifier {
    endpoint: String,
    authorization: Option<HeaderValue>,
    resource: String,
    issuer: Option<String>,
    require_audience: bool,
    fetcher: Fetcher,
    cache: AnswerCache,
    cache_max: usize,
    cache_ttl: Duration,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Introspects at `endpoint` as client `client_id`/`client_secret`;
    /// `resource` is this server's canonical URI (the audience tokens must
    /// name).
    pub fn new(
        endpoint: impl Into<String>,
        client_id: &str,
        client_secret: &str,
        resource: impl Into<String>,
    ) -> Self {
        // RFC 6749 §2.3.1: both parts form-encoded before Basic encoding.
        let pair = format!("{}:{}", form_encode(client_id), form_encode(client_secret));
        let basic = format!("Basic {}", crate::protocol::base64::encode(pair.as_bytes()));
        Self {
            endpoint: endpoint.into(),
            authorization: HeaderValue::from_str(&basic).ok(),
            resource: resource.into(),
            issuer: None,
            require_audience: false,
            fetcher: Fetcher::default(),
            cache: AnswerCache::new(DEFAULT_INTROSPECTION_CACHE, DEFAULT_TTL),
            cache_max: DEFAULT_INTROSPECTION_CACHE,
            cache_ttl: DEFAULT_TTL,
        }
    }

    /// Refuses answers whose `iss` is not `issuer`.
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Refuses active answers without an `aud` (by default an answer
    /// without one is accepted: many servers leave it out).
    #[must_use]
    pub fn require_audience(mut self, require: bool) -> Self {
        self.require_audience = require;
        self
    }

    /// How long an answer is reused (default 60 s; never past `exp`).
    #[must_use]
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache = AnswerCache::new(self.cache_max, ttl);
        self.cache_ttl = ttl;
        self
    }

    /// How many answers are kept at most (default
    /// [`DEFAULT_INTROSPECTION_CACHE`]; 0 turns the cache off).
    #[must_use]
    pub fn cache_entries(mut self, n: usize) -> Self {
        self.cache = AnswerCache::new(n, self.cache_ttl);
        self.cache_max = n;
        self
    }

    fn judge(&self, answer: Map<String, Value>, token: &TokenKey) -> Result<AuthInfo, Rejection> {
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(Rejection::invalid("the token is not active"));
        }
        // The authorization server said `active`; its `exp`/`nbf` are
        // checked too (with their fraction, no leeway), so a stale or
        // cached answer never outlives the token.
        check_times(&answer, Duration::ZERO)?;
        if let Some(issuer) = &self.issuer {
            if answer.get("iss").and_then(Value::as_str) != Some(issuer) {
                return Err(Rejection::invalid("wrong issuer"));
            }
        }
        let for_us = match answer.get("aud") {
            Some(Value::String(aud)) => *aud == self.resource,
            Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(&self.resource)),
            None => !self.require_audience,
            Some(_) => false,
        };
        if !for_us {
            return Err(Rejection::invalid(
                "the token is not for this resource (aud)",
            ));
        }
        Ok(auth_info(answer, token))
    }
}

#[async_trait::async_trait]
impl TokenVerifier for IntrospectionVerifier {
    async fn verify(&self, token: &str) -> Result<AuthInfo, Rejection> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Rejection::invalid("the token is too long"));
        }
        let key = key_of(token);
        if let Some(hit) = self.cache.get(&key) {
            return hit;
        }
        let form = format!("token={}&token_type_hint=access_token", form_encode(token));
        let answer = match self
            .fetcher
            .post_form(&self.endpoint, form, self.authorization.clone())
            .await
        {
            Ok(Value::Object(answer)) => self.judge(answer, &key),
            Ok(_) => Err(Rejection::unavailable(
                "the introspection answer is not a JSON object",
            )),
            Err(e) => Err(Rejection::unavailable(e)),
        };
        // An answer that could not be had is not kept: the next call asks.
        if !matches!(answer, Err(Rejection::Unavailable(_))) {
            let exp = answer
                .as_ref()
                .ok()
                .and_then(|info| numeric_date(&info.claims, "exp").ok().flatten());
            let life = reusable_for(self.cache.ttl(), exp);
            self.cache.put(key, &answer, life);
        }
        answer
    }
}
