#![cfg(feature = "client-oauth")]
//! Our OAuth client (`mcp_core::client::oauth`) against a real
//! authorization server, oidc-provider, and `examples/protected`, both
//! started by `tests/interop/oauth/run.sh`, which runs this test with
//! `MCP_OIDC_RESOURCE` (the protected MCP endpoint), `MCP_OIDC_BROWSER`
//! (a command that follows an authorization URL, appended as its last
//! argument, like a person, and prints the redirect URL) and
//! `MCP_OIDC_MARKER` (a file written when the test passed; run.sh fails
//! without it). Without `MCP_OIDC_RESOURCE` the test returns at once and
//! says so on stderr (it needs node and the servers).
//!
//! What it checks: the client registers itself dynamically (the
//! deprecated fallback: nothing is pre-registered), authorizes with the
//! code flow, steps up on `403 insufficient_scope`, and a second run on
//! the same store reuses the registration instead of registering again
//! (run.sh counts the authorization server's registrations: one).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::client::oauth::{AuthorizationStep, MemoryTokenStore, OAuth, TokenStore};
use mcp_core::client::{ClientBuilder, ClientError, Protocol};
use mcp_core::protocol::CallToolResult;
use serde_json::{json, Value};

const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// Runs the browser command for each authorization URL, and keeps them.
struct Browser {
    command: Vec<String>,
    urls: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl AuthorizationStep for Browser {
    fn redirect_uri(&self) -> String {
        REDIRECT.to_owned()
    }

    async fn authorize(&self, url: &str) -> Result<String, ClientError> {
        self.urls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(url.to_owned());
        let (program, args) = self
            .command
            .split_first()
            .ok_or_else(|| ClientError::Authorization("empty MCP_OIDC_BROWSER".into()))?;
        let mut command = std::process::Command::new(program);
        command.args(args).arg(url);
        let out = tokio::task::spawn_blocking(move || command.output())
            .await
            .map_err(|e| ClientError::Authorization(e.to_string()))?
            .map_err(|e| ClientError::Authorization(format!("{program}: {e}")))?;
        if !out.status.success() {
            return Err(ClientError::Authorization(format!(
                "the browser failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }
}

/// The value of `name` in the query of `url`.
fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name).then(|| v.replace("%3A", ":").replace("%20", " ").replace('+', " "))
    })
}

fn json_of(result: &CallToolResult) -> Value {
    let content = serde_json::to_value(&result.content).unwrap_or_default();
    let text = content[0]["text"].as_str().unwrap_or_default();
    serde_json::from_str(text).unwrap_or_else(|_| json!({"text": text}))
}

fn scopes(whoami: &Value) -> Vec<String> {
    let mut s: Vec<String> = whoami["scopes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    s.sort();
    s
}

fn oauth(
    browser: &[String],
    urls: &Arc<Mutex<Vec<String>>>,
    store: &Arc<MemoryTokenStore>,
) -> OAuth {
    let step = Browser {
        command: browser.to_vec(),
        urls: Arc::clone(urls),
    };
    OAuth::new(step)
        .client_name("mcp-core oauth_oidc test")
        .token_store(Arc::clone(store))
}

#[tokio::test]
async fn our_client_registers_once_steps_up_and_reuses_its_registration() {
    let Ok(resource) = std::env::var("MCP_OIDC_RESOURCE") else {
        // Straight to the process's stderr: the harness captures eprintln!.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"oauth_oidc: not run (tests/interop/oauth/run.sh runs it with MCP_OIDC_RESOURCE)\n",
        );
        return;
    };
    let browser: Vec<String> = std::env::var("MCP_OIDC_BROWSER")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let store = Arc::new(MemoryTokenStore::new());
    let urls = Arc::new(Mutex::new(Vec::new()));
    let connect = |oauth: OAuth| {
        ClientBuilder::new("oauth-oidc-test", "1")
            .protocol(Protocol::pinned("2025-11-25"))
            .timeout(Some(Duration::from_secs(60)))
            .oauth(oauth)
            .connect_http(&resource)
    };

    // Run 1: registration, the code flow for notes:read, then a step-up.
    let client = connect(oauth(&browser, &urls, &store))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let me = json_of(
        &client
            .call_tool("whoami", json!({}))
            .await
            .unwrap_or_else(|e| panic!("whoami: {e}")),
    );
    assert_eq!(me["principal"], "sub:alice", "{me}");
    assert_eq!(scopes(&me), ["notes:read"], "{me}");
    let added = client
        .call_tool("add_note", json!({"text": "from mcp-core's own client"}))
        .await
        .unwrap_or_else(|e| panic!("add_note after the step-up: {e}"));
    assert!(!added.is_error.unwrap_or(false), "{added:?}");
    let me = json_of(
        &client
            .call_tool("whoami", json!({}))
            .await
            .unwrap_or_else(|e| panic!("whoami: {e}")),
    );
    assert_eq!(scopes(&me), ["notes:read", "notes:write"], "{me}");
    client.close().await;

    let first_run: Vec<String> = urls.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(
        first_run.len(),
        2,
        "the authorization, then the step-up: {first_run:?}"
    );
    let step_up = param(&first_run[1], "scope").unwrap_or_default();
    assert!(
        step_up.contains("notes:read") && step_up.contains("notes:write"),
        "the step-up asks the union: {step_up}"
    );
    let tokens = store
        .load(&resource)
        .await
        .unwrap_or_else(|| panic!("no tokens kept"));
    let kept = store
        .load_registration(&tokens.issuer)
        .await
        .unwrap_or_else(|| panic!("no registration kept for {}", tokens.issuer));
    assert_eq!(tokens.client_id, kept.client_id);
    for url in &first_run {
        assert_eq!(
            param(url, "client_id").as_deref(),
            Some(kept.client_id.as_str())
        );
    }

    // Run 2: a new OAuth on the same store, without tokens: it authorizes
    // as the client it registered (run.sh checks there was no second
    // registration at the authorization server).
    store.clear(&resource).await;
    let client = connect(oauth(&browser, &urls, &store))
        .await
        .unwrap_or_else(|e| panic!("connect (run 2): {e}"));
    let me = json_of(
        &client
            .call_tool("whoami", json!({}))
            .await
            .unwrap_or_else(|e| panic!("whoami: {e}")),
    );
    assert_eq!(me["principal"], "sub:alice", "{me}");
    client.close().await;
    let all: Vec<String> = urls.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(all.len(), 3, "one authorization in run 2: {all:?}");
    assert_eq!(
        param(&all[2], "client_id").as_deref(),
        Some(kept.client_id.as_str())
    );
    assert_eq!(store.load_registration(&tokens.issuer).await, Some(kept));

    if let Ok(marker) = std::env::var("MCP_OIDC_MARKER") {
        std::fs::write(&marker, "passed\n").unwrap_or_else(|e| panic!("{marker}: {e}"));
    }
}
