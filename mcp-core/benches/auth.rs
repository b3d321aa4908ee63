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
//! - `scoped tool`: a remembered token calling a tool that needs a scope.
//!
//! Each prints the median wall time per request over batches (one thread,
//! so it is the CPU cost). CI only builds this file.

#[path = "support/echo_request.rs"]
mod echo_request;

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use http_body_util::BodyExt;
use mcp_core::auth::{JwtVerifier, ResourceServer};
use mcp_core::{mcp_tool, HttpOptions, McpHttpService, McpServer};
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
fn measure(budget: Duration, cases: &mut [(&str, &mut dyn FnMut())]) -> Vec<Duration> {
    for (_, op) in cases.iter_mut() {
        for _ in 0..200 {
            op();
        }
    }
    let mut per_op: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    let start = Instant::now();
    while start.elapsed() < budget || per_op[0].len() < 5 {
        for (i, (_, op)) in cases.iter_mut().enumerate() {
            let batch = 50;
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

    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).unwrap_or_else(|e| panic!("random: {e}"));
    let key = ed25519_dalek::SigningKey::from_bytes(&seed);
    let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k", "alg": "EdDSA",
        "x": mcp_core::protocol::base64::encode_url(key.verifying_key().as_bytes())}]});
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let claims = json!({"iss": ISSUER, "aud": RESOURCE, "sub": "bench", "scope": "echo:use",
        "client_id": "bench", "iat": now, "exp": now + 3600});
    let der = key.to_pkcs8_der().unwrap_or_else(|e| panic!("pkcs8: {e}"));
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
    header.kid = Some("k".into());
    let token = jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_ed_der(der.as_bytes()),
    )
    .unwrap_or_else(|e| panic!("sign: {e}"));
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
    let run = |service: &McpHttpService, body: &Bytes, auth: bool| {
        let mut req = echo_request::echo_post(body, false);
        if auth {
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
    let (mut a, mut b, mut c, mut d) = (
        || run(&plain, &body, false),
        || run(&remembered, &body, true),
        || run(&fresh, &body, true),
        || run(&remembered, &scoped_body, true),
    );
    let medians = measure(
        budget,
        &mut [
            ("no auth", &mut a),
            ("jwt, remembered token", &mut b),
            ("jwt, new token each time", &mut c),
            ("jwt, remembered, scoped tool", &mut d),
        ],
    );
    let (base, cached, full, scoped) = (medians[0], medians[1], medians[2], medians[3]);
    let added = |d: Duration| d.saturating_sub(base).as_secs_f64() * 1e6;
    println!(
        "added per request: remembered token {:.1} µs, signature checked {:.1} µs, scoped tool {:.1} µs",
        added(cached),
        added(full),
        added(scoped)
    );
}
