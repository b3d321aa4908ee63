//! Who owns a legacy session shared between replicas through a session
//! store, with no principal hook set: two endpoints on loopback (the two
//! replicas) and a session store in memory, no Redis needed.

#[path = "common/raw_http.rs"]
mod raw_http;

use std::collections::HashMap;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::storage::{SessionRecord, SessionStore, Storage};
use mcp_core::transport::http::HttpHandle;
use mcp_core::transport::{StateKey, StateKeys};
use mcp_core::{serve_http, HttpOptions, McpServer};
use raw_http::{raw, Resp};
use serde_json::{json, Value};

/// A session store in memory, shared by the endpoints given clones of it.
#[derive(Clone, Default)]
struct Memory(Arc<Mutex<HashMap<String, SessionRecord>>>);

#[async_trait::async_trait]
impl SessionStore for Memory {
    async fn save(&self, id: &str, record: &SessionRecord, _ttl: Duration) -> Result<(), String> {
        self.0
            .lock()
            .map_err(|e| e.to_string())?
            .insert(id.to_owned(), record.clone());
        Ok(())
    }

    async fn load(&self, id: &str) -> Result<Option<SessionRecord>, String> {
        Ok(self.0.lock().map_err(|e| e.to_string())?.get(id).cloned())
    }

    async fn remove(&self, id: &str) -> Result<(), String> {
        self.0.lock().map_err(|e| e.to_string())?.remove(id);
        Ok(())
    }
}

/// The keys every replica of the deployment is configured with.
fn shared_keys() -> StateKeys {
    StateKeys::new(StateKey::new("deploy", [42u8; 32]).expect("key"), vec![])
}

fn server(keys: Option<StateKeys>, store: &Memory) -> McpServer {
    let builder = McpServer::builder()
        .server_info("session-owner", "1.0.0")
        .storage(Storage::memory().with_sessions(store.clone()));
    match keys {
        Some(keys) => builder.request_state_keys(keys),
        None => builder,
    }
    .build()
    .expect("server")
}

async fn replica(store: &Memory) -> HttpHandle {
    serve_http(server(Some(shared_keys()), store), HttpOptions::new())
        .await
        .expect("serve")
}

async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Resp {
    let body = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    raw(addr, head.as_bytes()).await
}

fn init() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "session-owner", "version": "1"}}})
}

fn ping() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})
}

/// The ownership rule replicas rely on: with no principal hook, a
/// session created on one replica is served by another (with the same
/// `requestState` keys) to the credential that created it, and to no other
/// credential nor to a request without one, which get 404 as for an
/// unknown session. (That separate processes agree is checked by
/// tests/replicas.rs, `a_legacy_session_survives_its_replicas_restart`.)
#[tokio::test]
async fn a_session_moves_to_another_replica_with_its_owner_only() {
    let store = Memory::default();
    let (a, b) = (replica(&store).await, replica(&store).await);
    let alice = [("Authorization", "Basic YWxpY2U6c2VjcmV0")];
    let r = post(a.local_addr(), &alice, &init()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let session = r.header("mcp-session-id").expect("session").to_owned();
    let with = |auth: Option<&'static str>| {
        let mut h = vec![("Mcp-Session-Id", session.clone())];
        if let Some(auth) = auth {
            h.push(("Authorization", auth.to_owned()));
        }
        h
    };
    let call = |headers: Vec<(&'static str, String)>, addr: SocketAddr| async move {
        let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        post(addr, &refs, &ping()).await
    };
    // Another credential, or none, is refused on the second replica...
    let bob = call(with(Some("Basic Ym9iOnNlY3JldA==")), b.local_addr()).await;
    assert_eq!(bob.status, 404, "{}", bob.text());
    let nobody = call(with(None), b.local_addr()).await;
    assert_eq!(nobody.status, 404, "{}", nobody.text());
    // ...and the owner is served there.
    let mine = call(with(Some(alice[0].1)), b.local_addr()).await;
    assert_eq!(mine.status, 200, "{}", mine.text());
    a.close().await;
    b.close().await;
}

/// With the per-process default keys and no principal hook, a session
/// store cannot work for clients sending `Authorization`: `serve_http`
/// refuses the options and names the fix, rather than answering 404 on
/// the other replicas. A principal hook is accepted.
#[tokio::test]
async fn a_store_without_a_shared_principal_is_refused_at_start() {
    let store = Memory::default();
    let Err(err) = serve_http(server(None, &store), HttpOptions::new()).await else {
        panic!("a session store no replica could share was accepted");
    };
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let text = err.to_string();
    assert!(text.contains("request_state_keys"), "{text}");
    assert!(text.contains("HttpOptions::principal"), "{text}");
    let hooked = serve_http(
        server(None, &store),
        HttpOptions::new().principal(|parts| Some(format!("{:?}", parts.headers.get("x-user")?))),
    )
    .await
    .expect("a principal hook is enough");
    hooked.close().await;
}
