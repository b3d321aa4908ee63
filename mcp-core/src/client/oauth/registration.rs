//! Who the client is at an authorization server, in the MCP spec's
//! order: credentials registered ahead of time, a client ID metadata
//! document (a URL `client_id`, where the server says it supports them),
//! and dynamic client registration (RFC 7591) as the deprecated fallback.
//! A registration belongs to one issuer and is never shown to another.

use serde::Deserialize;
use serde_json::json;

use super::discovery::ServerMetadata;
use super::fetch::{Body, Fetcher};
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
}

/// What the flow knows about the client itself.
pub(crate) struct Identity<'a> {
    pub(crate) name: &'a str,
    pub(crate) metadata_url: Option<&'a str>,
    pub(crate) pre_registered: &'a [PreRegistered],
    pub(crate) dynamic_registration: bool,
    pub(crate) redirect_uri: &'a str,
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
            });
        }
        return Ok(ClientId {
            method: AuthMethod::choose(server, p.client_secret.is_some()),
            issuer,
            id: p.client_id.clone(),
            secret: p.client_secret.clone(),
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
            });
        }
    }
    match &server.registration_endpoint {
        Some(endpoint) if me.dynamic_registration => register(fetcher, server, endpoint, me).await,
        _ => Err(ClientError::Authorization(format!(
            "no way to identify this client at {issuer}: no credentials registered for it, \
             no client ID metadata document it accepts, and no dynamic registration"
        ))),
    }
}

/// RFC 7591 registration at `endpoint`.
async fn register(
    fetcher: &Fetcher,
    server: &ServerMetadata,
    endpoint: &str,
    me: &Identity<'_>,
) -> Result<ClientId, ClientError> {
    #[derive(Deserialize)]
    struct Registered {
        client_id: String,
        #[serde(default)]
        client_secret: Option<String>,
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
    let body = json!({
        "client_name": me.name,
        "redirect_uris": [me.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
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
    let method = registered
        .token_endpoint_auth_method
        .as_deref()
        .and_then(AuthMethod::named)
        .unwrap_or_else(|| AuthMethod::choose(server, registered.client_secret.is_some()));
    Ok(ClientId {
        issuer: server.issuer.clone(),
        id: registered.client_id,
        secret: registered.client_secret,
        method,
    })
}
