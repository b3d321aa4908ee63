//! Opaque tokens through RFC 7662 introspection, against the stand-in
//! authorization server of tests/common/oauth.rs: active and inactive
//! tokens, audience checks, the answer cache, and the verifier on its own.

#[path = "common/oauth.rs"]
mod oauth;
#[path = "common/raw_http.rs"]
mod raw_http;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;

use mcp_core::auth::{IntrospectionVerifier, Rejection, ResourceServer, TokenVerifier};
use mcp_core::{context::AuthInfo, InvokeContext, McpServer, McpToolDef};
use mcp_core::{serve_http, HttpOptions};
use oauth::{now, AuthServer, CLIENT_ID, CLIENT_SECRET};
use raw_http::{raw, Resp};
use serde_json::{json, Value};

const RESOURCE: &str = "http://mcp.example.test/mcp";

fn verifier(auth: &AuthServer) -> IntrospectionVerifier {
    IntrospectionVerifier::new(
        format!("{}/introspect", auth.issuer),
        CLIENT_ID,
        CLIENT_SECRET,
        RESOURCE,
    )
    .issuer(auth.issuer.clone())
}

fn active(auth: &AuthServer, sub: &str, scope: &str, aud: Value) -> Value {
    json!({"active": true, "sub": sub, "scope": scope, "client_id": CLIENT_ID,
        "iss": auth.issuer, "aud": aud, "exp": now() + 600, "token_type": "Bearer"})
}

async fn post(addr: SocketAddr, token: &str, body: &Value) -> Resp {
    let body = body.to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Authorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    raw(addr, head.as_bytes()).await
}

#[tokio::test]
async fn active_tokens_pass_and_inactive_ones_are_401() {
    let auth = AuthServer::start(&[]).await;
    auth.opaque.lock().expect("opaque").insert(
        "opaque-alice".into(),
        active(&auth, "alice", "files:read", json!(RESOURCE)),
    );
    let server = McpServer::builder()
        .tool(McpToolDef::new(
            "whoami",
            "The caller",
            json!({"type": "object"}),
            |_a, ctx: InvokeContext| async move {
                ctx.extensions()
                    .get::<AuthInfo>()
                    .map(|a| format!("{} {}", a.principal(), a.scopes.join(",")))
                    .unwrap_or_default()
            },
        ))
        .build()
        .expect("server");
    let rs =
        ResourceServer::new(RESOURCE, verifier(&auth)).authorization_server(auth.issuer.clone());
    let http = serve_http(server, HttpOptions::stateless().resource_server(rs))
        .await
        .expect("serve");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}}});
    let r = post(http.local_addr(), "opaque-alice", &call).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "sub:alice files:read"
    );
    // The answer is cached: a second call asks nothing.
    let r = post(http.local_addr(), "opaque-alice", &call).await;
    assert_eq!(r.status, 200);
    assert_eq!(auth.introspections.load(Ordering::SeqCst), 1);

    let r = post(http.local_addr(), "opaque-unknown", &call).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(
        r.header("www-authenticate"),
        Some(
            "Bearer error=\"invalid_token\", error_description=\"the token is not active\", \
             resource_metadata=\"http://mcp.example.test/.well-known/oauth-protected-resource/mcp\""
        )
    );
}

#[tokio::test]
async fn introspection_checks_audience_issuer_and_expiry() {
    let auth = AuthServer::start(&[]).await;
    {
        let mut tokens = auth.opaque.lock().expect("opaque");
        tokens.insert(
            "mine".into(),
            active(&auth, "a", "x y", json!([RESOURCE, "other"])),
        );
        tokens.insert(
            "theirs".into(),
            active(&auth, "a", "x", json!("http://other.test/mcp")),
        );
        let mut no_aud = active(&auth, "a", "x", Value::Null);
        no_aud.as_object_mut().map(|m| m.remove("aud"));
        tokens.insert("no-aud".into(), no_aud);
        let mut expired = active(&auth, "a", "x", json!(RESOURCE));
        expired["exp"] = json!(now() - 5);
        tokens.insert("expired".into(), expired);
        let mut foreign = active(&auth, "a", "x", json!(RESOURCE));
        foreign["iss"] = json!("http://elsewhere.test");
        tokens.insert("foreign".into(), foreign);
    }
    let v = verifier(&auth);
    let info = v.verify("mine").await.expect("active");
    assert_eq!(info.principal(), "sub:a");
    assert_eq!(info.scopes, ["x", "y"]);
    assert_eq!(
        v.verify("theirs").await,
        Err(Rejection::invalid(
            "the token is not for this resource (aud)"
        ))
    );
    assert!(
        v.verify("no-aud").await.is_ok(),
        "aud is optional by default"
    );
    let strict = verifier(&auth).require_audience(true);
    assert_eq!(
        strict.verify("no-aud").await,
        Err(Rejection::invalid(
            "the token is not for this resource (aud)"
        ))
    );
    assert_eq!(
        v.verify("expired").await,
        Err(Rejection::invalid("the token expired"))
    );
    assert_eq!(
        v.verify("foreign").await,
        Err(Rejection::invalid("wrong issuer"))
    );
}

#[tokio::test]
async fn wrong_client_credentials_or_no_server_are_unavailable_never_a_pass() {
    let auth = AuthServer::start(&[]).await;
    auth.opaque
        .lock()
        .expect("opaque")
        .insert("t".into(), active(&auth, "a", "x", json!(RESOURCE)));
    let bad = IntrospectionVerifier::new(
        format!("{}/introspect", auth.issuer),
        CLIENT_ID,
        "wrong",
        RESOURCE,
    );
    assert!(matches!(
        bad.verify("t").await,
        Err(Rejection::Unavailable(_))
    ));
    // Nobody listens on port 1 of loopback: unavailable, over https too
    // (feature `tls`, which `auth` implies).
    let gone = IntrospectionVerifier::new("https://127.0.0.1:1/introspect", "c", "s", RESOURCE);
    match gone.verify("t").await {
        Err(Rejection::Unavailable(why)) => assert!(why.contains("127.0.0.1:1"), "{why}"),
        other => panic!("{other:?}"),
    }
    let ftp = IntrospectionVerifier::new("ftp://127.0.0.1/introspect", "c", "s", RESOURCE);
    match ftp.verify("t").await {
        Err(Rejection::Unavailable(why)) => {
            assert!(why.contains("unsupported URL scheme `ftp`"), "{why}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_cache_is_bounded() {
    let auth = AuthServer::start(&[]).await;
    for i in 0..5 {
        auth.opaque
            .lock()
            .expect("opaque")
            .insert(format!("t{i}"), active(&auth, "a", "x", json!(RESOURCE)));
    }
    let v = verifier(&auth).cache_entries(2);
    for i in 0..5 {
        v.verify(&format!("t{i}")).await.expect("active");
    }
    assert_eq!(auth.introspections.load(Ordering::SeqCst), 5);
    // The last two are cached; the first was evicted and is asked again.
    v.verify("t4").await.expect("cached");
    assert_eq!(auth.introspections.load(Ordering::SeqCst), 5);
    v.verify("t0").await.expect("asked again");
    assert_eq!(auth.introspections.load(Ordering::SeqCst), 6);
}
