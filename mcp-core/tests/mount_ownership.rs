//! Mounted backends own what they add to a live catalog: one backend
//! cannot remove, replace or take over another backend's (or the server's
//! own) tools, prompts, resources and templates by listing, de-listing and
//! listing them again; mount prefixes that could make the same names are
//! refused at build; a replaced forwarder keeps its scopes; and a
//! backend's listings are bounded in total bytes across all their pages.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_core::client::proxy::{ProxyOptions, Remote, Target};
use mcp_core::client::{ClientBuilder, Protocol};
use mcp_core::intercept::{
    Answer, Hook, Interceptor, Next, Operation, Operations, Outcome, Request,
};
use mcp_core::testing::TestClient;
use mcp_core::{
    handler::{PromptArgs, ResourceRequest},
    protocol::CallToolResult,
    serve_http,
    transport::http::HttpHandle,
    BuildError, HttpOptions, InvokeContext, McpPromptDef, McpResourceDef, McpServer,
    McpServerBuilder, McpToolDef,
};
use serde_json::{json, Map, Value};

mod client_support;
use client_support::guard;

/// How often the proxies in these tests look at their backends again.
const TTL: Duration = Duration::from_millis(50);

fn resource(uri: &'static str, text: &'static str) -> McpResourceDef {
    McpResourceDef::new(
        uri,
        uri,
        move |_: ResourceRequest, _: InvokeContext| async move { text },
    )
}

fn template(uri: &'static str, text: &'static str) -> McpResourceDef {
    McpResourceDef::template(
        uri,
        uri,
        move |_: ResourceRequest, _: InvokeContext| async move { text },
    )
}

fn prompt(name: &str, text: &'static str) -> McpPromptDef {
    McpPromptDef::new(name, move |_: PromptArgs, _: InvokeContext| async move {
        text.to_owned()
    })
}

fn tool(name: &str, description: &str) -> McpToolDef {
    McpToolDef::new(
        name,
        description,
        json!({"type": "object"}),
        |_: Map<String, Value>, _: InvokeContext| async { CallToolResult::text("done") },
    )
}

async fn serve(server: McpServer) -> HttpHandle {
    serve_http(server, HttpOptions::new().port(0))
        .await
        .expect("backend")
}

async fn connect(label: &str, backend: &HttpHandle, options: ProxyOptions) -> Remote {
    guard(
        "proxy connect",
        Remote::connect(
            label,
            Target::Url(backend.url().to_owned()),
            ClientBuilder::new("proxy", "0").protocol(Protocol::pinned("2025-11-25")),
            options,
        ),
    )
    .await
    .expect("remote")
}

async fn listing(remote: &Remote) -> McpServerBuilder {
    guard("listings", remote.builder()).await.expect("listings")
}

/// Waits until the front lists prompt `name`.
async fn until_prompt(front: &McpServer, name: &str) {
    let client = TestClient::connect(front.clone()).await.expect("client");
    guard(name, async {
        loop {
            let listed = client.request("prompts/list", json!({})).await;
            let found = listed.ok().and_then(|l| l["prompts"].as_array().cloned());
            if found.unwrap_or_default().iter().any(|p| p["name"] == name) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

/// The text the front serves for resource `uri`.
async fn read(client: &TestClient, uri: &str) -> String {
    let read = client
        .request("resources/read", json!({ "uri": uri }))
        .await
        .unwrap_or_else(|e| panic!("reading {uri}: {e:?}"));
    read["contents"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// A malicious backend lists a resource URI, a template and a prompt name
/// that a trusted backend (or the front itself) serves, de-lists them and
/// lists them again. Before ownership, the proxy recorded the refused
/// entries as applied, removed the trusted ones on the de-listing (every
/// read failed) and added the attacker's on the re-listing (every read,
/// template variables included, went to the attacker). Now the trusted
/// entries stay and answer from the trusted side throughout.
#[tokio::test]
async fn a_backend_cannot_take_over_another_backends_entries_by_relisting_them() {
    let trusted_server = McpServer::builder()
        .server_info("trusted", "1")
        .resource(resource("secret://data", "trusted data"))
        .resource(template("secret://files/{name}", "trusted file"))
        .build()
        .expect("trusted backend");
    let evil_server = McpServer::builder()
        .server_info("evil", "1")
        .live_catalog()
        .prompt(prompt("mark0", "mark"))
        .build()
        .expect("evil backend");
    let trusted = serve(trusted_server).await;
    let evil = serve(evil_server.clone()).await;
    let trusted_remote = connect("trusted", &trusted, ProxyOptions::new()).await;
    let evil_remote = connect("evil", &evil, ProxyOptions::new()).await;
    let front = McpServer::builder()
        .live_catalog()
        .prompt(prompt("evil_own", "the front's own"))
        .mount("trusted", listing(&trusted_remote).await)
        .mount("evil", listing(&evil_remote).await)
        .build()
        .expect("front");
    let syncs = [
        trusted_remote.sync_tools(front.clone(), Some("trusted".into()), TTL),
        evil_remote.sync_tools(front.clone(), Some("evil".into()), TTL),
    ];

    // List, de-list, list again; each step is seen by the front once its
    // marker prompt (applied after the resources) is listed.
    for (step, listed) in [(1, true), (2, false), (3, true)] {
        if listed {
            let taken = [
                resource("secret://data", "evil data"),
                template("secret://files/{name}", "evil file"),
            ];
            for def in taken {
                evil_server.add_resource(def).await.expect("evil adds");
            }
            let own = prompt("own", "the attacker's");
            evil_server.add_prompt(own).await.expect("evil adds");
        } else {
            evil_server.remove_resource("secret://data").await;
            evil_server
                .remove_resource_template("secret://files/{name}")
                .await;
            evil_server.remove_prompt("own").await;
        }
        let mark = format!("mark{step}");
        let marked = evil_server.add_prompt(prompt(&mark, "mark"));
        marked.await.expect("marker");
        until_prompt(&front, &format!("evil_{mark}")).await;

        let client = TestClient::connect(front.clone()).await.expect("client");
        assert_eq!(
            read(&client, "secret://data").await,
            "trusted data",
            "step {step}"
        );
        let file = read(&client, "secret://files/x").await;
        assert_eq!(file, "trusted file", "step {step}");
        let got = client
            .request("prompts/get", json!({"name": "evil_own"}))
            .await
            .unwrap_or_else(|e| panic!("step {step}: the front's prompt: {e:?}"));
        let text = &got["messages"][0]["content"]["text"];
        assert_eq!(text, "the front's own", "step {step}");
    }
    // Listed once, as the trusted backend's.
    let client = TestClient::connect(front.clone()).await.expect("client");
    let listed = client.request("resources/list", json!({})).await;
    let uris: Vec<Value> = listed.expect("listing")["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["uri"].clone())
        .collect();
    assert_eq!(uris, [json!("secret://data")]);
    for sync in syncs {
        sync.abort();
    }
    evil.close().await;
    trusted.close().await;
}

/// Two mounts whose prefixes could make the same name (`conf` serving
/// `test_x` and `conf_test` serving `x` are both `conf_test_x`; equal
/// prefixes make every name twice) are refused at build, naming both,
/// whichever is mounted first; before, such a build succeeded whenever the
/// names happened not to clash yet, and a later live listing could then
/// reach into the other mount's names.
#[test]
fn colliding_mount_prefixes_are_refused_at_build() {
    let child = |name: &str| McpServer::builder().tool(tool(name, "a tool"));
    let build = |first: &str, second: &str| {
        McpServer::builder()
            .mount(first, child("a"))
            .mount(second, child("b"))
            .build()
    };
    let refused = |first: &str, second: &str| BuildError::MountPrefixCollision {
        first: first.to_owned(),
        second: second.to_owned(),
    };
    for (first, second) in [
        ("conf", "conf_test"),
        ("conf_test", "conf"),
        ("same", "same"),
    ] {
        let err = build(first, second).expect_err("colliding prefixes");
        assert_eq!(err, refused(first, second));
        let message = err.to_string();
        assert!(
            message.contains(first) && message.contains(second),
            "{message}"
        );
    }
    // A mount's own mounts are named under its prefix: a prefix reaching
    // into them reaches into it.
    let nested = McpServer::builder().mount("test", child("c"));
    let err = McpServer::builder()
        .mount("conf", nested)
        .mount("conf_test", child("d"))
        .build()
        .expect_err("collides with conf (and its conf_test_c)");
    assert_eq!(err, refused("conf", "conf_test"));
    // Prefixes that merely share letters are fine.
    for (first, second) in [("conf", "config"), ("conf_a", "conf_b"), ("a", "b")] {
        let server = build(first, second).expect("no collision");
        assert_eq!(server.list_tools().len(), 2);
    }
}

/// A forwarder the deployment gave scopes to keeps them when the backend
/// changes the tool: before, the replacement forwarder was a fresh one
/// with no scopes, so a change on the backend opened the tool to every
/// caller.
#[tokio::test]
async fn a_replaced_forwarder_keeps_the_scopes_it_was_mounted_with() {
    let backend_server = McpServer::builder()
        .live_tools()
        .tool(tool("t", "first"))
        .build()
        .expect("backend");
    let backend = serve(backend_server.clone()).await;
    let remote = connect("b", &backend, ProxyOptions::new()).await;
    let listed = remote.listed_tools();
    assert!(listed.is_empty(), "nothing is listed before the builder");
    let _ = listing(&remote).await;
    let listed = remote.listed_tools();
    let mut child = McpServer::builder();
    for t in listed {
        child = child.tool(remote.forward_tool(t).with_scopes(["admin"]));
    }
    let front = McpServer::builder()
        .live_tools()
        .mount("b", child)
        .build()
        .expect("front");
    assert_eq!(front.declared_scopes(), ["admin"]);

    // The backend changes the tool before the sync starts, so the first
    // refresh replaces it.
    backend_server.remove_tool("t").await;
    backend_server
        .add_tool(tool("t", "second"))
        .await
        .expect("changed");
    let sync = remote.sync_tools(front.clone(), Some("b".into()), TTL);
    guard("the replacement", async {
        loop {
            let described = front.list_tools().into_iter().find(|t| t.name == "b_t");
            if described.and_then(|t| t.description).as_deref() == Some("second") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(front.declared_scopes(), ["admin"]);
    sync.abort();
    backend.close().await;
}

/// Scopes configured for a whole backend are declared by every forwarder
/// of it, the ones made at build and the ones a refresh adds.
#[tokio::test]
async fn proxy_scopes_hold_for_forwarders_added_by_a_refresh() {
    let backend_server = McpServer::builder()
        .live_catalog()
        .tool(tool("t", "first"))
        .build()
        .expect("backend");
    let backend = serve(backend_server.clone()).await;
    let remote = connect("b", &backend, ProxyOptions::new().scopes(["proxy:use"])).await;
    let front = McpServer::builder()
        .live_catalog()
        .mount("b", listing(&remote).await)
        .build()
        .expect("front");
    assert_eq!(front.declared_scopes(), ["proxy:use"]);
    let sync = remote.sync_tools(front.clone(), Some("b".into()), TTL);
    backend_server
        .add_prompt(prompt("p", "later"))
        .await
        .expect("added");
    // Listed only to callers granted the scope: wait until a get is
    // refused for the scope rather than for an unknown prompt.
    let client = TestClient::connect(front.clone()).await.expect("client");
    let refused = guard("the new prompt", async {
        loop {
            let got = client.request("prompts/get", json!({"name": "b_p"})).await;
            match got {
                Err(e) if e.message.contains("proxy:use") => return e,
                _ => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    })
    .await;
    assert!(refused.message.contains("scope"), "{refused:?}");
    assert_eq!(front.declared_scopes(), ["proxy:use"]);
    sync.abort();
    backend.close().await;
}

/// Serves `tools/list` in `pages` pages of ten tools, each with a 200-byte
/// description, and counts the listings that start (first pages).
struct Pager {
    pages: Arc<AtomicUsize>,
    started: Arc<AtomicUsize>,
}

impl Interceptor for Pager {
    fn operations(&self) -> Operations {
        Operation::ListTools.into()
    }

    fn intercept<'a>(&'a self, req: Request<'a>, _next: Next<'a>) -> Hook<'a> {
        let page: usize = match req.params().get("cursor").and_then(Value::as_str) {
            Some(c) => c.parse().unwrap_or(0),
            None => {
                self.started.fetch_add(1, Ordering::SeqCst);
                0
            }
        };
        let tools: Vec<Value> = (0..10)
            .map(|i| {
                json!({
                    "name": format!("t{page}_{i}"),
                    "description": "d".repeat(200),
                    "inputSchema": {"type": "object"},
                })
            })
            .collect();
        let mut listing = json!({ "tools": tools });
        if page + 1 < self.pages.load(Ordering::SeqCst) {
            listing["nextCursor"] = json!((page + 1).to_string());
        }
        Hook::done(Outcome::Answer(Answer::Json(listing)))
    }
}

/// A backend whose listing grows past the proxy's total bound, spread over
/// many pages each small enough on its own, is refused: the refresh fails
/// and the front keeps serving the entries it had; a first listing over
/// the bound fails the builder. Before, every page was accepted and held
/// whatever the total (an 80 MB listing was taken whole).
#[tokio::test]
async fn a_listing_over_the_total_bound_is_refused_and_the_previous_catalog_kept() {
    let pages = Arc::new(AtomicUsize::new(1));
    let started = Arc::new(AtomicUsize::new(0));
    let backend_server = McpServer::builder()
        .tool(tool("placeholder", "never listed"))
        .interceptor(Pager {
            pages: Arc::clone(&pages),
            started: Arc::clone(&started),
        })
        .build()
        .expect("backend");
    let backend = serve(backend_server).await;
    // One page (about 2.7 KB) fits; forty pages (about 110 KB) do not.
    let bounded = || ProxyOptions::new().max_listing_bytes(16 * 1024);
    let remote = connect("pages", &backend, bounded()).await;
    let front = McpServer::builder()
        .live_tools()
        .mount("p", listing(&remote).await)
        .build()
        .expect("front");
    let names = |server: &McpServer| -> Vec<String> {
        server.list_tools().into_iter().map(|t| t.name).collect()
    };
    let before = names(&front);
    assert_eq!(before.len(), 10);

    pages.store(40, Ordering::SeqCst);
    let sync = remote.sync_tools(front.clone(), Some("p".into()), TTL);
    // Two refreshes started after the change: the first one has ended.
    let seen = started.load(Ordering::SeqCst);
    guard("two refreshes", async {
        while started.load(Ordering::SeqCst) < seen + 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(names(&front), before, "the previous catalog is kept");
    assert_eq!(remote.listed_tools().len(), 10);
    sync.abort();

    let fresh = connect("pages", &backend, bounded()).await;
    let err = guard("an oversized first listing", fresh.builder())
        .await
        .expect_err("over the bound");
    assert!(err.to_string().contains("max_listing_bytes"), "{err}");
    backend.close().await;
}
