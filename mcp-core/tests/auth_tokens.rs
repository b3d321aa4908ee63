//! What the resource server trusts about a token, against the stand-in
//! authorization server of tests/common/oauth.rs: how long the issuer's
//! keys are trusted (a removed key stops verifying), which principal a
//! token gets (two callers never share one), and `exp` as the NumericDate
//! RFC 7519 defines (a fraction allowed).

#[path = "common/oauth.rs"]
mod oauth;
#[path = "common/raw_http.rs"]
mod raw_http;

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_core::auth::{
    IntrospectionVerifier, JwtVerifier, Rejection, ResourceServer, TokenVerifier,
};
use mcp_core::transport::http::HttpHandle;
use mcp_core::McpServer;
use mcp_core::{serve_http, HttpOptions};
use oauth::{AuthServer, TestKey, CLIENT_ID, CLIENT_SECRET};
use raw_http::{raw, Resp};
use serde_json::{json, Value};

const RESOURCE: &str = "https://mcp.example.test/mcp";

/// Now, in seconds since the epoch with their fraction.
fn now_f() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64()
}

/// Valid claims (for `RESOURCE`) of `auth`, with `edit` applied.
fn claims(auth: &AuthServer, edit: impl FnOnce(&mut Value)) -> Value {
    let mut claims = auth.claims(RESOURCE, "alice", "");
    edit(&mut claims);
    claims
}

fn unknown_kid(kid: &str) -> Rejection {
    Rejection::invalid(format!("unknown signing key id `{kid}`"))
}

// ---------------------------------------------------------------- keys

/// A signing key the authorization server removed from its JWKS (it
/// leaked, say) used to stay trusted until the server restarted: keys were
/// fetched again only for an unknown `kid`. Now the keys are trusted for
/// their age only, then fetched again, and the removed key verifies
/// nothing more — not even a token verified (and remembered) before.
#[tokio::test]
async fn a_key_removed_from_the_jwks_is_refused_once_the_keys_expire() {
    let kept = TestKey::new("kept");
    let leaked = TestKey::new("leaked");
    let auth = AuthServer::start(&[&kept, &leaked]).await;
    let verifier =
        JwtVerifier::new(auth.issuer.clone(), RESOURCE).key_max_age(Duration::from_millis(300));
    let stolen = leaked.sign(&claims(&auth, |_| {}));
    let honest = kept.sign(&claims(&auth, |_| {}));
    assert!(verifier.verify(&stolen).await.is_ok());
    assert!(verifier.verify(&honest).await.is_ok());
    assert_eq!(auth.fetches(), 1);

    // The authorization server drops the leaked key.
    *auth.jwks.lock().expect("jwks") = json!({"keys": [kept.jwk()]});
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(verifier.verify(&stolen).await, Err(unknown_kid("leaked")));
    assert!(verifier.verify(&honest).await.is_ok());
    assert_eq!(auth.fetches(), 2, "one fetch once the keys expired");
}

/// Expired keys are not used when they cannot be fetched again: the
/// request is answered as unavailable (503), never checked against keys
/// the authorization server may have withdrawn.
#[tokio::test]
async fn expired_keys_that_cannot_be_fetched_again_are_not_used() {
    let key = TestKey::new("k");
    let auth = AuthServer::start(&[&key]).await;
    let verifier =
        JwtVerifier::new(auth.issuer.clone(), RESOURCE).key_max_age(Duration::from_millis(200));
    let token = key.sign(&claims(&auth, |_| {}));
    assert!(verifier.verify(&token).await.is_ok());
    *auth.jwks.lock().expect("jwks") = json!({"broken": true});
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = verifier.verify(&token).await;
    assert!(
        matches!(answer, Err(Rejection::Unavailable(_))),
        "{answer:?}"
    );
}

/// A JWKS answer's `Cache-Control: max-age` decides the keys' age, but
/// never below 30 s: `no-store` (or `max-age=0`) does not make every
/// request fetch the keys.
#[tokio::test]
async fn cache_control_on_the_jwks_sets_the_age_within_bounds() {
    let key = TestKey::new("k");
    let auth = AuthServer::start(&[&key]).await;
    *auth.jwks_cache_control.lock().expect("cc") = Some("no-store".to_owned());
    // Without the answer's header, keys this old would be fetched each time.
    let verifier = JwtVerifier::new(auth.issuer.clone(), RESOURCE)
        .key_max_age(Duration::ZERO)
        .verified_cache(0);
    let token = key.sign(&claims(&auth, |_| {}));
    for _ in 0..3 {
        assert!(verifier.verify(&token).await.is_ok());
    }
    assert_eq!(auth.fetches(), 1, "kept for the 30 s floor");

    // The same verifier settings, no header: the configured age applies.
    *auth.jwks_cache_control.lock().expect("cc") = None;
    let verifier = JwtVerifier::new(auth.issuer.clone(), RESOURCE)
        .key_max_age(Duration::ZERO)
        .verified_cache(0);
    for _ in 0..3 {
        assert!(verifier.verify(&token).await.is_ok());
    }
    assert_eq!(auth.fetches(), 4, "an age of zero: fetched for each token");
}

// ---------------------------------------------------------------- principals

/// Tokens with neither `sub` nor `client_id`/`azp` all used to be the one
/// principal `anonymous-token`, sharing sessions, tasks and per-principal
/// limits. Each now has a principal of its own.
#[tokio::test]
async fn tokens_without_subject_or_client_never_share_a_principal() {
    let key = TestKey::new("k");
    let auth = AuthServer::start(&[&key]).await;
    let verifier = JwtVerifier::new(auth.issuer.clone(), RESOURCE);
    let bare = |jti: &str| {
        key.sign(&claims(&auth, |c| {
            let m = c.as_object_mut().expect("claims");
            m.remove("sub");
            m.remove("client_id");
            m.insert("jti".into(), json!(jti));
        }))
    };
    let one = verifier.verify(&bare("one")).await.expect("valid");
    let two = verifier.verify(&bare("two")).await.expect("valid");
    assert_ne!(one.principal(), two.principal());
    assert!(one.principal().starts_with("token:"), "{}", one.principal());
    // The same token is the same principal each time.
    let again = verifier.verify(&bare("one")).await.expect("valid");
    assert_eq!(one.principal(), again.principal());
}

/// A user whose subject is `client:app1` used to be the same principal as
/// client `app1`'s own (client-credentials) token, so either could use the
/// other's sessions and tasks. The kinds are now apart.
#[tokio::test]
async fn a_subject_shaped_like_a_client_principal_is_not_that_client() {
    let key = TestKey::new("k");
    let auth = AuthServer::start(&[&key]).await;
    let verifier = JwtVerifier::new(auth.issuer.clone(), RESOURCE);
    let user = key.sign(&claims(&auth, |c| c["sub"] = json!("client:app1")));
    let client = key.sign(&claims(&auth, |c| {
        let m = c.as_object_mut().expect("claims");
        m.remove("sub");
        m.insert("client_id".into(), json!("app1"));
    }));
    let user = verifier.verify(&user).await.expect("valid");
    let client = verifier.verify(&client).await.expect("valid");
    assert_eq!(user.principal(), "sub:client:app1");
    assert_eq!(client.principal(), "client:app1");
}

/// RFC 7662 requires only `active` in an introspection answer: with
/// minimal answers every caller used to be the one principal
/// `anonymous-token`, and a subject `client:app1` met the client `app1`.
#[tokio::test]
async fn minimal_introspection_answers_never_share_a_principal() {
    let auth = AuthServer::start(&[]).await;
    {
        let mut tokens = auth.opaque.lock().expect("opaque");
        tokens.insert("first".into(), json!({"active": true}));
        tokens.insert("second".into(), json!({"active": true}));
        tokens.insert("user".into(), json!({"active": true, "sub": "client:app1"}));
        tokens.insert(
            "client".into(),
            json!({"active": true, "client_id": "app1"}),
        );
    }
    let verifier = IntrospectionVerifier::new(
        format!("{}/introspect", auth.issuer),
        CLIENT_ID,
        CLIENT_SECRET,
        RESOURCE,
    );
    let principal = |info: Result<mcp_core::context::AuthInfo, Rejection>| {
        info.expect("active").principal().to_owned()
    };
    let first = principal(verifier.verify("first").await);
    let second = principal(verifier.verify("second").await);
    assert_ne!(first, second);
    assert!(first.starts_with("token:"), "{first}");
    let user = principal(verifier.verify("user").await);
    let client = principal(verifier.verify("client").await);
    assert_eq!(user, "sub:client:app1");
    assert_eq!(client, "client:app1");
}

async fn serve(auth: &AuthServer) -> HttpHandle {
    let verifier = JwtVerifier::new(auth.issuer.clone(), RESOURCE);
    let rs = ResourceServer::new(RESOURCE, verifier).authorization_server(auth.issuer.clone());
    let server = McpServer::builder()
        .server_info("auth-tokens", "1.0.0")
        .build()
        .expect("server");
    serve_http(server, HttpOptions::new().resource_server(rs))
        .await
        .expect("serve")
}

async fn post(addr: SocketAddr, token: &str, session: Option<&str>, body: &Value) -> Resp {
    let body = body.to_string();
    let session = session.map_or(String::new(), |s| format!("Mcp-Session-Id: {s}\r\n"));
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Authorization: Bearer {token}\r\n{session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    raw(addr, head.as_bytes()).await
}

/// End to end: the session a user with subject `client:app1` started is
/// not the session of client `app1`'s token (nor the other way round),
/// and a token without subject or client cannot use another such token's
/// session: each gets 404, as for an unknown session.
#[tokio::test]
async fn sessions_are_not_shared_by_colliding_identities() {
    let key = TestKey::new("k");
    let auth = AuthServer::start(&[&key]).await;
    let http = serve(&auth).await;
    let addr = http.local_addr();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "auth-tokens", "version": "1"}}});
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let without = |c: &mut Value, drop: &[&str]| {
        let m = c.as_object_mut().expect("claims");
        for name in drop {
            m.remove(*name);
        }
    };
    let user = key.sign(&claims(&auth, |c| c["sub"] = json!("client:app1")));
    let client = key.sign(&claims(&auth, |c| {
        without(c, &["sub"]);
        c["client_id"] = json!("app1");
    }));
    let bare_a = key.sign(&claims(&auth, |c| {
        without(c, &["sub", "client_id"]);
        c["jti"] = json!("a");
    }));
    let bare_b = key.sign(&claims(&auth, |c| {
        without(c, &["sub", "client_id"]);
        c["jti"] = json!("b");
    }));
    for (owner, intruder) in [(&user, &client), (&client, &user), (&bare_a, &bare_b)] {
        let r = post(addr, owner, None, &init).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let session = r.header("mcp-session-id").expect("session").to_owned();
        let mine = post(addr, owner, Some(&session), &ping).await;
        assert_eq!(mine.status, 200, "{}", mine.text());
        let theirs = post(addr, intruder, Some(&session), &ping).await;
        assert_eq!(theirs.status, 404, "{}", theirs.text());
    }
    http.close().await;
}

// ---------------------------------------------------------------- exp

/// A fractional `exp` (RFC 7519 NumericDate allows one) used to escape
/// the verified-token cache's bound (`as_u64` of a float is nothing), so
/// a token was accepted for a minute past its `exp`. It is now refused as
/// soon as it expired.
#[tokio::test]
async fn a_remembered_token_with_a_fractional_exp_expires() {
    let key = TestKey::new("k");
    let auth = AuthServer::start(&[&key]).await;
    let verifier = JwtVerifier::new(auth.issuer.clone(), RESOURCE).leeway(Duration::ZERO);
    let token = key.sign(&claims(&auth, |c| c["exp"] = json!(now_f() + 1.5)));
    assert!(verifier.verify(&token).await.is_ok());
    tokio::time::sleep(Duration::from_millis(2600)).await;
    assert_eq!(
        verifier.verify(&token).await,
        Err(Rejection::invalid("the token expired"))
    );
    // Long expired, with a fraction: refused (within the leeway too).
    let old = key.sign(&claims(&auth, |c| c["exp"] = json!(now_f() - 100.5)));
    assert_eq!(
        verifier.verify(&old).await,
        Err(Rejection::invalid("the token expired"))
    );
}

/// The introspection verifier used to skip its own expiry check for a
/// fractional `exp` (read as an integer, it was absent): an answer that
/// says `active` for a token expired 100.5 s ago is refused.
#[tokio::test]
async fn an_introspected_token_with_a_fractional_exp_in_the_past_is_refused() {
    let auth = AuthServer::start(&[]).await;
    {
        let mut tokens = auth.opaque.lock().expect("opaque");
        tokens.insert(
            "stale".into(),
            json!({"active": true, "sub": "alice", "exp": now_f() - 100.5}),
        );
        tokens.insert(
            "fresh".into(),
            json!({"active": true, "sub": "alice", "exp": now_f() + 100.5}),
        );
        tokens.insert(
            "garbled".into(),
            json!({"active": true, "sub": "alice", "exp": "tomorrow"}),
        );
    }
    let verifier = IntrospectionVerifier::new(
        format!("{}/introspect", auth.issuer),
        CLIENT_ID,
        CLIENT_SECRET,
        RESOURCE,
    );
    assert_eq!(
        verifier.verify("stale").await,
        Err(Rejection::invalid("the token expired"))
    );
    let fresh = verifier.verify("fresh").await.expect("active");
    assert_eq!(fresh.principal(), "sub:alice");
    assert_eq!(
        verifier.verify("garbled").await,
        Err(Rejection::invalid("malformed claim `exp`"))
    );
}
