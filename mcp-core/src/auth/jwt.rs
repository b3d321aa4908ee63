//! [`JwtVerifier`]: JWT access tokens checked against the authorization
//! server's published keys.

use std::collections::HashSet;
use std::sync::OnceLock;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::cache::{key_of, AnswerCache};
use super::claims::{auth_info, check_times, numeric_date, reusable_for};
use super::keys::{Key, KeyCache, Source, Why};
use super::verifier::{Rejection, TokenVerifier};
use crate::context::AuthInfo;

/// The largest leeway accepted for `exp`/`nbf` (5 minutes).
pub const MAX_LEEWAY: Duration = Duration::from_secs(300);
/// Longest token looked at (16 KiB); a longer one is refused unread.
const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Default [`JwtVerifier::verified_cache`]: tokens remembered as verified.
pub const DEFAULT_VERIFIED_CACHE: usize = 1024;
/// How long a verified token is remembered at most (never past its `exp`).
const VERIFIED_TTL: Duration = Duration::from_secs(60);
/// Default [`JwtVerifier::key_max_age`]: 10 minutes.
pub const DEFAULT_KEY_MAX_AGE: Duration = Duration::from_secs(600);

/// Verifies JWT access tokens (RFC 9068 style) issued by one
/// authorization server for this resource.
///
/// Checked, in order: the token's shape; its algorithm against an
/// allow-list (RS256/384/512, PS256/384/512, ES256/384 and EdDSA by
/// default; `none` and the HMAC algorithms are never accepted, so a public
/// key can never serve as a shared secret); its signature against the key
/// its `kid` names; `iss` equal to the issuer; `aud` naming this resource
/// (RFC 8707: a token for another resource is refused); `exp` and `nbf`
/// within the leeway (default 30 s, at most [`MAX_LEEWAY`]), read as RFC
/// 7519 NumericDates (a fractional `exp` counts with its fraction).
///
/// The keys come from the issuer's metadata (`jwks_uri` of RFC 8414
/// `/.well-known/oauth-authorization-server`, else OpenID Connect
/// discovery) and are cached for a bounded age: the JWKS answer's
/// `Cache-Control: max-age`, held within [`MIN_KEY_AGE`](super::MIN_KEY_AGE) (30 s) and
/// [`MAX_KEY_AGE`](super::MAX_KEY_AGE) (24 h), else [`key_max_age`](Self::key_max_age)
/// (default 10 minutes). Older keys are fetched again before they are
/// trusted, so a key the authorization server removed from its JWKS stops
/// verifying tokens within that age; while that fetch fails, tokens are
/// answered `503` rather than checked against expired keys. The keys are
/// also fetched again when a token names an unknown `kid` — once per
/// [`refetch_interval`](Self::refetch_interval) at most, so forged key ids
/// cannot make the server hammer its authorization server. A token whose
/// key is cached costs no round trip.
///
/// The token's principal is `sub:<sub>`, else `client:<client_id or
/// azp>`, else `token:<hash>` (see the [module docs](super#principal-and-scopes)).
///
/// ```
/// use mcp_core::auth::JwtVerifier;
///
/// let verifier = JwtVerifier::new("http://127.0.0.1:9000", "http://127.0.0.1:8000/mcp");
/// # drop(verifier);
/// ```
pub struct JwtVerifier {
    issuer: String,
    audience: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    refetch: Duration,
    key_max_age: Duration,
    source: Source,
    keys: OnceLock<KeyCache>,
    /// Tokens already verified (their signature checked once).
    verified: AnswerCache,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("algorithms", &self.algorithms)
            .field("leeway", &self.leeway)
            .finish_non_exhaustive()
    }
}

const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

impl JwtVerifier {
    /// Tokens of `issuer` (its exact `iss`, also the base of its metadata
    /// URLs) for the resource `audience` (this server's canonical URI).
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        // jsonwebtoken picks its backend from its crate features: should
        // another crate of the build also enable its `aws_lc_rs`, it would
        // pick none and every check would fail. Ours (RustCrypto) is
        // installed unless the application installed a provider first.
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        let issuer = issuer.into();
        Self {
            source: Source::Discover {
                issuer: issuer.clone(),
            },
            issuer,
            audience: vec![audience.into()],
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: Duration::from_secs(30),
            refetch: Duration::from_secs(30),
            key_max_age: DEFAULT_KEY_MAX_AGE,
            keys: OnceLock::new(),
            verified: AnswerCache::new(DEFAULT_VERIFIED_CACHE, VERIFIED_TTL),
        }
    }

    /// Fetches the keys from `jwks_uri` instead of discovering it.
    #[must_use]
    pub fn jwks_uri(mut self, jwks_uri: impl Into<String>) -> Self {
        self.source = Source::Uri(jwks_uri.into());
        self.keys = OnceLock::new();
        self
    }

    /// Uses the keys of `jwks` (a JWKS document) and never fetches any.
    #[must_use]
    pub fn fixed_keys(mut self, jwks: &Value) -> Self {
        self.source = Source::Fixed(jwks.clone());
        self.keys = OnceLock::new();
        self
    }

    /// Accepts another audience too (an alias of this resource).
    #[must_use]
    pub fn also_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience.push(audience.into());
        self
    }

    /// Narrows the algorithm allow-list (public-key algorithms only: a
    /// resource server never verifies with a shared secret).
    #[must_use]
    pub fn algorithms(mut self, algorithms: &[super::Algorithm]) -> Self {
        self.algorithms = algorithms.iter().map(|a| a.to_jwt()).collect();
        self.keys = OnceLock::new();
        self
    }

    /// Sets the clock leeway for `exp` and `nbf` (at most [`MAX_LEEWAY`]).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway.min(MAX_LEEWAY);
        self
    }

    /// Sets the least time between two fetches of the keys for tokens
    /// naming an unknown `kid`, and between two tries after a failed fetch
    /// (default 30 s). Keys past their age
    /// ([`key_max_age`](Self::key_max_age)) are fetched again whatever it
    /// says, once per age.
    #[must_use]
    pub fn refetch_interval(mut self, interval: Duration) -> Self {
        self.refetch = interval;
        self.keys = OnceLock::new();
        self
    }

    /// How long fetched keys are trusted when the JWKS answer has no
    /// `Cache-Control: max-age` (default [`DEFAULT_KEY_MAX_AGE`], 10
    /// minutes: a key removed from the JWKS, say after a leak, stops
    /// verifying within it, for one fetch per 10 minutes). Past it the keys
    /// are fetched again before the next token is checked. An answer's
    /// `max-age` (bounded to [`MIN_KEY_AGE`](super::MIN_KEY_AGE)..=[`MAX_KEY_AGE`](super::MAX_KEY_AGE)) takes its
    /// place. Fixed keys ([`fixed_keys`](Self::fixed_keys)) never expire.
    #[must_use]
    pub fn key_max_age(mut self, age: Duration) -> Self {
        self.key_max_age = age;
        self.keys = OnceLock::new();
        self
    }

    /// How many verified tokens are remembered (default
    /// [`DEFAULT_VERIFIED_CACHE`]; 0: every request checks its signature).
    /// A client sends the same token until it expires: remembering it
    /// (keyed by its SHA-256, for at most a minute, never past its `exp`
    /// nor past the age of the keys that verified it) spares a signature
    /// check per request.
    #[must_use]
    pub fn verified_cache(mut self, n: usize) -> Self {
        self.verified = AnswerCache::new(n, VERIFIED_TTL);
        self
    }

    /// The issuer.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The key cache, built on first use from the settings above.
    fn cache(&self) -> &KeyCache {
        self.keys.get_or_init(|| {
            let source = match &self.source {
                Source::Uri(uri) => Source::Uri(uri.clone()),
                Source::Discover { issuer } => Source::Discover {
                    issuer: issuer.clone(),
                },
                Source::Fixed(jwks) => Source::Fixed(jwks.clone()),
            };
            KeyCache::new(
                source,
                self.algorithms.clone(),
                self.refetch,
                self.key_max_age,
            )
        })
    }

    fn validation(&self, algorithms: Vec<Algorithm>) -> Validation {
        let mut v = Validation::new(algorithms.first().copied().unwrap_or(Algorithm::RS256));
        v.algorithms = algorithms;
        v.leeway = self.leeway.as_secs();
        v.validate_exp = true;
        v.validate_nbf = true;
        v.set_issuer(&[&self.issuer]);
        v.set_audience(&self.audience);
        v.required_spec_claims = ["exp", "iss", "aud"]
            .into_iter()
            .map(str::to_owned)
            .collect::<HashSet<_>>();
        v
    }
}

#[async_trait::async_trait]
impl TokenVerifier for JwtVerifier {
    async fn verify(&self, token: &str) -> Result<AuthInfo, Rejection> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Rejection::invalid("the token is too long"));
        }
        let remembered = key_of(token);
        if let Some(Ok(info)) = self.verified.get(&remembered) {
            return Ok(info);
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            Rejection::invalid("malformed token (not a JWS with a supported algorithm)")
        })?;
        if !self.algorithms.contains(&header.alg) {
            return Err(Rejection::invalid(format!(
                "algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let cache = self.cache();
        // Keys past their age are fetched again before any is trusted: a
        // key the authorization server removed is then gone.
        if cache.trusted_for().is_none() {
            cache
                .refresh(Why::Expired)
                .await
                .map_err(Rejection::unavailable)?;
        }
        let fits = |k: &Key| {
            k.algorithms.contains(&header.alg)
                && (header.kid.is_none() || k.kid.as_deref() == header.kid.as_deref())
        };
        let mut keys = cache.keys();
        if !keys.iter().any(fits) {
            // An unknown key id: the authorization server may have rotated
            // its keys. Fetch them again (rate-limited), then decide.
            if let Err(e) = cache.refresh(Why::UnknownKid).await {
                if cache.keys().is_empty() {
                    return Err(Rejection::unavailable(e));
                }
            }
            keys = cache.keys();
        }
        let mut last = Rejection::invalid(match &header.kid {
            Some(kid) => format!("unknown signing key id `{kid}`"),
            None => "no signing key fits the token".to_owned(),
        });
        let validation = self.validation(vec![header.alg]);
        for key in keys.iter().filter(|k| fits(k)) {
            match jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation) {
                Ok(data) => {
                    // jsonwebtoken rounds a fractional `exp`/`nbf`; they
                    // are checked again exactly.
                    check_times(&data.claims, self.leeway)?;
                    let exp = numeric_date(&data.claims, "exp")?;
                    let answer = Ok(auth_info(data.claims, &remembered));
                    // Remembered no longer than the token and the keys
                    // that verified it are valid.
                    let life = reusable_for(VERIFIED_TTL, exp)
                        .min(cache.trusted_for().unwrap_or(Duration::ZERO));
                    self.verified.put(remembered, &answer, life);
                    return answer;
                }
                Err(e) => {
                    last = reject(e.kind());
                    // Another key of the same id cannot make an expired
                    // token valid: only a bad signature tries the next.
                    if !matches!(e.kind(), ErrorKind::InvalidSignature) {
                        break;
                    }
                }
            }
        }
        Err(last)
    }
}

fn reject(kind: &ErrorKind) -> Rejection {
    Rejection::invalid(match kind {
        ErrorKind::InvalidSignature => "bad signature".to_owned(),
        ErrorKind::ExpiredSignature => "the token expired".to_owned(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
        ErrorKind::InvalidIssuer => "wrong issuer".to_owned(),
        ErrorKind::InvalidAudience => "the token is not for this resource (aud)".to_owned(),
        ErrorKind::MissingRequiredClaim(c) => format!("missing claim `{c}`"),
        ErrorKind::InvalidAlgorithm => "algorithm does not fit the key".to_owned(),
        _ => "malformed token".to_owned(),
    })
}
