//! [`ResourceServer`]: this server as an OAuth 2.1 resource server — its
//! Protected Resource Metadata (RFC 9728), the bearer token of each
//! request, and the `WWW-Authenticate` challenges of its refusals.

use std::sync::Arc;

use hyper::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use serde_json::{json, Value};

use super::jwt::JwtVerifier;
use super::verifier::{Rejection, TokenVerifier};
use crate::context::{quoted, scope_challenge, AuthInfo};

/// The well-known path of Protected Resource Metadata (RFC 9728 §3).
pub const PROTECTED_RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// This MCP server as an OAuth resource server: set it with
/// [`HttpOptions::resource_server`](crate::HttpOptions::resource_server).
///
/// Every request to the MCP endpoint must then carry
/// `Authorization: Bearer <token>` that the verifier accepts; the token's
/// principal binds sessions and `requestState`, and its [`AuthInfo`] is in
/// the request's extensions. The token goes no further than the verifier.
///
/// With [`serve_http`](crate::serve_http) the metadata paths are served
/// beside the endpoint. An [`McpHttpService`](crate::transport::http::McpHttpService)
/// mounted in your own router must also receive
/// `GET /.well-known/oauth-protected-resource` and
/// `GET /.well-known/oauth-protected-resource<endpoint path>`.
///
/// ```
/// use mcp_core::auth::ResourceServer;
/// use mcp_core::HttpOptions;
///
/// let rs = ResourceServer::jwt("http://127.0.0.1:8000/mcp", "http://127.0.0.1:9000")
///     .resource_name("Demo files");
/// assert_eq!(
///     rs.metadata_url(),
///     "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
/// );
/// let options = HttpOptions::new().port(8000).resource_server(rs);
/// # drop(options);
/// ```
#[derive(Clone)]
pub struct ResourceServer {
    resource: String,
    metadata_url: String,
    authorization_servers: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
    extra_scopes: Vec<String>,
    required_scopes: Vec<String>,
    resource_name: Option<String>,
    documentation: Option<String>,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("required_scopes", &self.required_scopes)
            .finish_non_exhaustive()
    }
}

/// Why a request was refused, with what its answer needs.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// No bearer token: `401` with a bare challenge.
    Missing,
    /// A token the verifier refused: `401 invalid_token`, `403
    /// insufficient_scope` or `503`.
    Rejected(Rejection),
}

impl ResourceServer {
    /// A resource server for `resource` (this server's canonical URI, the
    /// audience its tokens must name, e.g. `https://mcp.example.com/mcp`)
    /// verifying tokens with `verifier`. Name its authorization servers
    /// with [`authorization_server`](Self::authorization_server).
    pub fn new(resource: impl Into<String>, verifier: impl TokenVerifier) -> Self {
        let resource = resource.into();
        Self {
            metadata_url: metadata_url(&resource),
            resource,
            authorization_servers: Vec::new(),
            verifier: Arc::new(verifier),
            extra_scopes: Vec::new(),
            required_scopes: Vec::new(),
            resource_name: None,
            documentation: None,
        }
    }

    /// JWT access tokens of `issuer` for `resource` (a [`JwtVerifier`]
    /// with its defaults); `issuer` is published as the authorization server.
    pub fn jwt(resource: impl Into<String>, issuer: impl Into<String>) -> Self {
        let resource = resource.into();
        let issuer = issuer.into();
        let verifier = JwtVerifier::new(issuer.clone(), resource.clone());
        Self::new(resource, verifier).authorization_server(issuer)
    }

    /// Publishes `issuer` in `authorization_servers`.
    #[must_use]
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// Scopes published in `scopes_supported` besides those the catalog's
    /// tools, resources and prompts declare.
    #[must_use]
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.extra_scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Scopes every request needs (a token without them is answered `403
    /// insufficient_scope`); also named in the `401` challenge.
    #[must_use]
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required_scopes
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// The human-readable `resource_name` of the metadata.
    #[must_use]
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The `resource_documentation` URL of the metadata.
    #[must_use]
    pub fn documentation(mut self, url: impl Into<String>) -> Self {
        self.documentation = Some(url.into());
        self
    }

    /// The resource identifier.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where the metadata is served: the well-known path with the
    /// resource's path appended (RFC 9728 §3.1), as named in every challenge.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// True for a path the metadata is served at: the well-known path, bare
    /// or followed by the MCP endpoint's path.
    pub(crate) fn is_metadata_path(&self, path: &str, endpoint: &str) -> bool {
        match path.strip_prefix(PROTECTED_RESOURCE_METADATA_PATH) {
            Some("") | Some("/") => true,
            Some(rest) => rest == endpoint || rest == resource_path(&self.resource),
            None => false,
        }
    }

    /// The metadata document, with `scopes_supported` the union of
    /// `declared` (the catalog's) and the configured scopes.
    pub(crate) fn metadata(&self, declared: Vec<String>) -> Value {
        let mut scopes = declared;
        scopes.extend(self.extra_scopes.iter().cloned());
        scopes.extend(self.required_scopes.iter().cloned());
        scopes.sort_unstable();
        scopes.dedup();
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
        });
        if let (Some(name), Value::Object(map)) = (&self.resource_name, &mut doc) {
            map.insert("resource_name".into(), Value::String(name.clone()));
        }
        if let (Some(url), Value::Object(map)) = (&self.documentation, &mut doc) {
            map.insert("resource_documentation".into(), Value::String(url.clone()));
        }
        doc
    }

    /// The bearer token's [`AuthInfo`], or why there is none. Only the
    /// `Authorization` header is read (never a query parameter).
    pub(crate) async fn authenticate(&self, headers: &HeaderMap) -> Result<AuthInfo, Refusal> {
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(Refusal::Missing);
        };
        let token = match bearer(value) {
            Some(Ok(token)) => token,
            Some(Err(())) => {
                return Err(Refusal::Rejected(Rejection::invalid(
                    "malformed bearer token",
                )))
            }
            None => return Err(Refusal::Missing),
        };
        let info = self
            .verifier
            .verify(token)
            .await
            .map_err(Refusal::Rejected)?;
        let missing: Vec<String> = self
            .required_scopes
            .iter()
            .filter(|s| !info.has_scope(s))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(Refusal::Rejected(Rejection::InsufficientScope(missing)));
        }
        Ok(info)
    }

    /// The `WWW-Authenticate` value of a `401`: the metadata URL, the
    /// required scopes, and `error="invalid_token"` for a refused token.
    pub(crate) fn challenge(&self, invalid: Option<&str>) -> HeaderValue {
        let mut parts = Vec::with_capacity(4);
        if let Some(why) = invalid {
            parts.push(r#"error="invalid_token""#.to_owned());
            parts.push(format!("error_description={}", quoted(why)));
        }
        if !self.required_scopes.is_empty() {
            parts.push(format!("scope={}", quoted(&self.required_scopes.join(" "))));
        }
        parts.push(format!("resource_metadata={}", quoted(&self.metadata_url)));
        header(&format!("Bearer {}", parts.join(", ")))
    }

    /// The `WWW-Authenticate` value of a `403` for missing `scopes`.
    pub(crate) fn scope_challenge(&self, scopes: &[String]) -> HeaderValue {
        header(&scope_challenge(scopes, Some(&self.metadata_url)))
    }
}

fn header(value: &str) -> HeaderValue {
    HeaderValue::from_str(value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

/// The token of `Bearer <token>` (scheme case-insensitive): `None` for
/// another scheme, `Err` for a token that is not a `b64token` (RFC 6750).
fn bearer(value: &HeaderValue) -> Option<Result<&str, ()>> {
    let value = value.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = token.trim_matches(' ');
    let b64token = !token.is_empty()
        && token.trim_end_matches('=').bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        });
    Some(if b64token { Ok(token) } else { Err(()) })
}

/// The path of a resource URI (`""` for none).
fn resource_path(resource: &str) -> &str {
    let after_scheme = resource
        .find("://")
        .map_or(resource, |i| &resource[i + 3..]);
    let path = after_scheme.find('/').map_or("", |i| &after_scheme[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("");
    path.trim_end_matches('/')
}

/// The metadata URL of `resource`: its origin, the well-known path, then
/// its path (RFC 9728 §3.1).
fn metadata_url(resource: &str) -> String {
    let path = resource_path(resource);
    let origin_end = resource.find("://").map_or(0, |i| i + 3);
    let host_end = resource[origin_end..]
        .find(['/', '?', '#'])
        .map_or(resource.len(), |i| origin_end + i);
    format!(
        "{}{PROTECTED_RESOURCE_METADATA_PATH}{path}",
        &resource[..host_end]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_url_inserts_the_well_known_path() {
        assert_eq!(
            metadata_url("https://a.example/mcp"),
            "https://a.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8000"),
            "http://127.0.0.1:8000/.well-known/oauth-protected-resource"
        );
        assert_eq!(resource_path("https://a.example/x/mcp/?q"), "/x/mcp");
    }

    #[test]
    fn bearer_tokens_are_b64tokens() {
        let v = |s: &'static str| HeaderValue::from_static(s);
        assert_eq!(
            bearer(&v("Bearer abc.def-_~+/==")),
            Some(Ok("abc.def-_~+/=="))
        );
        assert_eq!(bearer(&v("bearer abc")), Some(Ok("abc")));
        assert_eq!(bearer(&v("Bearer a\"b")), Some(Err(())));
        assert_eq!(bearer(&v("Bearer ")), Some(Err(())));
        assert_eq!(bearer(&v("Basic abc")), None);
        assert_eq!(quoted("a\"b\\c\n"), "\"a\\\"b\\\\c\"");
    }
}
