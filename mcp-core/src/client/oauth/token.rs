//! The token endpoint: the authorization code exchange (with the PKCE
//! verifier and the resource indicator, RFC 8707) and refresh, with the
//! client authenticated as its registration says.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use serde::Deserialize;

use super::challenge::split_scopes;
use super::fetch::{Body, Fetcher};
use super::registration::{AuthMethod, ClientId};
use super::store::Tokens;
use super::{urls, Dpop};
use crate::client::ClientError;
use crate::protocol::base64;

/// A grant to ask for.
pub(crate) enum Grant<'a> {
    /// `authorization_code`.
    Code {
        code: &'a str,
        redirect_uri: &'a str,
        verifier: &'a str,
    },
    /// `refresh_token`.
    Refresh { refresh_token: &'a str },
    /// `client_credentials` (the client acting for itself), for `scope`.
    ClientCredentials { scope: &'a str },
    /// RFC 7523 `jwt-bearer` with a workload's `assertion`, for `scope`.
    JwtBearer { assertion: &'a str, scope: &'a str },
}

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// A refused or failed token request.
pub(crate) struct TokenError {
    /// The server refused the client itself (`invalid_client`, RFC 6749
    /// §5.2): a dynamic registration it forgot is worth replacing.
    pub(crate) invalid_client: bool,
    pub(crate) error: ClientError,
}

impl From<ClientError> for TokenError {
    fn from(error: ClientError) -> Self {
        Self {
            invalid_client: false,
            error,
        }
    }
}

impl From<TokenError> for ClientError {
    fn from(e: TokenError) -> Self {
        e.error
    }
}

/// A DPoP key and where the authorization server's nonce is kept.
pub(crate) type DpopAt<'a> = Option<(&'a Dpop, &'a Mutex<Option<String>>)>;

/// Asks `token_endpoint` for tokens for `resource`; `requested` are the
/// scopes asked for (the granted ones when the answer does not say);
/// with `dpop`, for a DPoP-bound token (a `use_dpop_nonce` refusal is
/// retried once with the server's nonce).
pub(crate) async fn request(
    fetcher: &Fetcher,
    token_endpoint: &str,
    client: &ClientId,
    grant: Grant<'_>,
    resource: &str,
    requested: &[String],
    dpop: DpopAt<'_>,
) -> Result<Tokens, TokenError> {
    let mut form: Vec<(&str, &str)> = match &grant {
        Grant::Code {
            code,
            redirect_uri,
            verifier,
        } => vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
        ],
        Grant::Refresh { refresh_token } => vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ],
        Grant::ClientCredentials { scope: "" } => vec![("grant_type", "client_credentials")],
        Grant::ClientCredentials { scope } => {
            vec![("grant_type", "client_credentials"), ("scope", scope)]
        }
        Grant::JwtBearer { assertion, scope } => {
            let mut form = vec![("grant_type", JWT_BEARER), ("assertion", assertion)];
            if !scope.is_empty() {
                form.push(("scope", scope));
            }
            form
        }
    };
    form.push(("resource", resource));
    let mut authorization = None;
    #[cfg(feature = "client-oauth-jwt")]
    let signed;
    match &client.method {
        AuthMethod::Basic => {
            let pair = format!(
                "{}:{}",
                urls::encode(&client.id),
                urls::encode(client.secret.as_deref().unwrap_or_default())
            );
            authorization = Some(format!("Basic {}", base64::encode(pair.as_bytes())));
        }
        AuthMethod::Post => {
            form.push(("client_id", &client.id));
            form.push((
                "client_secret",
                client.secret.as_deref().unwrap_or_default(),
            ));
        }
        AuthMethod::None => form.push(("client_id", &client.id)),
        #[cfg(feature = "client-oauth-jwt")]
        AuthMethod::PrivateKeyJwt(key) => {
            signed = super::assertion::sign(key, &client.id, &client.issuer)?;
            form.push(("client_id", &client.id));
            form.push(("client_assertion_type", super::assertion::ASSERTION_TYPE));
            form.push(("client_assertion", &signed));
        }
    }
    let form = urls::form(&form);
    let mut retried = false;
    let answer = loop {
        let proof = match dpop {
            Some((key, nonce)) => {
                let nonce = nonce.lock().unwrap_or_else(PoisonError::into_inner).clone();
                Some(key.proof("POST", token_endpoint, None, nonce.as_deref())?)
            }
            None => None,
        };
        let answer = fetcher
            .send_with(
                hyper::Method::POST,
                token_endpoint,
                Body::Form(form.clone()),
                authorization.as_deref(),
                proof.as_deref(),
            )
            .await?;
        if let (Some((_, slot)), Some(nonce)) = (dpop, &answer.dpop_nonce) {
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(nonce.clone());
            let asks = answer.error_code().as_deref() == Some("use_dpop_nonce");
            if asks && !retried {
                retried = true;
                continue;
            }
        }
        break answer;
    };
    if !answer.status.is_success() {
        return Err(TokenError {
            invalid_client: answer.error_code().as_deref() == Some("invalid_client"),
            error: ClientError::Authorization(format!(
                "the token endpoint {token_endpoint} refused the grant: {}",
                answer.oauth_error()
            )),
        });
    }
    let response: TokenResponse = answer.json("the token response")?;
    let dpop_bound = dpop.is_some() && response.token_type.eq_ignore_ascii_case("dpop");
    if !dpop_bound && !response.token_type.eq_ignore_ascii_case("bearer") {
        return Err(ClientError::Authorization(format!(
            "the token endpoint issued a {:?} token, which this client cannot send",
            response.token_type
        ))
        .into());
    }
    let scopes = match response.scope.as_deref() {
        Some(s) => split_scopes(Some(s)),
        None => requested.to_vec(),
    };
    let refresh_token = match (response.refresh_token, grant) {
        (Some(new), _) => Some(new),
        // A refresh that issued no new refresh token keeps the old one.
        (None, Grant::Refresh { refresh_token }) => Some(refresh_token.to_owned()),
        (None, _) => None,
    };
    Ok(Tokens {
        access_token: response.access_token,
        refresh_token,
        expires_at: response
            .expires_in
            .and_then(|s| SystemTime::now().checked_add(Duration::from_secs(s))),
        scopes,
        issuer: client.issuer.clone(),
        client_id: client.id.clone(),
        dpop_bound,
    })
}
