//! [`AuthInfo`]: who an authenticated request comes from and what it may
//! do, attached to the request's [`Extensions`](super::Extensions).
//!
//! Over HTTP the `auth` feature's resource server attaches it from the
//! verified access token; over stdio (no OAuth: credentials come from the
//! environment) the application attaches it itself, with
//! [`StdioOptions::extension`](crate::StdioOptions) or an interceptor.
//! Either way the same scope checks apply to tools, resources and prompts
//! declared with scopes.

use std::sync::Arc;

use serde_json::{Map, Value};

/// The verified identity of a caller: its subject, the OAuth client it used,
/// the scopes it was granted and the token's other claims.
///
/// Handlers read it from [`InvokeContext::extensions`](crate::InvokeContext),
/// interceptors from [`Request::extensions`](crate::intercept::Request).
///
/// ```
/// use mcp_core::context::AuthInfo;
///
/// let who = AuthInfo::new("alice").with_scopes(["files:read", "files:write"]);
/// assert_eq!(who.principal(), "alice");
/// assert!(who.has_scope("files:read"));
/// assert!(who.grants(&["files:write".to_owned()]));
/// assert!(!who.grants(&["admin".to_owned()]));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AuthInfo {
    /// The principal sessions, tasks and `requestState` are bound to. For
    /// the `auth` feature's verifiers: `sub:<subject>`, else
    /// `client:<client id>`, else `token:<hex>` (the token's own; see the
    /// `auth` module's "Principal and scopes"). Otherwise whatever the
    /// application gave [`AuthInfo::new`].
    pub principal: Arc<str>,
    /// The token's subject (`sub`), when it has one.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id`, else `azp`).
    pub client_id: Option<String>,
    /// The granted scopes, sorted, without repeats.
    pub scopes: Vec<String>,
    /// The issuer (`iss`), when known.
    pub issuer: Option<String>,
    /// When the token expires (`exp`, seconds since the Unix epoch; a
    /// fractional `exp` rounded down).
    pub expires_at: Option<u64>,
    /// Every claim of the token (or of the introspection answer), as sent.
    pub claims: Map<String, Value>,
}

impl AuthInfo {
    /// A caller known by `principal`, with no scopes and no claims.
    pub fn new(principal: impl Into<Arc<str>>) -> Self {
        Self {
            principal: principal.into(),
            subject: None,
            client_id: None,
            scopes: Vec::new(),
            issuer: None,
            expires_at: None,
            claims: Map::new(),
        }
    }

    /// Sets the granted scopes (sorted, repeats dropped).
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        scopes.sort_unstable();
        scopes.dedup();
        self.scopes = scopes;
        self
    }

    /// Sets the subject.
    #[must_use]
    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// Sets the client id.
    #[must_use]
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the claims.
    #[must_use]
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// The principal (see [`principal`](Self::principal)).
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// True when `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// True when every scope of `needed` was granted.
    pub fn grants(&self, needed: &[String]) -> bool {
        needed.iter().all(|s| self.has_scope(s))
    }
}

/// True when the request's extensions hold an [`AuthInfo`] granting every
/// scope of `needed` (an item without scopes is open to anyone).
pub(crate) fn allowed(ext: &super::Extensions, needed: &[String]) -> bool {
    needed.is_empty() || ext.get::<AuthInfo>().is_some_and(|a| a.grants(needed))
}

/// `Bearer error="insufficient_scope", scope="…"[, resource_metadata="…"]`:
/// the `WWW-Authenticate` value of a refusal for missing `scopes`.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn scope_challenge(scopes: &[String], metadata_url: Option<&str>) -> String {
    let mut value = format!(
        "Bearer error=\"insufficient_scope\", scope={}",
        quoted_string(&scopes.join(" "))
    );
    if let Some(url) = metadata_url {
        value.push_str(", resource_metadata=");
        value.push_str(&quoted_string(url));
    }
    value
}

/// An RFC 9110 quoted-string of `text` (quotes and backslashes escaped,
/// anything outside visible ASCII and space dropped).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
fn quoted_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => {}
        }
    }
    out.push('"');
    out
}

/// The same, for the resource server's challenges.
#[cfg(feature = "auth")]
pub(crate) fn quoted(text: &str) -> String {
    quoted_string(text)
}
