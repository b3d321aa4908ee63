//! Finding the authorization server: Protected Resource Metadata
//! (RFC 9728) from the challenge's `resource_metadata` or the well-known
//! locations, then the authorization server's metadata (RFC 8414 or
//! OpenID Connect discovery), each checked before it is trusted.

use hyper::{StatusCode, Uri};
use serde::Deserialize;

use super::challenge::Challenge;
use super::fetch::Fetcher;
use super::urls;
use crate::client::ClientError;

/// Protected Resource Metadata, the members the flow uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ResourceMetadata {
    /// The resource identifier, sent as `resource` exactly as published.
    pub(crate) resource: String,
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// Authorization server metadata, the members the flow uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    #[serde(default)]
    pub(crate) registration_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: Option<bool>,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: Option<bool>,
    #[serde(default)]
    pub(crate) dpop_signing_alg_values_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) grant_types_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// True when the server offers PKCE with S256 (the code flow refuses
    /// a server that does not say so).
    pub(crate) fn offers_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
    }

    /// False only when the server lists its grant types without
    /// `refresh_token` (many that refresh do not list them at all).
    pub(crate) fn may_refresh(&self) -> bool {
        self.grant_types_supported
            .as_ref()
            .is_none_or(|g| g.iter().any(|g| g == "refresh_token"))
    }

    /// True when the server lists `method` for its token endpoint (RFC
    /// 8414: `client_secret_basic` when the list is absent).
    pub(crate) fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }
}

/// What discovery found for one server.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    pub(crate) resource: ResourceMetadata,
    pub(crate) server: ServerMetadata,
}

/// Runs discovery for the MCP endpoint `endpoint` after `challenge`.
pub(crate) async fn discover(
    fetcher: &Fetcher,
    endpoint: &Uri,
    challenge: &Challenge,
) -> Result<Discovered, ClientError> {
    let resource = resource_metadata(fetcher, endpoint, challenge).await?;
    let issuer = resource.authorization_servers.first().ok_or_else(|| {
        ClientError::Authorization(
            "the protected resource metadata names no authorization server".into(),
        )
    })?;
    let server = server_metadata(fetcher, issuer).await?;
    Ok(Discovered { resource, server })
}

/// The Protected Resource Metadata of `endpoint`: at the challenge's
/// `resource_metadata` if any, else at the well-known locations; its
/// `resource` must cover `endpoint`.
async fn resource_metadata(
    fetcher: &Fetcher,
    endpoint: &Uri,
    challenge: &Challenge,
) -> Result<ResourceMetadata, ClientError> {
    let mut candidates = Vec::new();
    if let Some(url) = &challenge.resource_metadata {
        candidates.push(url.clone());
    }
    for url in urls::resource_metadata_urls(endpoint) {
        if !candidates.contains(&url) {
            candidates.push(url);
        }
    }
    let mut tried = Vec::new();
    for url in &candidates {
        let answer = match fetcher.get(url).await {
            Ok(a) => a,
            Err(e) => {
                tried.push(format!("{url}: {e}"));
                continue;
            }
        };
        if answer.status != StatusCode::OK {
            tried.push(format!("{url}: HTTP {}", answer.status));
            continue;
        }
        let metadata: ResourceMetadata = answer.json("protected resource metadata")?;
        let resource = urls::parse(&metadata.resource)?;
        if !urls::resource_covers(&resource, endpoint) {
            return Err(ClientError::Authorization(format!(
                "the protected resource metadata at {url} is for {:?}, not for {endpoint}: refusing to authorize",
                metadata.resource
            )));
        }
        return Ok(metadata);
    }
    Err(ClientError::Authorization(format!(
        "no protected resource metadata found ({})",
        tried.join("; ")
    )))
}

/// The metadata of the authorization server `issuer`, from the first
/// well-known location that has it; its `issuer` must be `issuer`
/// exactly.
pub(crate) async fn server_metadata(
    fetcher: &Fetcher,
    issuer: &str,
) -> Result<ServerMetadata, ClientError> {
    let issuer_uri = urls::parse(issuer)?;
    let mut tried = Vec::new();
    for url in urls::server_metadata_urls(&issuer_uri) {
        let answer = match fetcher.get(&url).await {
            Ok(a) => a,
            Err(e) => {
                tried.push(format!("{url}: {e}"));
                continue;
            }
        };
        if answer.status != StatusCode::OK {
            tried.push(format!("{url}: HTTP {}", answer.status));
            continue;
        }
        let metadata: ServerMetadata = answer.json("authorization server metadata")?;
        if metadata.issuer != issuer {
            return Err(ClientError::Authorization(format!(
                "the metadata at {url} names issuer {:?}, not {issuer:?}: refusing it",
                metadata.issuer
            )));
        }
        return Ok(metadata);
    }
    Err(ClientError::Authorization(format!(
        "no metadata found for authorization server {issuer} ({})",
        tried.join("; ")
    )))
}
