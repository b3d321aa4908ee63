//! Who the client is at an authorization server, in the MCP spec's
//! order: credentials registered ahead of time, a client ID metadata
//! document (a URL `client_id`, where the server says it supports them),
//! and dynamic client registration (RFC 7591) as the deprecated fallback,
//! kept in the [`TokenStore`] and reused until the server refuses it or
//! its secret expires. A registration belongs to one issuer and is never
//! shown to another.

use std::time::{Duration, SystemTime};

use serde::Deserialize;
use serde_json::json;

use super::discovery::ServerMetadata;
use super::fetch::{Body, Fetcher};
use super::store::{Registration, TokenStore};
use crate::client::ClientError;

/// Client credentials registered with an authorization server ahead of
/// time (what the spec calls pre-registration).
#[derive(Clone)]
pub struct PreRegistered {
    pub(crate) issuer: Option<String>,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    #[cfg(feature = "client-oauth-jwt")]
    pub(crate) key: Option<std::sync::Arc<p256::ecdsa::SigningKey>>,
}

impl PreRegistered {
    /// A public client (no secret) with this `client_id`, used at any
    /// authorization server unless bound with [`PreRegistered::issuer`].
    pub fn new(client_id: impl Into<String>) -> Self {
        Self {
            issuer: None,
            client_id: client_id.into(),
            client_secret: None,
            #[cfg(feature = "client-oauth-jwt")]
            key: None,
        }
    }

    /// Authenticates with `private_key_jwt` (feature `client-oauth-jwt`):
    /// ES256 assertions signed with this P-256 key (PKCS#8 PEM), instead
    /// of a secret.
    ///
    /// # Errors
    /// `pem` is not a PKCS#8 P-256 private key.
    #[cfg(feature = "client-oauth-jwt")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client-oauth-jwt")))]
    pub fn private_key_pem(mut self, pem: &str) -> Result<Self, ClientError> {
        self.key = Some(std::sync::Arc::new(super::assertion::key_from_pem(pem)?));
        Ok(self)
    }

    /// A confidential client: its secret.
    #[must_use]
    pub fn secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// Used only at the authorization server with this issuer (compared
    /// exactly); recommended, so a resource that moves to another server
    /// never receives these credentials.
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }
}

impl std::fmt::Debug for PreRegistered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreRegistered")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .finish()
    }
}

/// How the client authenticates at the token endpoint.
#[derive(Clone)]
pub(crate) enum AuthMethod {
    /// `client_secret_basic`: HTTP Basic with the form-encoded id and secret.
    Basic,
    /// `client_secret_post`: `client_id` and `client_secret` in the form.
    Post,
    /// `none`: a public client sends only its `client_id`.
    None,
    /// `private_key_jwt`: a signed assertion (RFC 7523 §2.2).
    #[cfg(feature = "client-oauth-jwt")]
    PrivateKeyJwt(std::sync::Arc<p256::ecdsa::SigningKey>),
}

impl AuthMethod {
    fn named(name: &str) -> Option<Self> {
        match name {
            "client_secret_basic" => Some(Self::Basic),
            "client_secret_post" => Some(Self::Post),
            "none" => Some(Self::None),
            _ => None,
        }
    }

    /// The method for a client with or without a secret at `server`:
    /// Basic, then Post for a secret, `none` without one.
    fn choose(server: &ServerMetadata, has_secret: bool) -> Self {
        if !has_secret {
            Self::None
        } else if server.supports_auth_method("client_secret_basic") {
            Self::Basic
        } else if server.supports_auth_method("client_secret_post") {
            Self::Post
        } else {
            Self::Basic
        }
    }
}

/// The client's identity at one authorization server.
#[derive(Clone)]
pub(crate) struct ClientId {
    pub(crate) issuer: String,
    pub(crate) id: String,
    pub(crate) secret: Option<String>,
    pub(crate) method: AuthMethod,
    /// Registered dynamically (kept in the store; replaced when refused).
    pub(crate) dynamic: bool,
}

/// What the flow knows about the client itself.
pub(crate) struct Identity<'a> {
    pub(crate) name: &'a str,
    pub(crate) metadata_url: Option<&'a str>,
    pub(crate) pre_registered: &'a [PreRegistered],
    pub(crate) dynamic_registration: bool,
    pub(crate) redirect_uri: &'a str,
    /// Where dynamic registrations are kept.
    pub(crate) store: &'a dyn TokenStore,
}

/// Finds or makes the client's identity at `server`.
pub(crate) async fn identify(
    fetcher: &Fetcher,
    server: &ServerMetadata,
    me: &Identity<'_>,
) -> Result<ClientId, ClientError> {
    let issuer = server.issuer.clone();
    let pre = me
        .pre_registered
        .iter()
        .find(|p| p.issuer.as_deref() == Some(issuer.as_str()))
        .or_else(|| me.pre_registered.iter().find(|p| p.issuer.is_none()));
    if let Some(p) = pre {
        #[cfg(feature = "client-oauth-jwt")]
        if let Some(key) = &p.key {
            return Ok(ClientId {
                method: AuthMethod::PrivateKeyJwt(std::sync::Arc::clone(key)),
                issuer,
                id: p.client_id.clone(),
                secret: None,
                dynamic: false,
            });
        }
        return Ok(ClientId {
            method: AuthMethod::choose(server, p.client_secret.is_some()),
            issuer,
            id: p.client_id.clone(),
            secret: p.client_secret.clone(),
            dynamic: false,
        });
    }
    if let Some(url) = me.metadata_url {
        // A metadata document's URL is https with a path (the CIMD draft).
        let usable = super::urls::parse(url)
            .is_ok_and(|u| u.scheme_str() == Some("https") && u.path().len() > 1);
        if usable && server.client_id_metadata_document_supported == Some(true) {
            return Ok(ClientId {
                issuer,
                id: url.to_owned(),
                secret: None,
                method: AuthMethod::None,
                dynamic: false,
            });
        }
    }
    match &server.registration_endpoint {
        Some(endpoint) if me.dynamic_registration => {
            if let Some(kept) = me.store.load_registration(&issuer).await {
                if reusable(&kept, &issuer, me.redirect_uri, SystemTime::now()) {
                    return Ok(from_registration(server, kept));
                }
            }
            let made = register(fetcher, server, endpoint, me).await?;
            me.store.save_registration(made.clone()).await;
            Ok(from_registration(server, made))
        }
        _ => Err(ClientError::Authorization(format!(
            "no way to identify this client at {issuer}: no credentials registered for it, \
             no client ID metadata document it accepts, and no dynamic registration"
        ))),
    }
}

/// True when `kept` may be presented to `issuer` for `redirect_uri` at `now`.
fn reusable(kept: &Registration, issuer: &str, redirect_uri: &str, now: SystemTime) -> bool {
    kept.issuer == issuer
        && kept.secret_expires_at.is_none_or(|at| at > now)
        && kept
            .redirect_uris
            .iter()
            .any(|r| same_redirect(r, redirect_uri))
}

/// Equal, or both loopback-IP `http` URIs that differ at most in the
/// port (RFC 8252 §7.3: a native app's listener gets a port per run).
fn same_redirect(registered: &str, current: &str) -> bool {
    if registered == current {
        return true;
    }
    let loopback = |uri: &str| -> Option<(String, String)> {
        let u = super::urls::parse(uri).ok()?;
        let host = u.host()?;
        let is_loopback = host == "127.0.0.1" || host == "[::1]";
        (u.scheme_str() == Some("http") && is_loopback).then(|| {
            let rest = u.path_and_query().map(|p| p.as_str().to_owned());
            (host.to_owned(), rest.unwrap_or_default())
        })
    };
    matches!((loopback(registered), loopback(current)), (Some(a), Some(b)) if a == b)
}

/// The identity a kept or new registration gives at `server`.
fn from_registration(server: &ServerMetadata, r: Registration) -> ClientId {
    let method = r
        .token_endpoint_auth_method
        .as_deref()
        .and_then(AuthMethod::named)
        .unwrap_or_else(|| AuthMethod::choose(server, r.client_secret.is_some()));
    ClientId {
        issuer: r.issuer,
        id: r.client_id,
        secret: r.client_secret,
        method,
        dynamic: true,
    }
}

/// RFC 7591 registration at `endpoint`.
async fn register(
    fetcher: &Fetcher,
    server: &ServerMetadata,
    endpoint: &str,
    me: &Identity<'_>,
) -> Result<Registration, ClientError> {
    #[derive(Deserialize)]
    struct Registered {
        client_id: String,
        #[serde(default)]
        client_secret: Option<String>,
        /// Seconds since the epoch; 0 for never.
        #[serde(default)]
        client_secret_expires_at: Option<u64>,
        #[serde(default)]
        token_endpoint_auth_method: Option<String>,
    }
    let asked = if server.supports_auth_method("none") {
        "none"
    } else if server.supports_auth_method("client_secret_basic") {
        "client_secret_basic"
    } else {
        "client_secret_post"
    };
    // A server that lists its grant types refuses a registration asking
    // for one it does not have (oidc-provider without refresh tokens).
    let grant_types: &[&str] = if server.may_refresh() {
        &["authorization_code", "refresh_token"]
    } else {
        &["authorization_code"]
    };
    let body = json!({
        "client_name": me.name,
        "redirect_uris": [me.redirect_uri],
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": asked,
        "application_type": "native",
    });
    let body = serde_json::to_vec(&body).map_err(|e| ClientError::Authorization(e.to_string()))?;
    let answer = fetcher
        .send(hyper::Method::POST, endpoint, Body::Json(body), None)
        .await?;
    if !answer.status.is_success() {
        return Err(ClientError::Authorization(format!(
            "dynamic client registration at {endpoint} refused: {}",
            answer.oauth_error()
        )));
    }
    let registered: Registered = answer.json("the client registration")?;
    Ok(Registration {
        issuer: server.issuer.clone(),
        client_id: registered.client_id,
        client_secret: registered.client_secret,
        secret_expires_at: registered
            .client_secret_expires_at
            .filter(|&at| at != 0)
            .and_then(|at| SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(at))),
        token_endpoint_auth_method: registered.token_endpoint_auth_method,
        redirect_uris: vec![me.redirect_uri.to_owned()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(redirect: &str) -> Registration {
        let mut r = Registration::new("https://as.example", "dyn-1");
        r.redirect_uris = vec![redirect.to_owned()];
        r
    }

    #[test]
    fn a_kept_registration_fits_its_issuer_and_redirect_only() {
        let now = SystemTime::now();
        let r = kept("https://app.example/cb");
        assert!(reusable(
            &r,
            "https://as.example",
            "https://app.example/cb",
            now
        ));
        assert!(!reusable(
            &r,
            "https://other.example",
            "https://app.example/cb",
            now
        ));
        assert!(!reusable(
            &r,
            "https://as.example",
            "https://app.example/other",
            now
        ));
    }

    #[test]
    fn a_loopback_redirect_fits_on_any_port_but_not_another_path_or_host() {
        let now = SystemTime::now();
        let r = kept("http://127.0.0.1:4711/callback");
        let at = |uri: &str| reusable(&r, "https://as.example", uri, now);
        assert!(at("http://127.0.0.1:5000/callback"));
        assert!(!at("http://127.0.0.1:5000/other"));
        assert!(!at("http://localhost:4711/callback"));
        assert!(!at("https://127.0.0.1:4711/callback"));
        let r = kept("https://app.example:443/cb");
        assert!(!reusable(
            &r,
            "https://as.example",
            "https://app.example:8443/cb",
            now
        ));
    }

    #[test]
    fn an_expired_secret_is_not_reused() {
        let now = SystemTime::now();
        let mut r = kept("https://app.example/cb");
        r.secret_expires_at = Some(now - Duration::from_secs(1));
        assert!(!reusable(
            &r,
            "https://as.example",
            "https://app.example/cb",
            now
        ));
        r.secret_expires_at = Some(now + Duration::from_secs(60));
        assert!(reusable(
            &r,
            "https://as.example",
            "https://app.example/cb",
            now
        ));
    }
}
