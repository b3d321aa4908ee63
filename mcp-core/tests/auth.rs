//! The OAuth resource server over real loopback HTTP, against a stand-in
//! authorization server started here (tests/common/oauth.rs): every bad
//! token with its exact status and challenge, the metadata documents, the
//! principal and its sessions, and scopes per tool in both eras.

#[path = "common/oauth.rs"]
mod oauth;
#[path = "common/raw_http.rs"]
mod raw_http;

use std::net::SocketAddr;

use mcp_core::auth::{JwtVerifier, ResourceServer};
use mcp_core::transport::http::HttpHandle;
use mcp_core::{context::AuthInfo, InvokeContext, McpServer, McpToolDef};
use mcp_core::{serve_http, HttpOptions};
use oauth::{now, AuthServer, TestKey};
use raw_http::{raw, Resp};
use serde_json::{json, Value};

/// This resource's canonical URI (a public name; the server listens on loopback).
const RESOURCE: &str = "https://mcp.example.test/mcp";
const METADATA: &str = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp";
const PV: &str = "io.modelcontextprotocol/protocolVersion";

fn server() -> McpServer {
    let empty = || json!({"type": "object"});
    McpServer::builder()
        .server_info("auth-test", "1.0.0")
        .tool(McpToolDef::new(
            "whoami",
            "The caller",
            empty(),
            |_a, ctx: InvokeContext| async move {
                let who = ctx.extensions().get::<AuthInfo>().cloned();
                json!({
                    "principal": who.as_ref().map(|w| w.principal().to_owned()),
                    "client": who.as_ref().and_then(|w| w.client_id.clone()),
                    "scopes": who.map(|w| w.scopes).unwrap_or_default(),
                    "token_visible": ctx.headers().contains_key("authorization"),
                })
                .to_string()
            },
        ))
        .tool(
            McpToolDef::new("read", "Read", empty(), |_a, _c: InvokeContext| async {
                "read ok"
            })
            .with_scopes(["files:read"]),
        )
        .tool(
            McpToolDef::new("write", "Write", empty(), |_a, _c: InvokeContext| async {
                "write ok"
            })
            .with_scopes(["files:write"]),
        )
        .build()
        .expect("server")
}

struct Fixture {
    auth: AuthServer,
    key: TestKey,
    http: HttpHandle,
}

impl Fixture {
    /// Legacy requests stateless (one POST each), as most tests here need.
    async fn start() -> Self {
        Self::with(HttpOptions::stateless()).await
    }

    async fn with(options: HttpOptions) -> Self {
        let key = TestKey::new("key-1");
        let auth = AuthServer::start(&[&key]).await;
        let verifier = JwtVerifier::new(auth.issuer.clone(), RESOURCE)
            .refetch_interval(std::time::Duration::from_secs(3600));
        let rs = ResourceServer::new(RESOURCE, verifier)
            .authorization_server(auth.issuer.clone())
            .scopes_supported(["profile"]);
        let http = serve_http(server(), options.resource_server(rs))
            .await
            .expect("serve");
        Self { auth, key, http }
    }

    fn addr(&self) -> SocketAddr {
        self.http.local_addr()
    }

    fn token(&self, sub: &str, scope: &str) -> String {
        self.key.sign(&self.auth.claims(RESOURCE, sub, scope))
    }

    /// A token with `edit` applied to valid claims.
    fn token_with(&self, edit: impl FnOnce(&mut Value)) -> String {
        let mut claims = self.auth.claims(RESOURCE, "alice", "files:read");
        edit(&mut claims);
        self.key.sign(&claims)
    }
}

/// POSTs `body` with these headers (plus JSON content type and accept).
async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Resp {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let body = body.to_string();
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    raw(addr, head.as_bytes()).await
}

async fn get(addr: SocketAddr, path: &str) -> Resp {
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    raw(addr, head.as_bytes()).await
}

fn call(id: i64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": {}}})
}

fn list() -> Value {
    json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}})
}

fn modern_call(id: i64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
    "params": {"name": name, "arguments": {}, "_meta": {
        PV: "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "auth-test", "version": "1"},
    }}})
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn invalid_token(why: &str) -> String {
    format!(
        "Bearer error=\"invalid_token\", error_description=\"{why}\", \
         resource_metadata=\"{METADATA}\""
    )
}

/// Asserts a 401 with exactly this challenge.
async fn assert_refused(f: &Fixture, authorization: &str, challenge: &str) {
    let r = post(
        f.addr(),
        &[("Authorization", authorization)],
        &call(1, "whoami"),
    )
    .await;
    assert_eq!(r.status, 401, "{authorization}: {}", r.text());
    assert_eq!(
        r.header("www-authenticate"),
        Some(challenge),
        "{authorization}"
    );
    assert_eq!(r.error_code(), -32600);
}

#[tokio::test]
async fn a_request_without_a_token_is_challenged_with_the_metadata_url() {
    let f = Fixture::start().await;
    let r = post(f.addr(), &[], &call(1, "whoami")).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(
        r.header("www-authenticate"),
        Some(format!("Bearer resource_metadata=\"{METADATA}\"").as_str())
    );
    // Another scheme is no bearer token either.
    let r = post(
        f.addr(),
        &[("Authorization", "Basic YTpi")],
        &call(1, "whoami"),
    )
    .await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.header("www-authenticate"),
        Some(format!("Bearer resource_metadata=\"{METADATA}\"").as_str())
    );
}

#[tokio::test]
async fn bad_tokens_are_refused_401_invalid_token() {
    let f = Fixture::start().await;
    // Malformed: not a JWS at all, and not even a b64token.
    assert_refused(
        &f,
        "Bearer not-a-jwt",
        &invalid_token("malformed token (not a JWS with a supported algorithm)"),
    )
    .await;
    assert_refused(&f, "Bearer a\"b", &invalid_token("malformed bearer token")).await;
    // Wrong signature: a valid token's signature from another key.
    let forger = TestKey::new("key-1");
    let forged = forger.sign(&f.auth.claims(RESOURCE, "alice", "files:read"));
    assert_refused(&f, &bearer(&forged), &invalid_token("bad signature")).await;
    // alg: none, with the signature left empty.
    let b64 = |v: Value| mcp_core::protocol::base64::encode_url(v.to_string().as_bytes());
    let none = format!(
        "{}.{}.",
        b64(json!({"alg": "none", "typ": "JWT", "kid": "key-1"})),
        b64(f.auth.claims(RESOURCE, "alice", "files:read"))
    );
    assert_refused(
        &f,
        &bearer(&none),
        &invalid_token("malformed token (not a JWS with a supported algorithm)"),
    )
    .await;
    // HS256 keyed with the public key (the classic confusion attack).
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = Some("key-1".into());
    let hmac = jsonwebtoken::encode(
        &header,
        &f.auth.claims(RESOURCE, "alice", "files:read"),
        &jsonwebtoken::EncodingKey::from_secret(&f.key.public_bytes()),
    )
    .expect("sign");
    assert_refused(
        &f,
        &bearer(&hmac),
        &invalid_token("algorithm HS256 is not accepted"),
    )
    .await;
    // Expired (past the 30 s leeway), not yet valid, wrong issuer, and a
    // token for another resource.
    let expired = f.token_with(|c| c["exp"] = json!(now() - 120));
    assert_refused(&f, &bearer(&expired), &invalid_token("the token expired")).await;
    let early = f.token_with(|c| c["nbf"] = json!(now() + 600));
    assert_refused(
        &f,
        &bearer(&early),
        &invalid_token("the token is not valid yet (nbf)"),
    )
    .await;
    let other_issuer = f.token_with(|c| c["iss"] = json!("http://127.0.0.1:1"));
    assert_refused(&f, &bearer(&other_issuer), &invalid_token("wrong issuer")).await;
    let elsewhere = f.token_with(|c| c["aud"] = json!("https://other.example.test/mcp"));
    assert_refused(
        &f,
        &bearer(&elsewhere),
        &invalid_token("the token is not for this resource (aud)"),
    )
    .await;
    let no_aud = f.token_with(|c| {
        c.as_object_mut().map(|m| m.remove("aud"));
    });
    assert_refused(&f, &bearer(&no_aud), &invalid_token("missing claim `aud`")).await;
}

#[tokio::test]
async fn an_unknown_kid_refetches_the_keys_once_then_refuses() {
    let f = Fixture::start().await;
    let ok = post(
        f.addr(),
        &[("Authorization", &bearer(&f.token("alice", "")))],
        &call(1, "whoami"),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(
        f.auth.fetches(),
        1,
        "the keys are fetched once, then cached"
    );
    let again = post(
        f.addr(),
        &[("Authorization", &bearer(&f.token("alice", "")))],
        &call(2, "whoami"),
    )
    .await;
    assert_eq!(again.status, 200);
    assert_eq!(f.auth.fetches(), 1, "a cached key costs no fetch");

    // A kid the JWKS lacks: one refetch, then refused.
    let stranger = TestKey::new("key-2");
    let token = stranger.sign(&f.auth.claims(RESOURCE, "alice", ""));
    assert_refused(
        &f,
        &bearer(&token),
        &invalid_token("unknown signing key id `key-2`"),
    )
    .await;
    assert_eq!(f.auth.fetches(), 2, "one refetch for the unknown kid");
    // More unknown kids within the rate limit fetch nothing more.
    for i in 0..3 {
        let token = stranger.sign_as(&format!("forged-{i}"), &f.auth.claims(RESOURCE, "a", ""));
        let r = post(
            f.addr(),
            &[("Authorization", &bearer(&token))],
            &call(3, "whoami"),
        )
        .await;
        assert_eq!(r.status, 401);
    }
    assert_eq!(f.auth.fetches(), 2, "refetches are rate-limited");
}

#[tokio::test]
async fn a_rotated_key_is_found_by_the_refetch() {
    let key = TestKey::new("old");
    let auth = AuthServer::start(&[&key]).await;
    let rs = ResourceServer::jwt(RESOURCE, auth.issuer.clone());
    let http = serve_http(server(), HttpOptions::stateless().resource_server(rs))
        .await
        .expect("serve");
    let token = key.sign(&auth.claims(RESOURCE, "alice", ""));
    let r = post(
        http.local_addr(),
        &[("Authorization", &bearer(&token))],
        &call(1, "whoami"),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    // The authorization server rotates to a new key.
    let new = TestKey::new("new");
    *auth.jwks.lock().expect("jwks") = json!({"keys": [new.jwk()]});
    let token = new.sign(&auth.claims(RESOURCE, "alice", ""));
    let r = post(
        http.local_addr(),
        &[("Authorization", &bearer(&token))],
        &call(2, "whoami"),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(auth.fetches(), 2);
}

#[tokio::test]
async fn the_principal_is_the_subject_and_reaches_handlers_without_the_token() {
    let f = Fixture::start().await;
    let token = f.token("alice", "files:read files:write");
    let r = post(
        f.addr(),
        &[("Authorization", &bearer(&token))],
        &call(1, "whoami"),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let text = r.json()["result"]["content"][0]["text"]
        .as_str()
        .map(str::to_owned);
    let who: Value = serde_json::from_str(&text.expect("text")).expect("json");
    assert_eq!(who["principal"], "sub:alice");
    assert_eq!(who["client"], oauth::CLIENT_ID);
    assert_eq!(who["scopes"], json!(["files:read", "files:write"]));
    assert_eq!(
        who["token_visible"], false,
        "the Authorization header stops at the resource server"
    );
}

#[tokio::test]
async fn another_principal_replaying_a_session_gets_404() {
    let f = Fixture::with(HttpOptions::new()).await;
    let alice = bearer(&f.token("alice", "files:read"));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "auth-test", "version": "1"}}});
    let r = post(f.addr(), &[("Authorization", &alice)], &init).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let session = r.header("mcp-session-id").expect("session").to_owned();
    let mine = post(
        f.addr(),
        &[("Authorization", &alice), ("Mcp-Session-Id", &session)],
        &call(1, "read"),
    )
    .await;
    assert_eq!(mine.status, 200, "{}", mine.text());
    // Bob's valid token with Alice's session id: as if it did not exist.
    let bob = bearer(&f.token("bob", "files:read"));
    let theirs = post(
        f.addr(),
        &[("Authorization", &bob), ("Mcp-Session-Id", &session)],
        &call(2, "read"),
    )
    .await;
    assert_eq!(theirs.status, 404, "{}", theirs.text());
    // A fresh token of Alice's (another token string, same subject) keeps it.
    let alice2 = bearer(&f.token_with(|c| c["jti"] = json!("second")));
    let again = post(
        f.addr(),
        &[("Authorization", &alice2), ("Mcp-Session-Id", &session)],
        &call(3, "read"),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.text());
}

fn scope_challenge(scope: &str) -> String {
    format!(
        "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{METADATA}\""
    )
}

#[tokio::test]
async fn a_call_lacking_a_scope_is_403_in_both_eras() {
    let f = Fixture::start().await;
    let reader = bearer(&f.token("alice", "files:read"));
    let ok = post(f.addr(), &[("Authorization", &reader)], &call(1, "read")).await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.json()["result"]["content"][0]["text"], "read ok");

    // Legacy: the tool name is in the body.
    let r = post(f.addr(), &[("Authorization", &reader)], &call(2, "write")).await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(
        r.header("www-authenticate"),
        Some(scope_challenge("files:write").as_str())
    );
    assert_eq!(r.json()["id"], 2);
    assert_eq!(r.error_code(), -32003);
    assert_eq!(r.json()["error"]["data"]["scopes"], json!(["files:write"]));
    assert!(r.text().contains("tool `write`"), "{}", r.text());

    // 2026-07-28: the same, with the routing headers.
    let headers = [
        ("Authorization", reader.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "write"),
    ];
    let r = post(f.addr(), &headers, &modern_call(3, "write")).await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(
        r.header("www-authenticate"),
        Some(scope_challenge("files:write").as_str())
    );
    assert_eq!(r.json()["id"], 3);
    let mut headers = headers;
    headers[3] = ("Mcp-Name", "read");
    let r = post(f.addr(), &headers, &modern_call(4, "read")).await;
    assert_eq!(r.status, 200, "{}", r.text());

    // A legacy batch with one forbidden entry is refused whole.
    let batch = json!([call(5, "read"), call(6, "write")]);
    let r = post(f.addr(), &[("Authorization", &reader)], &batch).await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(r.json()["id"], 6);
}

#[tokio::test]
async fn listings_show_only_what_the_token_may_use() {
    let f = Fixture::start().await;
    let names = |r: &Resp| -> Vec<String> {
        r.json()["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let none = post(
        f.addr(),
        &[("Authorization", &bearer(&f.token("a", "")))],
        &list(),
    )
    .await;
    assert_eq!(names(&none), ["whoami"]);
    let reader = post(
        f.addr(),
        &[("Authorization", &bearer(&f.token("a", "files:read")))],
        &list(),
    )
    .await;
    assert_eq!(names(&reader), ["whoami", "read"]);
    let both = bearer(&f.token("a", "files:read files:write"));
    let all = post(f.addr(), &[("Authorization", &both)], &list()).await;
    assert_eq!(names(&all), ["whoami", "read", "write"]);
}

#[tokio::test]
async fn protected_resource_metadata_is_served_at_both_paths() {
    let f = Fixture::start().await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let r = get(f.addr(), path).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(
            r.json(),
            json!({
                "resource": RESOURCE,
                "authorization_servers": [f.auth.issuer],
                "scopes_supported": ["files:read", "files:write", "profile"],
                "bearer_methods_supported": ["header"],
            }),
            "{path}"
        );
    }
    let r = get(f.addr(), "/.well-known/oauth-protected-resource/other").await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn required_scopes_are_named_in_the_401_and_enforced_as_403() {
    let key = TestKey::new("k");
    let auth = AuthServer::start(&[&key]).await;
    let rs = ResourceServer::jwt(RESOURCE, auth.issuer.clone()).required_scopes(["mcp"]);
    let http = serve_http(server(), HttpOptions::stateless().resource_server(rs))
        .await
        .expect("serve");
    let r = post(http.local_addr(), &[], &call(1, "whoami")).await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.header("www-authenticate"),
        Some(format!("Bearer scope=\"mcp\", resource_metadata=\"{METADATA}\"").as_str())
    );
    let token = key.sign(&auth.claims(RESOURCE, "alice", "files:read"));
    let r = post(
        http.local_addr(),
        &[("Authorization", &bearer(&token))],
        &call(1, "whoami"),
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(
        r.header("www-authenticate"),
        Some(scope_challenge("mcp").as_str())
    );
    let token = key.sign(&auth.claims(RESOURCE, "alice", "mcp"));
    let r = post(
        http.local_addr(),
        &[("Authorization", &bearer(&token))],
        &call(1, "whoami"),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test]
async fn an_unreachable_authorization_server_is_503_not_a_pass() {
    // Nothing listens on the issuer's port once this listener is dropped.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let issuer = format!("http://127.0.0.1:{port}");
    let rs = ResourceServer::jwt(RESOURCE, issuer.clone());
    let http = serve_http(server(), HttpOptions::stateless().resource_server(rs))
        .await
        .expect("serve");
    let key = TestKey::new("k");
    let claims = json!({"iss": issuer, "aud": RESOURCE, "sub": "a", "exp": now() + 60});
    let r = post(
        http.local_addr(),
        &[("Authorization", &bearer(&key.sign(&claims)))],
        &call(1, "whoami"),
    )
    .await;
    assert_eq!(r.status, 503, "{}", r.text());
}
