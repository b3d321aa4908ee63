//! A stand-in authorization server for the auth tests, on an ephemeral
//! loopback port: RFC 8414 metadata, a JWKS (swappable, its fetches
//! counted) and an RFC 7662 introspection endpoint. Tokens are signed with
//! Ed25519 keys made at test time (AWS-LC, seeded from the OS).
#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_core::protocol::base64::encode_url;
use serde_json::{json, Value};

/// The client the introspection endpoint accepts.
pub const CLIENT_ID: &str = "mcp-rs";
pub const CLIENT_SECRET: &str = "s3cret:with&odd=chars";

/// An Ed25519 signing key and its key id.
pub struct TestKey {
    pub kid: String,
    /// PKCS#8 v2 DER (what jsonwebtoken's encoder reads).
    pkcs8: Vec<u8>,
    public: Vec<u8>,
}

impl TestKey {
    pub fn new(kid: &str) -> Self {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).expect("Ed25519 key");
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("Ed25519 key");
        Self {
            kid: kid.to_owned(),
            pkcs8: pkcs8.as_ref().to_vec(),
            public: pair.public_key().as_ref().to_vec(),
        }
    }

    /// Its public JWK.
    pub fn jwk(&self) -> Value {
        json!({
            "kty": "OKP", "crv": "Ed25519", "use": "sig", "alg": "EdDSA",
            "kid": self.kid,
            "x": encode_url(&self.public),
        })
    }

    /// The raw public key bytes (for the HMAC-with-public-key attack).
    pub fn public_bytes(&self) -> Vec<u8> {
        self.public.clone()
    }

    /// A token with `claims`, signed by this key, naming its kid.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_as(&self.kid, claims)
    }

    /// A token signed by this key but naming `kid`.
    pub fn sign_as(&self, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ed_der(&self.pkcs8)).expect("sign")
    }
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// What the stand-in server serves.
pub struct AuthServer {
    pub addr: SocketAddr,
    pub issuer: String,
    pub jwks: Arc<Mutex<Value>>,
    pub jwks_fetches: Arc<AtomicUsize>,
    pub introspections: Arc<AtomicUsize>,
    /// Opaque token → its introspection answer (absent: inactive).
    pub opaque: Arc<Mutex<HashMap<String, Value>>>,
    /// The `Cache-Control` of the JWKS answer (none by default).
    pub jwks_cache_control: Arc<Mutex<Option<String>>>,
}

impl AuthServer {
    /// Starts it with `keys` in its JWKS.
    pub async fn start(keys: &[&TestKey]) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let issuer = format!("http://{addr}");
        let jwks = Arc::new(Mutex::new(
            json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()}),
        ));
        let jwks_fetches = Arc::new(AtomicUsize::new(0));
        let introspections = Arc::new(AtomicUsize::new(0));
        let opaque: Arc<Mutex<HashMap<String, Value>>> = Arc::default();
        let jwks_cache_control: Arc<Mutex<Option<String>>> = Arc::default();
        let state = Arc::new(State {
            jwks_cache_control: Arc::clone(&jwks_cache_control),
            issuer: issuer.clone(),
            jwks: Arc::clone(&jwks),
            jwks_fetches: Arc::clone(&jwks_fetches),
            introspections: Arc::clone(&introspections),
            opaque: Arc::clone(&opaque),
        });
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let state = Arc::clone(&state);
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        let state = Arc::clone(&state);
                        async move { Ok::<_, Infallible>(state.answer(req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tcp), service)
                        .await;
                });
            }
        });
        Self {
            addr,
            issuer,
            jwks,
            jwks_fetches,
            introspections,
            opaque,
            jwks_cache_control,
        }
    }

    /// Claims of a valid token for `resource`, for `sub`, with `scope`.
    pub fn claims(&self, resource: &str, sub: &str, scope: &str) -> Value {
        json!({
            "iss": self.issuer, "aud": resource, "sub": sub, "scope": scope,
            "client_id": CLIENT_ID, "iat": now(), "exp": now() + 600,
        })
    }

    pub fn fetches(&self) -> usize {
        self.jwks_fetches.load(Ordering::SeqCst)
    }
}

struct State {
    issuer: String,
    jwks: Arc<Mutex<Value>>,
    jwks_fetches: Arc<AtomicUsize>,
    introspections: Arc<AtomicUsize>,
    opaque: Arc<Mutex<HashMap<String, Value>>>,
    jwks_cache_control: Arc<Mutex<Option<String>>>,
}

impl State {
    async fn answer(&self, req: Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
        let path = req.uri().path().to_owned();
        let authorization = req
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = req
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let doc = match path.as_str() {
            "/.well-known/oauth-authorization-server" => json!({
                "issuer": self.issuer,
                "jwks_uri": format!("{}/jwks", self.issuer),
                "introspection_endpoint": format!("{}/introspect", self.issuer),
                "token_endpoint": format!("{}/token", self.issuer),
            }),
            "/jwks" => {
                self.jwks_fetches.fetch_add(1, Ordering::SeqCst);
                self.jwks.lock().expect("jwks").clone()
            }
            "/introspect" => {
                self.introspections.fetch_add(1, Ordering::SeqCst);
                let basic = format!(
                    "Basic {}",
                    mcp_core::protocol::base64::encode(
                        format!("{CLIENT_ID}:{}", form(CLIENT_SECRET)).as_bytes()
                    )
                );
                if authorization.as_deref() != Some(basic.as_str()) {
                    return status(401);
                }
                let text = String::from_utf8_lossy(&body).into_owned();
                let token = text
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("token="))
                    .unwrap_or_default()
                    .to_owned();
                self.opaque
                    .lock()
                    .expect("opaque")
                    .get(&token)
                    .cloned()
                    .unwrap_or_else(|| json!({"active": false}))
            }
            _ => return status(404),
        };
        let mut r = Response::new(Full::new(Bytes::from(doc.to_string())));
        r.headers_mut().insert(
            "content-type",
            hyper::header::HeaderValue::from_static("application/json"),
        );
        let cache_control = self.jwks_cache_control.lock().expect("cc").clone();
        if let (true, Some(cc)) = (path == "/jwks", cache_control) {
            if let Ok(value) = hyper::header::HeaderValue::from_str(&cc) {
                r.headers_mut().insert("cache-control", value);
            }
        }
        r
    }
}

fn status(code: u16) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::new()));
    *r.status_mut() = hyper::StatusCode::from_u16(code).expect("status");
    r
}

/// Form encoding as RFC 6749 §2.3.1 asks for client credentials.
fn form(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
