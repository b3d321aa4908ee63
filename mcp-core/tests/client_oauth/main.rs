//! The OAuth client (`mcp_core::client::oauth`) against a server written
//! here with hyper, on an ephemeral port, that plays both the protected
//! MCP resource (our own `McpHttpService` behind a bearer check with a
//! scope per tool) and its authorization server (metadata, an authorize
//! endpoint that approves at once, a token endpoint that checks PKCE).

mod registration;
mod server;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::Method;
use mcp_core::client::oauth::{HeadlessRedirect, OAuth, PreRegistered};
use mcp_core::client::{ClientBuilder, ClientError, Protocol};
use mcp_core::{protocol::CallToolResult, HttpOptions, McpServer};
use serde_json::json;

use server::{start, Plan, READ_SCOPE, WRITE_SCOPE};
fn oauth() -> OAuth {
    OAuth::new(HeadlessRedirect::new("http://127.0.0.1:9/callback"))
        .pre_registered(PreRegistered::new("test-client"))
}

fn builder(protocol: &str, oauth: OAuth) -> ClientBuilder {
    ClientBuilder::new("oauth-test", "1")
        .protocol(Protocol::pinned(protocol))
        .timeout(Some(Duration::from_secs(30)))
        .oauth(oauth)
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).map_or_else(|_| String::new(), |v| v.to_string())
}

#[tokio::test]
async fn the_full_flow_verifies_pkce_and_every_request_carries_the_token() {
    for era in ["2025-11-25", "2026-07-28"] {
        let server = start(Plan::default()).await;
        let client = builder(era, oauth())
            .connect_http(&server.resource())
            .await
            .unwrap_or_else(|e| panic!("{era}: connect: {e}"));
        let result = client
            .call_tool("read", json!({}))
            .await
            .unwrap_or_else(|e| panic!("{era}: read: {e}"));
        assert!(text(&result).contains("read done"), "{era}: {result:?}");
        client.close().await;

        server.seen(|seen| {
            assert_eq!(seen.authorize.len(), 1, "{era}: one authorization");
            let q = &seen.authorize[0];
            assert_eq!(q["code_challenge_method"], "S256");
            assert_eq!(q["client_id"], "test-client");
            assert_eq!(q["resource"], server.resource(), "{era}: RFC 8707 resource");
            // The metadata's scopes_supported (no scope in the challenge),
            // plus offline_access, which the authorization server lists.
            assert_eq!(q["scope"], format!("{READ_SCOPE} offline_access"));
            assert_eq!(
                seen.token.len(),
                1,
                "{era}: one code exchange (PKCE checked by the server)"
            );
            assert_eq!(seen.token[0]["grant_type"], "authorization_code");
            // Only the very first request went without the token.
            let (first, rest) = seen
                .mcp
                .split_first()
                .unwrap_or_else(|| panic!("{era}: no request"));
            assert!(first.1.is_none(), "{era}: {first:?}");
            assert!(!rest.is_empty());
            for (method, auth) in rest {
                assert!(
                    auth.as_deref().is_some_and(|a| a.starts_with("Bearer at-")),
                    "{era}: {method} without the token: {auth:?}"
                );
            }
            if era == "2025-11-25" {
                assert!(
                    rest.iter().any(|(m, _)| m == Method::DELETE),
                    "the closing DELETE went out (with the token)"
                );
            }
        });
    }
}

#[tokio::test]
async fn a_missing_scope_steps_up_with_the_union_of_scopes() {
    let server = start(Plan::default()).await;
    let client = builder("2026-07-28", oauth())
        .connect_http(&server.resource())
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let result = client
        .call_tool("write", json!({}))
        .await
        .unwrap_or_else(|e| panic!("write: {e}"));
    assert!(text(&result).contains("write done"), "{result:?}");
    server.seen(|seen| {
        assert_eq!(seen.authorize.len(), 2, "the first grant, then the step-up");
        let scopes: Vec<&str> = seen.authorize[1]["scope"].split(' ').collect();
        assert!(scopes.contains(&READ_SCOPE), "kept: {scopes:?}");
        assert!(scopes.contains(&WRITE_SCOPE), "added: {scopes:?}");
    });
}

#[tokio::test]
async fn an_expired_token_is_refreshed_before_it_is_sent() {
    // Tokens that expire in 1 s are within the 30 s refresh margin at once.
    let server = start(Plan {
        expires_in: Some(1),
        ..Plan::default()
    })
    .await;
    let oauth = oauth();
    let client = builder("2026-07-28", oauth.clone())
        .connect_http(&server.resource())
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    client
        .call_tool("read", json!({}))
        .await
        .unwrap_or_else(|e| panic!("read: {e}"));
    server.seen(|seen| {
        assert_eq!(seen.authorize.len(), 1, "refreshed, not re-authorized");
        assert!(
            seen.token.iter().any(|f| f["grant_type"] == "refresh_token"
                && f["resource"] == server.resource()
                && f["client_id"] == "test-client"),
            "{:?}",
            seen.token
        );
    });
    let held = oauth
        .tokens(&server.resource())
        .await
        .unwrap_or_else(|| panic!("tokens kept"));
    let last = server.seen(|s| s.mcp.last().and_then(|(_, a)| a.clone()));
    assert_eq!(
        last,
        Some(format!("Bearer {}", held.access_token)),
        "the refreshed token went out"
    );
}

#[tokio::test]
async fn a_401_mid_session_refreshes_once_and_the_call_goes_through() {
    let server = start(Plan::default()).await;
    let client = builder("2025-11-25", oauth())
        .connect_http(&server.resource())
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    client
        .call_tool("read", json!({}))
        .await
        .unwrap_or_else(|e| panic!("read: {e}"));
    server.revoke_access_tokens();
    client
        .call_tool("read", json!({}))
        .await
        .unwrap_or_else(|e| panic!("read after revocation: {e}"));
    server.seen(|seen| {
        assert_eq!(seen.authorize.len(), 1);
        let grants: Vec<&str> = seen
            .token
            .iter()
            .map(|f| f["grant_type"].as_str())
            .collect();
        assert_eq!(grants, ["authorization_code", "refresh_token"]);
    });
}

#[tokio::test]
async fn a_redirect_from_another_issuer_is_refused_before_the_code_is_used() {
    let server = start(Plan {
        wrong_iss: true,
        ..Plan::default()
    })
    .await;
    let outcome = builder("2026-07-28", oauth())
        .connect_http(&server.resource())
        .await;
    match outcome {
        Err(ClientError::Authorization(why)) => assert!(why.contains("issuer"), "{why}"),
        other => panic!("expected an authorization error, got {other:?}"),
    }
    server.seen(|seen| {
        assert_eq!(seen.authorize.len(), 1);
        assert!(
            seen.token.is_empty(),
            "the code never reached the token endpoint"
        );
    });
}

#[tokio::test]
async fn oversized_metadata_is_refused() {
    let server = start(Plan {
        padding: 100 * 1024,
        ..Plan::default()
    })
    .await;
    let outcome = builder("2026-07-28", oauth().max_document_bytes(16 * 1024))
        .connect_http(&server.resource())
        .await;
    match outcome {
        Err(ClientError::Authorization(why)) => {
            assert!(why.contains("exceeds 16384 bytes"), "{why}")
        }
        other => panic!("expected an authorization error, got {other:?}"),
    }
    server.seen(|seen| {
        assert_eq!(
            seen.metadata, 0,
            "discovery stopped at the oversized document"
        );
        assert!(seen.authorize.is_empty());
    });
}

#[tokio::test]
async fn step_up_gives_up_when_the_scope_never_suffices() {
    let server = start(Plan {
        never_enough: true,
        ..Plan::default()
    })
    .await;
    let client = builder("2026-07-28", oauth())
        .connect_http(&server.resource())
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    match client.call_tool("write", json!({})).await {
        Err(ClientError::Authorization(why)) => assert!(why.contains("403"), "{why}"),
        other => panic!("expected an authorization error, got {other:?}"),
    }
    let attempts = server.seen(|s| s.authorize.len());
    // The first grant (at connect), then at most two for the refused call.
    assert!(
        (2..=3).contains(&attempts),
        "{attempts} authorization requests"
    );
    // The client still works for what its token allows.
    client
        .call_tool("read", json!({}))
        .await
        .unwrap_or_else(|e| panic!("read: {e}"));
}

#[tokio::test]
async fn metadata_for_another_resource_is_refused() {
    let server = start(Plan {
        foreign_resource: true,
        ..Plan::default()
    })
    .await;
    match builder("2026-07-28", oauth())
        .connect_http(&server.resource())
        .await
    {
        Err(ClientError::Authorization(why)) => assert!(why.contains("evil.example.com"), "{why}"),
        other => panic!("expected an authorization error, got {other:?}"),
    }
    assert_eq!(server.seen(|s| s.metadata + s.authorize.len()), 0);
}

/// A plain HTTP/1.1 GET of `url` (`http://host:port/path`): status line
/// and headers, as text.
async fn raw_get(url: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let Ok(mut stream) = tokio::net::TcpStream::connect(host).await else {
        return String::new();
    };
    let req = format!("GET {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n");
    let _ = stream.write_all(req.as_bytes()).await;
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn the_loopback_listener_receives_the_browsers_redirect() {
    use mcp_core::client::oauth::LoopbackRedirect;
    let server = start(Plan::default()).await;
    let opened = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&opened);
    // The "browser": asks the authorization endpoint, then follows its
    // redirect to the loopback listener.
    let step = LoopbackRedirect::bind(0)
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"))
        .timeout(Duration::from_secs(20))
        .open_with(move |url| {
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(url.to_owned());
            let url = url.to_owned();
            tokio::spawn(async move {
                let answer = raw_get(&url).await;
                let location = answer
                    .lines()
                    .find_map(|l| l.strip_prefix("location: "))
                    .map(str::to_owned);
                if let Some(location) = location {
                    let _ = raw_get(&raw_get_favicon(&location)).await;
                    let _ = raw_get(&location).await;
                }
            });
        });
    let redirect = mcp_core::client::oauth::AuthorizationStep::redirect_uri(&step);
    assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
    let oauth = OAuth::new(step).pre_registered(PreRegistered::new("test-client"));
    let client = builder("2026-07-28", oauth)
        .connect_http(&server.resource())
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    client
        .call_tool("read", json!({}))
        .await
        .unwrap_or_else(|e| panic!("read: {e}"));
    assert_eq!(opened.lock().unwrap_or_else(|e| e.into_inner()).len(), 1);
    server.seen(|seen| assert_eq!(seen.authorize[0]["redirect_uri"], redirect));
}

/// A stray request a browser makes first: the listener must ignore it.
fn raw_get_favicon(location: &str) -> String {
    match location.find("/callback") {
        Some(at) => format!("{}/favicon.ico", &location[..at]),
        None => location.to_owned(),
    }
}

#[tokio::test]
async fn a_proxy_never_forwards_its_callers_token_to_an_oauth_backend() {
    use mcp_core::client::proxy::{ProxyOptions, Remote, Target};
    use mcp_core::serve_http;
    let backend = start(Plan::default()).await;
    let remote = Remote::connect(
        "backend",
        Target::Url(backend.resource()),
        builder("2026-07-28", oauth()),
        // Even when asked to forward: the backend's credentials are OAuth's.
        ProxyOptions::new().forward_authorization(true),
    )
    .await
    .unwrap_or_else(|e| panic!("remote: {e}"));
    let front = McpServer::builder()
        .server_info("front", "1")
        .mount(
            "remote",
            remote
                .builder()
                .await
                .unwrap_or_else(|e| panic!("listing: {e}")),
        )
        .build()
        .unwrap_or_else(|e| panic!("front: {e}"));
    let front = serve_http(front, HttpOptions::new().port(0))
        .await
        .unwrap_or_else(|e| panic!("serve: {e}"));
    for era in ["2025-11-25", "2026-07-28"] {
        let caller = ClientBuilder::new("caller", "0")
            .protocol(Protocol::pinned(era))
            .header("authorization", "Bearer the-callers-token")
            .connect_http(front.url())
            .await
            .unwrap_or_else(|e| panic!("{era}: caller: {e}"));
        let names: Vec<String> = caller
            .list_tools()
            .await
            .unwrap_or_else(|e| panic!("{era}: list: {e}"))
            .into_iter()
            .map(|t| t.name)
            .collect();
        let read = names
            .iter()
            .find(|n| n.ends_with("read"))
            .unwrap_or_else(|| panic!("{era}: {names:?}"));
        let result = caller
            .call_tool(read, json!({}))
            .await
            .unwrap_or_else(|e| panic!("{era}: call: {e}"));
        assert!(text(&result).contains("read done"), "{era}: {result:?}");
        caller.close().await;
    }
    backend.seen(|seen| {
        assert!(seen.mcp.len() >= 3);
        for (method, auth) in &seen.mcp {
            assert!(
                !auth
                    .as_deref()
                    .unwrap_or_default()
                    .contains("the-callers-token"),
                "{method}: the caller's token reached the backend"
            );
        }
    });
}

#[tokio::test]
async fn concurrent_refusals_share_one_refresh() {
    let server = start(Plan::default()).await;
    let client = builder("2026-07-28", oauth())
        .connect_http(&server.resource())
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    server.revoke_access_tokens();
    let calls = (0..4).map(|_| client.call_tool("read", json!({})));
    for outcome in futures_join(calls).await {
        outcome.unwrap_or_else(|e| panic!("read: {e}"));
    }
    server.seen(|seen| {
        let refreshes = seen
            .token
            .iter()
            .filter(|f| f["grant_type"] == "refresh_token")
            .count();
        assert_eq!(refreshes, 1, "one refresh served every refused call");
        assert_eq!(seen.authorize.len(), 1);
    });
}

/// Runs the futures concurrently and collects their outputs in order.
async fn futures_join<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut pinned: Vec<_> = futures.map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in pinned.iter_mut().enumerate() {
            if out[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => out[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().flatten().collect()
}

/// One memory store behind two `OAuth`s (as a file or a keychain is
/// behind two runs of a program).
struct SharedStore(Arc<mcp_core::client::oauth::MemoryTokenStore>);

#[async_trait::async_trait]
impl mcp_core::client::oauth::TokenStore for SharedStore {
    async fn load(&self, server: &str) -> Option<mcp_core::client::oauth::Tokens> {
        self.0.load(server).await
    }
    async fn save(&self, server: &str, tokens: mcp_core::client::oauth::Tokens) {
        self.0.save(server, tokens).await;
    }
    async fn clear(&self, server: &str) {
        self.0.clear(server).await;
    }
}

#[tokio::test]
async fn tokens_from_a_previous_run_are_used_and_refreshed() {
    use mcp_core::client::oauth::TokenStore;
    let server = start(Plan::default()).await;
    let store = Arc::new(mcp_core::client::oauth::MemoryTokenStore::new());
    let first = builder(
        "2026-07-28",
        oauth().token_store(SharedStore(Arc::clone(&store))),
    )
    .connect_http(&server.resource())
    .await
    .unwrap_or_else(|e| panic!("first run: {e}"));
    first.close().await;
    assert!(store.load(&server.resource()).await.is_some());

    // A second run: a new OAuth (no discovery, no registration yet) on the
    // same store sends the stored token at once, and refreshes it on a 401.
    let second = builder(
        "2026-07-28",
        oauth().token_store(SharedStore(Arc::clone(&store))),
    )
    .connect_http(&server.resource())
    .await
    .unwrap_or_else(|e| panic!("second run: {e}"));
    let unauthenticated = server.seen(|s| s.mcp.iter().filter(|(_, a)| a.is_none()).count());
    assert_eq!(
        unauthenticated, 1,
        "only the first run's first request went without a token"
    );
    server.revoke_access_tokens();
    second
        .call_tool("read", json!({}))
        .await
        .unwrap_or_else(|e| panic!("read: {e}"));
    server.seen(|seen| {
        assert_eq!(seen.authorize.len(), 1, "no second authorization");
        let grants: Vec<&str> = seen
            .token
            .iter()
            .map(|f| f["grant_type"].as_str())
            .collect();
        assert_eq!(grants, ["authorization_code", "refresh_token"]);
    });
}
