//! The flow itself: the token for a request (refreshed when it has
//! expired), and what a `401` or `403` leads to: discovery, client
//! identification, the authorization request (PKCE, `state`, resource
//! indicator, scopes), the checks on the redirect (`state`, RFC 9207
//! `iss`), the code exchange, refresh, step-up. One flow at a time per
//! [`OAuth`]: concurrent refusals wait for it and reuse its token.

use std::sync::PoisonError;
use std::time::Duration;

use hyper::header::HeaderValue;
use hyper::{StatusCode, Uri};

use super::challenge::Challenge;
use super::discovery::{self, Discovered};
use super::pkce::{self, Pkce};
use super::registration::{self, ClientId, Identity};
use super::store::Tokens;
use super::token::{self, Grant, TokenError};
use super::{urls, Known, Machine, OAuth};
use crate::client::ClientError;

/// A token this close to its expiry is refreshed before it is sent.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

impl OAuth {
    /// The `Authorization` value (and, for a DPoP-bound token, the
    /// `DPoP` proof) for a `method` request to `endpoint`, if a token is
    /// held (refreshed first when it has expired and can be).
    pub(crate) async fn authorization(
        &self,
        endpoint: &Uri,
        method: &hyper::Method,
    ) -> Result<Option<(HeaderValue, Option<HeaderValue>)>, ClientError> {
        let key = endpoint.to_string();
        let Some(mut tokens) = self.config.store.load(&key).await else {
            return Ok(None);
        };
        if tokens.expires_within(EXPIRY_MARGIN) && tokens.refresh_token.is_some() {
            let _flow = self.shared.flow.lock().await;
            match self.config.store.load(&key).await {
                None => return Ok(None),
                Some(t) if t != tokens => tokens = t,
                // A failed refresh sends the old token: its 401 re-authorizes.
                Some(_) => {
                    if let Ok(Some(fresh)) = self.refresh(&key, &tokens).await {
                        tokens = fresh;
                    }
                }
            }
        }
        let proof = if tokens.dpop_bound {
            let dpop = self
                .shared
                .dpop_key
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let Some(dpop) = dpop else {
                // Bound to a key this client does not hold: no use sending it.
                return Ok(None);
            };
            let nonce = self
                .shared
                .rs_nonce
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let proof = dpop.proof(
                method.as_str(),
                &key,
                Some(&tokens.access_token),
                nonce.as_deref(),
            )?;
            Some(HeaderValue::from_str(&proof).map_err(|_| {
                ClientError::Authorization("a DPoP proof unfit for a header".into())
            })?)
        } else {
            None
        };
        Ok(Some((header(&tokens)?, proof)))
    }

    /// Keeps the resource's latest `DPoP-Nonce`; true when it is new.
    pub(crate) fn resource_nonce(&self, nonce: &str) -> bool {
        let mut slot = self
            .shared
            .rs_nonce
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let new = slot.as_deref() != Some(nonce);
        *slot = Some(nonce.to_owned());
        new
    }

    /// The DPoP key for tokens from `server`: when DPoP is on and the
    /// server accepts ES256 proofs.
    fn dpop_for(
        &self,
        server: &discovery::ServerMetadata,
    ) -> Result<Option<std::sync::Arc<super::Dpop>>, ClientError> {
        let offered = server
            .dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|algs| algs.iter().any(|a| a == "ES256"));
        if !self.config.dpop || !offered {
            return Ok(None);
        }
        #[cfg(feature = "client-oauth-jwt")]
        {
            let mut slot = self
                .shared
                .dpop_key
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if slot.is_none() {
                *slot = Some(std::sync::Arc::new(super::Dpop::generate()?));
            }
            Ok(slot.clone())
        }
        #[cfg(not(feature = "client-oauth-jwt"))]
        Ok(None)
    }

    /// After a `401` or a `403 insufficient_scope` (the `attempt`-th for
    /// one request) to a request sent with `sent`: gets a token worth
    /// retrying with, or says why not. The flow runs on a task of its
    /// own: a request that times out or is cancelled while the user is
    /// still authorizing fails, but the flow goes on, and the next request
    /// gets its token.
    pub(crate) async fn recover(
        &self,
        endpoint: &Uri,
        status: StatusCode,
        www_authenticate: Option<&str>,
        sent: Option<&HeaderValue>,
        attempt: u32,
    ) -> Result<(), ClientError> {
        let this = self.clone();
        let endpoint = endpoint.clone();
        let challenge = www_authenticate.map(str::to_owned);
        let sent = sent.cloned();
        tokio::spawn(async move {
            this.recover_now(
                &endpoint,
                status,
                challenge.as_deref(),
                sent.as_ref(),
                attempt,
            )
            .await
        })
        .await
        .map_err(|e| ClientError::Authorization(format!("the authorization flow failed: {e}")))?
    }

    async fn recover_now(
        &self,
        endpoint: &Uri,
        status: StatusCode,
        www_authenticate: Option<&str>,
        sent: Option<&HeaderValue>,
        attempt: u32,
    ) -> Result<(), ClientError> {
        if attempt >= self.config.max_reauthorizations {
            return Err(ClientError::Authorization(format!(
                "HTTP {status} again after {attempt} authorization(s): giving up{}",
                www_authenticate
                    .map(|c| format!(" (challenge: {c})"))
                    .unwrap_or_default()
            )));
        }
        let challenge = Challenge::parse(www_authenticate);
        let key = endpoint.to_string();
        let _flow = self.shared.flow.lock().await;
        let current = self.config.store.load(&key).await;
        let current_header = current.as_ref().map(header).transpose()?;
        if current_header.as_ref() != sent {
            // Another request already got a newer token: retry with it.
            return Ok(());
        }
        let known = self.known(&key);
        if status == StatusCode::FORBIDDEN {
            // Step-up: what was asked before, and what is missing now.
            let discovered = match &known {
                Some(k) => k.discovered.clone(),
                None => discovery::discover(&self.fetcher(), endpoint, &challenge).await?,
            };
            let mut scopes = known.map(|k| k.requested).unwrap_or_default();
            union(&mut scopes, challenge.scopes());
            return self.authorize(&key, discovered, scopes).await;
        }
        // A 401: the resource may have moved to another authorization
        // server, so discovery starts over.
        let discovered = discovery::discover(&self.fetcher(), endpoint, &challenge).await?;
        if let Some(tokens) = &current {
            if tokens.issuer == discovered.server.issuer && attempt == 0 {
                self.remember(&key, discovered.clone(), tokens.scopes.clone());
                if let Ok(Some(_)) = self.refresh(&key, tokens).await {
                    return Ok(());
                }
            }
        }
        let mut scopes = match &known {
            Some(k) if k.discovered.server.issuer == discovered.server.issuer => {
                k.requested.clone()
            }
            _ => Vec::new(),
        };
        let wanted = if challenge.scope.is_some() {
            challenge.scopes()
        } else {
            discovered
                .resource
                .scopes_supported
                .clone()
                .unwrap_or_default()
        };
        union(&mut scopes, wanted);
        self.authorize(&key, discovered, scopes).await
    }

    /// The authorization at the discovered server for `scopes`; once more
    /// with a new registration when the server refuses a dynamically
    /// registered client it no longer knows (`invalid_client`).
    async fn authorize(
        &self,
        key: &str,
        discovered: Discovered,
        scopes: Vec<String>,
    ) -> Result<(), ClientError> {
        let issuer = discovered.server.issuer.clone();
        match self
            .authorize_once(key, discovered.clone(), scopes.clone())
            .await
        {
            Err(e) if e.invalid_client && self.forget_refused(&issuer).await => {
                Ok(self.authorize_once(key, discovered, scopes).await?)
            }
            done => Ok(done?),
        }
    }

    /// Forgets the dynamic registration the server `issuer` refused, here
    /// and in the store; false when the refused client was not one.
    async fn forget_refused(&self, issuer: &str) -> bool {
        let removed = {
            let mut state = self.shared.lock();
            match state.clients.get(issuer) {
                Some(c) if c.dynamic => state.clients.remove(issuer),
                _ => None,
            }
        };
        if removed.is_some() {
            self.config.store.clear_registration(issuer).await;
        }
        removed.is_some()
    }

    /// The authorization code flow (or the machine grant) at the
    /// discovered server for `scopes`.
    async fn authorize_once(
        &self,
        key: &str,
        discovered: Discovered,
        mut scopes: Vec<String>,
    ) -> Result<(), TokenError> {
        let server = &discovered.server;
        let offers_offline = server
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|s| s == "offline_access"));
        if self.config.offline_access && offers_offline && self.config.machine.is_none() {
            union(&mut scopes, vec!["offline_access".to_owned()]);
        }
        let client = self.client_at(&discovered).await?;
        let dpop = self.dpop_for(server)?;
        if let Some(machine) = &self.config.machine {
            // The client acting for itself: no user, no redirect.
            let scope = scopes.join(" ");
            let assertion;
            let grant = match machine {
                Machine::ClientCredentials => Grant::ClientCredentials { scope: &scope },
                Machine::JwtBearer(source) => {
                    assertion = source()?;
                    Grant::JwtBearer {
                        assertion: &assertion,
                        scope: &scope,
                    }
                }
                Machine::Enterprise(idp) => {
                    let resource = &discovered.resource.resource;
                    assertion = idp
                        .id_jag(&self.fetcher(), &server.issuer, resource, &scope)
                        .await?;
                    Grant::JwtBearer {
                        assertion: &assertion,
                        scope: &scope,
                    }
                }
            };
            let tokens = token::request(
                &self.fetcher(),
                &server.token_endpoint,
                &client,
                grant,
                &discovered.resource.resource,
                &scopes,
                dpop.as_deref().map(|k| (k, &self.shared.as_nonce)),
            )
            .await?;
            self.config.store.save(key, tokens).await;
            self.remember(key, discovered, scopes);
            return Ok(());
        }
        if !server.offers_s256() {
            return Err(ClientError::Authorization(format!(
                "authorization server {} does not offer PKCE with S256",
                server.issuer
            ))
            .into());
        }
        let pkce = Pkce::new();
        let state = pkce::state();
        let redirect_uri = self.config.step.redirect_uri();
        let scope = scopes.join(" ");
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client.id.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("code_challenge", pkce.challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", state.as_str()),
            ("resource", discovered.resource.resource.as_str()),
        ];
        if !scope.is_empty() {
            params.push(("scope", scope.as_str()));
        }
        let url = urls::with_query(&server.authorization_endpoint, &params);
        let back = self.config.step.authorize(&url).await?;
        let code = check_redirect(&back, &state, server)?;
        let tokens = token::request(
            &self.fetcher(),
            &server.token_endpoint,
            &client,
            Grant::Code {
                code: &code,
                redirect_uri: &redirect_uri,
                verifier: &pkce.verifier,
            },
            &discovered.resource.resource,
            &scopes,
            dpop.as_deref().map(|k| (k, &self.shared.as_nonce)),
        )
        .await?;
        self.config.store.save(key, tokens).await;
        self.remember(key, discovered, scopes);
        Ok(())
    }

    /// Refreshes `tokens` at the server that issued them, when this
    /// client knows that server and the client it issued them to.
    async fn refresh(&self, key: &str, tokens: &Tokens) -> Result<Option<Tokens>, ClientError> {
        let Some(refresh_token) = tokens.refresh_token.as_deref() else {
            return Ok(None);
        };
        let Some(known) = self.known(key) else {
            return Ok(None);
        };
        if known.discovered.server.issuer != tokens.issuer {
            return Ok(None);
        }
        // Tokens from a store of a previous run: the identity is found
        // again (pre-registered or a metadata document give the same one).
        let client = match self.registered(&tokens.issuer) {
            Some(c) => c,
            None => self.client_at(&known.discovered).await?,
        };
        if client.id != tokens.client_id {
            return Ok(None);
        }
        let dpop = self.dpop_for(&known.discovered.server)?;
        if tokens.dpop_bound && dpop.is_none() {
            return Ok(None);
        }
        let fresh = token::request(
            &self.fetcher(),
            &known.discovered.server.token_endpoint,
            &client,
            Grant::Refresh { refresh_token },
            &known.discovered.resource.resource,
            &tokens.scopes,
            dpop.as_deref().map(|k| (k, &self.shared.as_nonce)),
        )
        .await;
        let fresh = match fresh {
            Ok(fresh) => fresh,
            Err(e) => {
                if e.invalid_client {
                    // The next authorization registers anew before it
                    // sends the user to the server.
                    self.forget_refused(&tokens.issuer).await;
                }
                return Err(e.error);
            }
        };
        self.config.store.save(key, fresh.clone()).await;
        Ok(Some(fresh))
    }

    /// The client's identity at the discovered server: known, or found
    /// (and remembered for that issuer only).
    async fn client_at(&self, discovered: &Discovered) -> Result<ClientId, ClientError> {
        if let Some(c) = self.registered(&discovered.server.issuer) {
            return Ok(c);
        }
        let redirect_uri = self.config.step.redirect_uri();
        let me = Identity {
            name: &self.config.client_name,
            metadata_url: self.config.metadata_url.as_deref(),
            pre_registered: &self.config.pre_registered,
            dynamic_registration: self.config.dynamic_registration,
            redirect_uri: &redirect_uri,
            store: &*self.config.store,
        };
        let client = registration::identify(&self.fetcher(), &discovered.server, &me).await?;
        self.shared
            .lock()
            .clients
            .insert(client.issuer.clone(), client.clone());
        Ok(client)
    }

    fn registered(&self, issuer: &str) -> Option<ClientId> {
        self.shared.lock().clients.get(issuer).cloned()
    }

    fn known(&self, key: &str) -> Option<Known> {
        self.shared.lock().servers.get(key).cloned()
    }

    fn remember(&self, key: &str, discovered: Discovered, requested: Vec<String>) {
        self.shared.lock().servers.insert(
            key.to_owned(),
            Known {
                discovered,
                requested,
            },
        );
    }
}

/// The code of the authorization redirect `back`, once its `state` and
/// `iss` check out.
fn check_redirect(
    back: &str,
    state: &str,
    server: &discovery::ServerMetadata,
) -> Result<String, ClientError> {
    let pairs = urls::query_pairs(back)?;
    let one = |name: &str| -> Result<Option<&str>, ClientError> {
        let mut values = pairs
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str());
        let first = values.next();
        if values.next().is_some() {
            return Err(ClientError::Authorization(format!(
                "the authorization response repeats {name}"
            )));
        }
        Ok(first)
    };
    if let Some(error) = one("error")? {
        let description = one("error_description")?.unwrap_or_default();
        return Err(ClientError::Authorization(format!(
            "the authorization server refused: {error} {description}"
        )));
    }
    if one("state")? != Some(state) {
        return Err(ClientError::Authorization(
            "the authorization response's state is not the one sent".into(),
        ));
    }
    // RFC 9207: a present iss must be the issuer exactly (no
    // normalization); an advertised one must be present.
    match one("iss")? {
        Some(iss) if iss != server.issuer => {
            return Err(ClientError::Authorization(format!(
                "the authorization response comes from issuer {iss:?}, not {:?}",
                server.issuer
            )))
        }
        None if server.authorization_response_iss_parameter_supported == Some(true) => {
            return Err(ClientError::Authorization(
                "the authorization response lacks the iss its server advertises".into(),
            ))
        }
        _ => {}
    }
    one("code")?
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| ClientError::Authorization("the authorization response has no code".into()))
}

/// `Bearer <access token>` (`DPoP <access token>` for a bound one).
fn header(tokens: &Tokens) -> Result<HeaderValue, ClientError> {
    let scheme = if tokens.dpop_bound { "DPoP" } else { "Bearer" };
    HeaderValue::from_str(&format!("{scheme} {}", tokens.access_token)).map_err(|_| {
        ClientError::Authorization("the access token cannot be sent in a header".into())
    })
}

/// Adds the scopes of `more` that `scopes` lacks.
fn union(scopes: &mut Vec<String>, more: Vec<String>) {
    for s in more {
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(advertised: Option<bool>) -> discovery::ServerMetadata {
        let doc = serde_json::json!({
            "issuer": "http://as.example",
            "authorization_endpoint": "http://as.example/authorize",
            "token_endpoint": "http://as.example/token",
            "authorization_response_iss_parameter_supported": advertised,
        });
        serde_json::from_value(doc).unwrap_or_else(|e| panic!("metadata: {e}"))
    }

    fn check(query: &str, advertised: Option<bool>) -> Result<String, ClientError> {
        check_redirect(
            &format!("http://127.0.0.1/cb?{query}"),
            "s1",
            &server(advertised),
        )
    }

    #[test]
    fn the_iss_of_a_redirect_is_compared_exactly() {
        let iss = "iss=http%3A%2F%2Fas.example";
        assert_eq!(
            check(&format!("code=c&state=s1&{iss}"), Some(true))
                .ok()
                .as_deref(),
            Some("c")
        );
        // Present but not advertised: still compared.
        assert!(check("code=c&state=s1&iss=http%3A%2F%2Fevil.example", None).is_err());
        // No normalization: a trailing slash is another issuer.
        assert!(check(&format!("code=c&state=s1&{iss}%2F"), Some(true)).is_err());
        // Advertised, so it must be there.
        assert!(check("code=c&state=s1", Some(true)).is_err());
        assert_eq!(check("code=c&state=s1", None).ok().as_deref(), Some("c"));
    }

    #[test]
    fn state_code_and_errors_are_checked() {
        assert!(check("code=c&state=other", None).is_err());
        assert!(check("code=c", None).is_err());
        assert!(check("state=s1", None).is_err());
        assert!(check("code=c&code=d&state=s1", None).is_err());
        let refused = check("error=access_denied&state=s1", None);
        assert!(
            matches!(refused, Err(ClientError::Authorization(w)) if w.contains("access_denied"))
        );
    }
}
