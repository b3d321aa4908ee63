//! Dynamic client registrations (the deprecated fallback) kept in the
//! token store per authorization server: a later run (a new `OAuth` on
//! the same store) reuses the registration, for a new authorization and
//! for a refresh, and one the server refuses (`invalid_client`) is
//! replaced by a new registration.

use std::sync::Arc;

use mcp_core::client::oauth::{
    HeadlessRedirect, MemoryTokenStore, OAuth, PreRegistered, Registration, TokenStore,
};
use serde_json::json;

use super::server::{start, Plan, Server};
use super::{builder, text};

const REDIRECT: &str = "http://127.0.0.1:9/callback";

fn registering() -> Plan {
    Plan {
        registration: true,
        ..Plan::default()
    }
}

/// One run of a client process: a new `OAuth` on `store`, a connection,
/// a call of `read`.
async fn run(server: &Server, store: &Arc<MemoryTokenStore>) {
    let oauth = OAuth::new(HeadlessRedirect::new(REDIRECT)).token_store(Arc::clone(store));
    let client = builder("2026-07-28", oauth)
        .connect_http(&server.resource())
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let result = client
        .call_tool("read", json!({}))
        .await
        .unwrap_or_else(|e| panic!("read: {e}"));
    assert!(text(&result).contains("read done"), "{result:?}");
    client.close().await;
}

async fn kept(server: &Server, store: &MemoryTokenStore) -> Registration {
    store
        .load_registration(&server.issuer())
        .await
        .unwrap_or_else(|| panic!("no registration kept for {}", server.issuer()))
}

#[tokio::test]
async fn a_dynamic_registration_is_kept_and_reused_by_the_next_run() {
    let server = start(registering()).await;
    let store = Arc::new(MemoryTokenStore::new());
    run(&server, &store).await;
    let first = kept(&server, &store).await;
    assert!(first.client_id.starts_with("dyn-"), "{first:?}");
    assert!(first.client_secret.is_some(), "the secret is kept too");
    assert_eq!(first.redirect_uris, vec![REDIRECT.to_owned()]);

    // The next run has no tokens (say they were revoked): it authorizes
    // again, as the client it registered before.
    store.clear(&server.resource()).await;
    run(&server, &store).await;
    assert_eq!(kept(&server, &store).await, first);
    server.seen(|seen| {
        assert_eq!(seen.register.len(), 1, "registered once, then reused");
        // The server does not list its grant types: refresh is asked for.
        assert_eq!(
            seen.register[0]["grant_types"],
            json!(["authorization_code", "refresh_token"])
        );
        assert_eq!(seen.authorize.len(), 2, "one authorization per run");
        for q in &seen.authorize {
            assert_eq!(q["client_id"], first.client_id);
        }
        let exchanges: Vec<_> = seen
            .token
            .iter()
            .filter(|f| f["grant_type"] == "authorization_code")
            .collect();
        assert_eq!(exchanges.len(), 2);
        for form in exchanges {
            assert_eq!(Some(&form["client_secret"]), first.client_secret.as_ref());
        }
    });
}

#[tokio::test]
async fn a_new_run_refreshes_with_the_kept_registration() {
    let server = start(registering()).await;
    let store = Arc::new(MemoryTokenStore::new());
    run(&server, &store).await;
    let first = kept(&server, &store).await;
    // The access token dies; the stored refresh token is good.
    server.revoke_access_tokens();
    run(&server, &store).await;
    server.seen(|seen| {
        assert_eq!(seen.register.len(), 1, "no second registration");
        assert_eq!(seen.authorize.len(), 1, "a refresh, no new authorization");
        let refresh = seen
            .token
            .iter()
            .find(|f| f["grant_type"] == "refresh_token")
            .unwrap_or_else(|| panic!("no refresh: {:?}", seen.token));
        assert_eq!(refresh["client_id"], first.client_id);
        assert_eq!(
            Some(&refresh["client_secret"]),
            first.client_secret.as_ref()
        );
    });
}

#[tokio::test]
async fn a_registration_the_server_refuses_is_replaced() {
    let server = start(registering()).await;
    let store = Arc::new(MemoryTokenStore::new());
    run(&server, &store).await;
    let first = kept(&server, &store).await;
    server.forget_clients();
    store.clear(&server.resource()).await;
    run(&server, &store).await;
    let second = kept(&server, &store).await;
    assert_ne!(
        second.client_id, first.client_id,
        "a new registration is kept"
    );
    server.seen(|seen| {
        assert_eq!(seen.register.len(), 2);
        // The kept client was tried, refused with invalid_client at the
        // token endpoint, and the authorization ran again as the new one.
        let ids: Vec<&str> = seen
            .authorize
            .iter()
            .map(|q| q["client_id"].as_str())
            .collect();
        assert_eq!(
            ids,
            [
                first.client_id.as_str(),
                &first.client_id,
                &second.client_id
            ]
        );
    });
}

#[tokio::test]
async fn a_refused_refresh_registers_again_before_the_user_is_asked() {
    let server = start(registering()).await;
    let store = Arc::new(MemoryTokenStore::new());
    run(&server, &store).await;
    let first = kept(&server, &store).await;
    server.forget_clients();
    server.revoke_access_tokens();
    run(&server, &store).await;
    let second = kept(&server, &store).await;
    assert_ne!(second.client_id, first.client_id);
    server.seen(|seen| {
        assert_eq!(seen.register.len(), 2);
        let ids: Vec<&str> = seen
            .authorize
            .iter()
            .map(|q| q["client_id"].as_str())
            .collect();
        assert_eq!(
            ids,
            [first.client_id.as_str(), &second.client_id],
            "one authorization in the second run, as the new client"
        );
    });
}

#[tokio::test]
async fn pre_registered_credentials_are_never_stored() {
    let server = start(registering()).await;
    let store = Arc::new(MemoryTokenStore::new());
    // The fake server refuses clients it did not register: the grant
    // fails, but what matters here is what the store holds.
    let oauth = OAuth::new(HeadlessRedirect::new(REDIRECT))
        .pre_registered(PreRegistered::new("test-client"))
        .token_store(Arc::clone(&store));
    let outcome = match builder("2026-07-28", oauth)
        .connect_http(&server.resource())
        .await
    {
        Ok(client) => client.call_tool("read", json!({})).await.map(|_| ()),
        Err(e) => Err(e),
    };
    assert!(outcome.is_err(), "the server refuses test-client");
    assert_eq!(store.load_registration(&server.issuer()).await, None);
    server.seen(|seen| assert!(seen.register.is_empty(), "no registration"));
}
