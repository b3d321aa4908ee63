//! What the OAuth resource server adds to one request through the HTTP
//! service (`McpHttpService::handle`, in memory: no sockets), against the
//! same request without auth.
//!
//! Run: `cargo bench -p mcp-core --features auth --bench auth`. Cases:
//! - `no auth`: the echo `tools/call` of the HTTP benchmark;
//! - `jwt, remembered token`: the same with a bearer JWT whose key is cached
//!   and which was verified before (what a client sending its token on every
//!   request costs: a SHA-256 of the token and a table lookup);
//! - `jwt, new token each time`: the verified-token table off, so every
//!   request checks the Ed25519 signature and the claims (`verified_cache(0)`);
//! - `jwt RS256, new token each time`: the same with an RSA-2048 key
//!   (oidc-provider's default algorithm, and most authorization servers');
//! - `scoped tool`: a remembered token calling a tool that needs a scope.
//!
//! Each prints the median wall time per request over batches (one thread,
//! so it is the CPU cost). CI only builds this file.

#[path = "support/echo_request.rs"]
mod echo_request;

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair, RsaKeyPair, RsaPublicKeyComponents};
use bytes::Bytes;
use http_body_util::BodyExt;
use mcp_core::auth::{JwtVerifier, ResourceServer};
use mcp_core::{mcp_tool, transport::http::McpHttpService, HttpOptions, McpServer};
use serde_json::json;

const RESOURCE: &str = "http://127.0.0.1:40000/mcp";
const ISSUER: &str = "http://127.0.0.1:1";

/// Echo the input back.
#[mcp_tool]
async fn echo(text: String) -> String {
    text
}

/// Echo, for callers granted `echo:use`.
#[mcp_tool(scopes = ["echo:use"])]
async fn echo_scoped(text: String) -> String {
    text
}

/// Times the cases interleaved: each round runs a batch of every case in
/// turn, so a slower stretch of the machine (it is shared) weighs on all
/// cases alike; prints and returns each case's median per request.
///
/// A batch lasts about 0.4 ms whatever the case costs (5 to 50 requests):
/// on a loaded machine a longer batch is nearly always preempted, which
/// would inflate the costly cases' medians by the scheduler's slices.
fn measure(budget: Duration, cases: &mut [(&str, &mut dyn FnMut())]) -> Vec<Duration> {
    let mut batches = Vec::new();
    for (_, op) in cases.iter_mut() {
        let t = Instant::now();
        for _ in 0..200 {
            op();
        }
        let each = t.elapsed() / 200;
        let fit = Duration::from_micros(400).as_nanos() / each.as_nanos().max(1);
        batches.push(u32::try_from(fit.clamp(5, 50)).unwrap_or(50));
    }
    let mut per_op: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    let start = Instant::now();
    while start.elapsed() < budget || per_op[0].len() < 5 {
        for (i, (_, op)) in cases.iter_mut().enumerate() {
            let batch = batches[i];
            let t = Instant::now();
            for _ in 0..batch {
                op();
            }
            per_op[i].push(t.elapsed() / batch);
        }
    }
    let mut medians = Vec::new();
    for ((name, _), times) in cases.iter().zip(per_op.iter_mut()) {
        times.sort();
        let median = times[times.len() / 2];
        println!(
            "{name:<36} {median:>12?} / request (median of {} batches)",
            times.len()
        );
        medians.push(median);
    }
    medians
}

fn main() {
    let budget = Duration::from_secs(6);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let server = McpServer::builder()
        .server_info("auth-bench", "1.0.0")
        .tool(echo::tool())
        .tool(echo_scoped::tool())
        .build()
        .unwrap_or_else(|e| panic!("server: {e}"));

    let rng = aws_lc_rs::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap_or_else(|e| panic!("key: {e}"));
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap_or_else(|e| panic!("key: {e}"));
    let rsa = RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048)
        .unwrap_or_else(|e| panic!("rsa key: {e}"));
    let rsa_public = RsaPublicKeyComponents::<Vec<u8>>::from(rsa.public_key());
    let b64 = mcp_core::protocol::base64::encode_url;
    let jwks = json!({"keys": [
        {"kty": "OKP", "crv": "Ed25519", "kid": "k", "alg": "EdDSA", "x": b64(pair.public_key().as_ref())},
        {"kty": "RSA", "kid": "r", "alg": "RS256", "n": b64(&rsa_public.n), "e": b64(&rsa_public.e)},
    ]});
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let claims = json!({"iss": ISSUER, "aud": RESOURCE, "sub": "bench", "scope": "echo:use",
        "client_id": "bench", "iat": now, "exp": now + 3600});
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
    header.kid = Some("k".into());
    let token = jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_ed_der(pkcs8.as_ref()),
    )
    .unwrap_or_else(|e| panic!("sign: {e}"));
    // RS256, signed by hand (jsonwebtoken's RSA encoder wants PKCS#1 DER,
    // AWS-LC exports PKCS#8): header.claims, then the signature.
    let input = format!(
        "{}.{}",
        b64(json!({"alg": "RS256", "kid": "r"}).to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    let mut signature = vec![0; rsa.public_modulus_len()];
    rsa.sign(
        &aws_lc_rs::signature::RSA_PKCS1_SHA256,
        &rng,
        input.as_bytes(),
        &mut signature,
    )
    .unwrap_or_else(|e| panic!("rsa sign: {e}"));
    let rs_bearer = format!("Bearer {input}.{}", b64(&signature));
    let bearer = format!("Bearer {token}");

    let service = |verifier: Option<JwtVerifier>| {
        let mut options = HttpOptions::stateless();
        if let Some(v) = verifier {
            options = options.resource_server(ResourceServer::new(RESOURCE, v));
        }
        McpHttpService::new(server.clone(), options)
            .for_connection(Some(([127, 0, 0, 1], 40000).into()))
    };
    let plain = service(None);
    let remembered = service(Some(JwtVerifier::new(ISSUER, RESOURCE).fixed_keys(&jwks)));
    let fresh = service(Some(
        JwtVerifier::new(ISSUER, RESOURCE)
            .fixed_keys(&jwks)
            .verified_cache(0),
    ));
    let body = echo_request::echo_body(false);
    let scoped_body = Bytes::from(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"name":"echo_scoped","arguments":{"text":"hello world"}}})
        .to_string(),
    );
    let run = |service: &McpHttpService, body: &Bytes, auth: Option<&str>| {
        let mut req = echo_request::echo_post(body, false);
        if let Some(bearer) = auth {
            req.headers_mut().insert(
                "authorization",
                bearer.parse().unwrap_or_else(|e| panic!("header: {e}")),
            );
        }
        let bytes = rt.block_on(async {
            let response = service.handle(req).await;
            assert_eq!(response.status(), 200);
            response.into_body().collect().await.map(|b| b.to_bytes())
        });
        black_box(bytes.unwrap_or_default());
    };
    let (mut a, mut b, mut c, mut d, mut e) = (
        || run(&plain, &body, None),
        || run(&remembered, &body, Some(&bearer)),
        || run(&fresh, &body, Some(&bearer)),
        || run(&remembered, &scoped_body, Some(&bearer)),
        || run(&fresh, &body, Some(&rs_bearer)),
    );
    let medians = measure(
        budget,
        &mut [
            ("no auth", &mut a),
            ("jwt, remembered token", &mut b),
            ("jwt, new token each time", &mut c),
            ("jwt, remembered, scoped tool", &mut d),
            ("jwt RS256, new token each time", &mut e),
        ],
    );
    let (base, cached, full, scoped, rs) =
        (medians[0], medians[1], medians[2], medians[3], medians[4]);
    let added = |d: Duration| d.saturating_sub(base).as_secs_f64() * 1e6;
    println!(
        "added per request: remembered token {:.1} µs, signature checked {:.1} µs (RS256 {:.1} µs), scoped tool {:.1} µs",
        added(cached),
        added(full),
        added(rs),
        added(scoped)
    );
}
