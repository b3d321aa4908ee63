//! The authorization server's signing keys (its JWKS): found through its
//! metadata (RFC 8414, then OpenID Connect discovery), cached for a bounded
//! age ([`JwtVerifier::key_max_age`](super::JwtVerifier::key_max_age), or
//! the JWKS answer's `Cache-Control: max-age` within
//! [`MIN_KEY_AGE`]..=[`MAX_KEY_AGE`]) and fetched again before they are
//! trusted past it, and fetched again when a token names a key id the
//! cache lacks — at most once per
//! [`JwtVerifier::refetch_interval`](super::JwtVerifier::refetch_interval),
//! however many such tokens arrive.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use tokio::sync::OnceCell;

use super::fetch::Fetcher;

/// The shortest a JWKS answer's `Cache-Control: max-age` is honoured for
/// (30 s): a `max-age=0` or `no-store` must not make every request fetch.
pub const MIN_KEY_AGE: Duration = Duration::from_secs(30);
/// The longest a JWKS answer's `Cache-Control: max-age` is honoured for
/// (24 h): a key removed by the authorization server is dropped within a
/// day whatever its answer said.
pub const MAX_KEY_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// Why the keys are fetched again.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// They are older than their age: not trusted until fetched.
    Expired,
    /// A token names a key id the cache lacks.
    UnknownKid,
}

/// One usable verification key.
pub(crate) struct Key {
    pub(crate) kid: Option<String>,
    /// The algorithms this key may verify (its type's, narrowed by its
    /// `alg` member, within the verifier's allow-list).
    pub(crate) algorithms: Vec<Algorithm>,
    pub(crate) key: DecodingKey,
}

/// Where the keys come from.
pub(crate) enum Source {
    /// The issuer's metadata names the `jwks_uri`.
    Discover { issuer: String },
    /// A known `jwks_uri`.
    Uri(String),
    /// Keys given once (a JWKS document); never fetched.
    Fixed(Value),
}

/// The outcome of one fetch, shared by every request that waited for it.
type Fetch = Arc<OnceCell<Result<(), String>>>;

struct State {
    keys: Arc<Vec<Key>>,
    /// The JWKS URI once discovered.
    jwks_uri: Option<String>,
    /// When the last fetch started (the rate limit counts from it; the
    /// first successful load does not count, so a key rotated right after
    /// start is still found).
    last_attempt: Option<Instant>,
    /// Keys were fetched successfully at least once.
    loaded: bool,
    /// Until when the keys may be trusted without fetching them again
    /// (`None`: never fetched).
    fresh_until: Option<Instant>,
    /// Why the last fetch failed (`None` once one succeeds).
    failed: Option<String>,
    /// The fetch under way, if any.
    inflight: Option<Fetch>,
}

/// The key cache of one verifier.
pub(crate) struct KeyCache {
    source: Source,
    allowed: Vec<Algorithm>,
    min_interval: Duration,
    max_age: Duration,
    fetcher: Fetcher,
    state: Mutex<State>,
}

impl KeyCache {
    /// Keys of `source` for the `allowed` algorithms, fetched again on an
    /// unknown key id at most once per `min_interval`, trusted for
    /// `max_age` after a fetch (unless its answer's `Cache-Control` says
    /// otherwise).
    pub(crate) fn new(
        source: Source,
        allowed: Vec<Algorithm>,
        min_interval: Duration,
        max_age: Duration,
    ) -> Self {
        let jwks_uri = match &source {
            Source::Uri(uri) => Some(uri.clone()),
            Source::Discover { .. } | Source::Fixed(_) => None,
        };
        let keys = match &source {
            Source::Fixed(jwks) => parse_jwks(jwks, &allowed),
            _ => Vec::new(),
        };
        Self {
            source,
            allowed,
            min_interval,
            max_age,
            fetcher: Fetcher::default(),
            state: Mutex::new(State {
                keys: Arc::new(keys),
                jwks_uri,
                last_attempt: None,
                loaded: false,
                fresh_until: None,
                failed: None,
                inflight: None,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached keys.
    pub(crate) fn keys(&self) -> Arc<Vec<Key>> {
        Arc::clone(&self.lock().keys)
    }

    /// How much longer the cached keys may be trusted; `None` when they
    /// must be fetched (again) first. Fixed keys are always trusted.
    pub(crate) fn trusted_for(&self) -> Option<Duration> {
        if matches!(self.source, Source::Fixed(_)) {
            return Some(Duration::MAX);
        }
        let until = self.lock().fresh_until?;
        let left = until.saturating_duration_since(Instant::now());
        (!left.is_zero()).then_some(left)
    }

    /// Fetches the keys again (or waits for a fetch under way). For an
    /// unknown key id, nothing is fetched when a fetch started within the
    /// rate limit. For expired keys, a fetch is made unless one failed
    /// within the rate limit (then its error is the answer: expired keys
    /// are never used). `Err` when the keys could not be fetched.
    ///
    /// # Cancel safety
    /// Dropping the future leaves a started fetch to the next caller.
    pub(crate) async fn refresh(&self, why: Why) -> Result<(), String> {
        if matches!(self.source, Source::Fixed(_)) {
            return Ok(());
        }
        let fetch = {
            let mut state = self.lock();
            match &state.inflight {
                Some(fetch) => Arc::clone(fetch),
                None => {
                    let recent = state
                        .last_attempt
                        .is_some_and(|t| t.elapsed() < self.min_interval);
                    match why {
                        Why::UnknownKid if recent => return Ok(()),
                        Why::Expired if state.fresh_until.is_some_and(|t| t > Instant::now()) => {
                            return Ok(())
                        }
                        Why::Expired if recent => {
                            if let Some(e) = &state.failed {
                                return Err(e.clone());
                            }
                        }
                        Why::Expired | Why::UnknownKid => {}
                    }
                    state.last_attempt = Some(Instant::now());
                    let fetch: Fetch = Arc::default();
                    state.inflight = Some(Arc::clone(&fetch));
                    fetch
                }
            }
        };
        let outcome = fetch
            .get_or_init(|| async {
                let outcome = self.fetch().await;
                let mut state = self.lock();
                state.inflight = None;
                match &outcome {
                    Ok(()) => {
                        state.failed = None;
                        if !state.loaded {
                            state.loaded = true;
                            state.last_attempt = None;
                        }
                    }
                    Err(e) => state.failed = Some(e.clone()),
                }
                outcome
            })
            .await;
        outcome.clone()
    }

    async fn fetch(&self) -> Result<(), String> {
        let known = self.lock().jwks_uri.clone();
        let uri = match (known, &self.source) {
            (Some(uri), _) => uri,
            (None, Source::Discover { issuer }) => {
                let uri = discover_jwks_uri(&self.fetcher, issuer).await?;
                self.lock().jwks_uri = Some(uri.clone());
                uri
            }
            (None, _) => return Ok(()),
        };
        let (jwks, max_age) = self.fetcher.get_json_max_age(&uri).await?;
        if !jwks.get("keys").is_some_and(Value::is_array) {
            return Err(format!("{uri}: not a JWKS (no `keys` array)"));
        }
        let age = max_age.map_or(self.max_age, |a| a.clamp(MIN_KEY_AGE, MAX_KEY_AGE));
        let keys = parse_jwks(&jwks, &self.allowed);
        let mut state = self.lock();
        state.keys = Arc::new(keys);
        let now = Instant::now();
        // An age past what the clock can hold: the longest honoured.
        state.fresh_until = now
            .checked_add(age)
            .or_else(|| now.checked_add(MAX_KEY_AGE));
        Ok(())
    }
}

/// The metadata documents of `issuer`, in the order they are tried:
/// RFC 8414 (path inserted after the host), then OpenID Connect discovery
/// (path appended), then OpenID Connect with the path inserted.
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let (origin, path) = match trimmed.find("://") {
        Some(i) => match trimmed[i + 3..].find('/') {
            Some(j) => trimmed.split_at(i + 3 + j),
            None => (trimmed, ""),
        },
        None => (trimmed, ""),
    };
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{trimmed}/.well-known/openid-configuration"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}/.well-known/openid-configuration{path}"));
    }
    urls
}

/// The `jwks_uri` of `issuer`'s metadata; the metadata must name the same
/// issuer (RFC 8414 §3.3), so a document for another server is never used.
async fn discover_jwks_uri(fetcher: &Fetcher, issuer: &str) -> Result<String, String> {
    let mut problems = Vec::new();
    for url in metadata_urls(issuer) {
        match fetcher.get_json(&url).await {
            Ok(doc) => {
                let named = doc.get("issuer").and_then(Value::as_str);
                if named != Some(issuer) {
                    problems.push(format!("{url}: names issuer {named:?}, not {issuer:?}"));
                    continue;
                }
                match doc.get("jwks_uri").and_then(Value::as_str) {
                    Some(uri) => return Ok(uri.to_owned()),
                    None => problems.push(format!("{url}: no jwks_uri")),
                }
            }
            Err(e) => problems.push(e),
        }
    }
    Err(format!(
        "no authorization server metadata for {issuer}: {}",
        problems.join("; ")
    ))
}

/// The usable keys of a JWKS: signing keys (not `use: enc`) of an
/// asymmetric type whose algorithms the allow-list has. A symmetric
/// (`oct`) key is never used: a public JWKS must not turn a public key
/// into an HMAC secret. Keys that do not parse are skipped.
pub(crate) fn parse_jwks(jwks: &Value, allowed: &[Algorithm]) -> Vec<Key> {
    let Some(keys) = jwks.get("keys").and_then(Value::as_array) else {
        return Vec::new();
    };
    keys.iter()
        .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
        .filter_map(|jwk| usable(&jwk, allowed))
        .collect()
}

fn usable(jwk: &Jwk, allowed: &[Algorithm]) -> Option<Key> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    let family: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &[
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => &[Algorithm::ES256],
            EllipticCurve::P384 => &[Algorithm::ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(_) => &[Algorithm::EdDSA],
        AlgorithmParameters::OctetKey(_) => return None,
    };
    let named: Option<Algorithm> = match &jwk.common.key_algorithm {
        Some(alg) => Some(alg.to_string().parse().ok()?),
        None => None,
    };
    let algorithms: Vec<Algorithm> = family
        .iter()
        .copied()
        .filter(|a| allowed.contains(a) && named.is_none_or(|n| n == *a))
        .collect();
    if algorithms.is_empty() {
        return None;
    }
    Some(Key {
        kid: jwk.common.key_id.clone(),
        algorithms,
        key: DecodingKey::from_jwk(jwk).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::metadata_urls;

    #[test]
    fn metadata_is_looked_for_where_rfc8414_and_oidc_say() {
        assert_eq!(
            metadata_urls("http://as.example"),
            [
                "http://as.example/.well-known/oauth-authorization-server",
                "http://as.example/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("http://as.example/tenant/"),
            [
                "http://as.example/.well-known/oauth-authorization-server/tenant",
                "http://as.example/tenant/.well-known/openid-configuration",
                "http://as.example/.well-known/openid-configuration/tenant",
            ]
        );
    }
}
