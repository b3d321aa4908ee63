//! Enterprise-managed authorization (the
//! `io.modelcontextprotocol/enterprise-managed-authorization` extension):
//! the user's ID token from the enterprise identity provider is exchanged
//! there (RFC 8693) for an identity assertion authorization grant (an
//! ID-JAG) naming the MCP server's authorization server and resource,
//! which the client then presents to that authorization server with the
//! RFC 7523 `jwt-bearer` grant. No browser, no redirect.

use std::sync::Arc;

use serde::Deserialize;

use super::fetch::{Body, Fetcher};
use super::urls;
use crate::client::ClientError;

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

type IdTokenSource = Arc<dyn Fn() -> Result<String, ClientError> + Send + Sync>;

/// The enterprise identity provider that vouches for the user.
#[derive(Clone)]
pub struct IdentityProvider {
    token_endpoint: String,
    client_id: String,
    client_secret: Option<String>,
    id_token: IdTokenSource,
}

impl IdentityProvider {
    /// The provider's token endpoint, this client's `client_id` there,
    /// and where the user's ID token comes from (called for each grant).
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: impl Fn() -> Result<String, ClientError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            id_token: Arc::new(id_token),
        }
    }

    /// The client's secret at the provider (sent with `client_secret_post`).
    #[must_use]
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// Exchanges the ID token for an ID-JAG for `audience` (the
    /// authorization server's issuer) and `resource`.
    pub(crate) async fn id_jag(
        &self,
        fetcher: &Fetcher,
        audience: &str,
        resource: &str,
        scope: &str,
    ) -> Result<String, ClientError> {
        #[derive(Deserialize)]
        struct Exchanged {
            access_token: String,
            #[serde(default)]
            issued_token_type: Option<String>,
        }
        let id_token = (self.id_token)()?;
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("subject_token", id_token.as_str()),
            ("subject_token_type", ID_TOKEN),
            ("audience", audience),
            ("resource", resource),
            ("client_id", self.client_id.as_str()),
        ];
        if !scope.is_empty() {
            form.push(("scope", scope));
        }
        if let Some(secret) = &self.client_secret {
            form.push(("client_secret", secret));
        }
        let answer = fetcher
            .send(
                hyper::Method::POST,
                &self.token_endpoint,
                Body::Form(urls::form(&form)),
                None,
            )
            .await?;
        if !answer.status.is_success() {
            return Err(ClientError::Authorization(format!(
                "the identity provider refused the token exchange: {}",
                answer.oauth_error()
            )));
        }
        let exchanged: Exchanged = answer.json("the token exchange response")?;
        match exchanged.issued_token_type.as_deref() {
            None | Some(ID_JAG) => Ok(exchanged.access_token),
            Some(other) => Err(ClientError::Authorization(format!(
                "the identity provider issued a {other:?}, not an ID-JAG"
            ))),
        }
    }
}

impl std::fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}
