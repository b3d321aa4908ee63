//! A proxied `tools/call` result reaches the caller intact: its content
//! blocks byte for byte (members this crate does not know included),
//! `isError`, `structuredContent` and the backend's own `_meta` keys,
//! without the backend's `serverInfo` (the result the caller gets is the
//! proxy's); and interceptors still read a forwarded error's text.

use mcp_core::client::proxy::{ProxyOptions, Remote, Target};
use mcp_core::client::{ClientBuilder, Protocol, RequestOptions};
use mcp_core::protocol::RawContent;
use mcp_core::{
    protocol::{CallToolResult, Content},
    serve_http,
    transport::stdio::serve_io,
    HttpOptions, InvokeContext, McpServer, McpToolDef, StdioOptions,
};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

mod client_support;
use client_support::guard;

const BLOCK: &str = r#"{"type":"text","text":"hi","x-vendor":{"kept":[1,2]}}"#;

fn backend() -> McpServer {
    McpServer::builder()
        .server_info("intact-backend", "1")
        .tool(McpToolDef::new(
            "odd",
            "a block with a member of its own, structured content and _meta",
            json!({"type": "object"}),
            |_: Map<String, Value>, _: InvokeContext| async {
                let block = RawValue::from_string(BLOCK.to_owned()).map_or_else(
                    |e| Content::text(e.to_string()),
                    |raw| {
                        RawContent::new(raw)
                            .map_or_else(|e| Content::text(e.to_string()), Content::Raw)
                    },
                );
                let mut meta = Map::new();
                meta.insert("vendor/trace".into(), json!("t-1"));
                let mut result = CallToolResult::new(vec![block, Content::text("second")])
                    .with_structured(Map::from_iter([("n".to_owned(), json!(7))]));
                result.meta = Some(meta);
                result
            },
        ))
        .tool(McpToolDef::new(
            "fails",
            "a tool error",
            json!({"type": "object"}),
            |_: Map<String, Value>, _: InvokeContext| async { CallToolResult::error("disk full") },
        ))
        .build()
        .expect("backend")
}

#[tokio::test]
async fn a_proxied_result_arrives_intact_in_every_pair_of_eras() {
    for backend_era in ["2025-11-25", "2026-07-28"] {
        let backend = serve_http(backend(), HttpOptions::new().port(0))
            .await
            .expect("backend");
        let remote = Remote::connect(
            "backend",
            Target::Url(backend.url().to_owned()),
            ClientBuilder::new("proxy", "0").protocol(Protocol::pinned(backend_era)),
            ProxyOptions::new(),
        )
        .await
        .expect("remote");
        let front_server = McpServer::builder()
            .server_info("front", "1")
            .mount("remote", remote.builder().await.expect("listing"))
            .build()
            .expect("front");
        for front_era in ["2025-11-25", "2026-07-28"] {
            let case = format!("backend {backend_era}, front {front_era}");
            let (client_end, server_end) = tokio::io::duplex(64 * 1024);
            let (server_r, server_w) = tokio::io::split(server_end);
            let (client_r, client_w) = tokio::io::split(client_end);
            let _serving = serve_io(
                front_server.clone(),
                server_r,
                server_w,
                StdioOptions::default(),
            );
            let front = ClientBuilder::new("test", "0")
                .protocol(Protocol::pinned(front_era))
                .connect_io(client_r, client_w)
                .await
                .expect("front");
            let result = guard(
                "odd",
                front.request(
                    "tools/call",
                    json!({"name": "remote_odd", "arguments": {}}),
                    &RequestOptions::new(),
                ),
            )
            .await
            .expect("a result");
            let expected: Value = serde_json::from_str(BLOCK).expect("JSON");
            assert_eq!(
                result["content"],
                json!([expected, {"type": "text", "text": "second"}]),
                "{case}: blocks intact"
            );
            assert_eq!(result["structuredContent"], json!({"n": 7}), "{case}");
            let meta = &result["_meta"];
            assert_eq!(
                meta["vendor/trace"], "t-1",
                "{case}: the backend's _meta key"
            );
            let info = meta.get("io.modelcontextprotocol/serverInfo");
            if front_era == "2026-07-28" {
                assert_eq!(
                    info.and_then(|i| i.get("name")),
                    Some(&json!("front")),
                    "{case}: the proxy's own server info"
                );
            } else {
                assert_eq!(
                    info, None,
                    "{case}: the backend's server info is not copied"
                );
            }

            let failed = guard("fails", front.call_tool("remote_fails", ()))
                .await
                .expect("a tool error is a result");
            assert!(failed.is_error(), "{case}");
            assert_eq!(failed.text_content(), "disk full", "{case}");
            front.close().await;
        }
        drop(remote);
        backend.close().await;
    }
}

/// The builtin error mapping reads a forwarded (raw) error's text: an
/// argument error keeps its message, as for a local tool.
#[tokio::test]
async fn interceptors_read_the_text_of_a_forwarded_error() {
    let server = McpServer::builder()
        .tool(McpToolDef::new(
            "bad",
            "an argument error",
            json!({"type": "object"}),
            |_: Map<String, Value>, _: InvokeContext| async {
                CallToolResult::error("Invalid arguments: `n` must be a number")
            },
        ))
        .build()
        .expect("backend");
    let backend = serve_http(server, HttpOptions::new().port(0))
        .await
        .expect("backend");
    let remote = Remote::connect(
        "backend",
        Target::Url(backend.url().to_owned()),
        ClientBuilder::new("proxy", "0"),
        ProxyOptions::new(),
    )
    .await
    .expect("remote");
    let front = McpServer::builder()
        .interceptor(mcp_core::intercept::ErrorMapping::new())
        .mount("remote", remote.builder().await.expect("listing"))
        .build()
        .expect("front");
    let result = front
        .call_tool("remote_bad", json!({}))
        .await
        .expect("a result");
    let text = result.text_content();
    assert!(
        text.starts_with("VALIDATION_ERROR: Invalid arguments: `n` must be a number"),
        "{text}"
    );
    drop(remote);
    backend.close().await;
}

/// A backend with resource `a://one` and prompt `p1`, plus `a://two` and
/// `p2` when `more`.
fn listing_backend(more: bool) -> McpServer {
    use mcp_core::{
        handler::{PromptArgs, ResourceRequest},
        McpPromptDef, McpResourceDef,
    };
    let resource = |uri: &'static str| {
        McpResourceDef::new(uri, uri, |_: ResourceRequest, _: InvokeContext| async {
            "text"
        })
    };
    let prompt = |name: &'static str| {
        McpPromptDef::new(name, |_: PromptArgs, _: InvokeContext| async {
            "hello".to_owned()
        })
    };
    let mut builder = McpServer::builder()
        .server_info("listing-backend", "1")
        .resource(resource("a://one"))
        .prompt(prompt("p1"));
    if more {
        builder = builder.resource(resource("a://two")).prompt(prompt("p2"));
    }
    builder.build().expect("backend")
}

/// The backend's resources and prompts are cached on the remote and
/// refreshed by the sync task after its TTL: a backend restarted with
/// more of them is seen, and the change is announced.
#[tokio::test]
async fn backend_resources_and_prompts_are_refreshed_after_the_ttl() {
    use mcp_core::client::proxy::PROXIED_META;
    use std::time::Duration;
    for backend_era in ["2025-11-25", "2026-07-28"] {
        let backend = serve_http(listing_backend(false), HttpOptions::new().port(0))
            .await
            .expect("backend");
        let port = backend.port();
        let remote = Remote::connect(
            "backend",
            Target::Url(backend.url().to_owned()),
            ClientBuilder::new("proxy", "0").protocol(Protocol::pinned(backend_era)),
            ProxyOptions::new(),
        )
        .await
        .expect("remote");
        let front = McpServer::builder()
            .live_catalog()
            .mount("remote", remote.builder().await.expect("listing"))
            .build()
            .expect("front");
        let uris = |r: &Remote| -> Vec<String> {
            r.listed_resources().into_iter().map(|r| r.uri).collect()
        };
        let prompts = |r: &Remote| -> Vec<String> {
            r.listed_prompts().into_iter().map(|p| p.name).collect()
        };
        assert_eq!(uris(&remote), ["a://one"], "{backend_era}");
        assert_eq!(prompts(&remote), ["p1"], "{backend_era}");
        let mut changes = remote.listings_changed();
        let sync = remote.sync_tools(
            front.clone(),
            Some("remote".into()),
            Duration::from_millis(50),
        );

        backend.close().await;
        let again = serve_http(listing_backend(true), HttpOptions::new().port(port))
            .await
            .expect("backend again");
        guard("the change is announced", changes.changed())
            .await
            .expect("the remote lives");
        let seen = guard("the new listings", async {
            loop {
                if prompts(&remote).len() == 2 {
                    return (uris(&remote), prompts(&remote));
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        assert_eq!(
            seen,
            (
                vec!["a://one".to_owned(), "a://two".to_owned()],
                vec!["p1".to_owned(), "p2".to_owned()]
            ),
            "{backend_era}"
        );
        // The front's live catalog follows: the new resource is listed and
        // read through the proxy, the new prompt is listed under the
        // mount's prefix and answers.
        let client = mcp_core::testing::TestClient::connect(front.clone())
            .await
            .expect("front client");
        let front_seen = guard("the front's listings", async {
            loop {
                let resources = client.request("resources/list", json!({})).await;
                let prompts = client.request("prompts/list", json!({})).await;
                let names = |v: &Result<Value, _>, list: &str, key: &str| -> Vec<String> {
                    v.as_ref()
                        .ok()
                        .and_then(|v| v[list].as_array().cloned())
                        .unwrap_or_default()
                        .iter()
                        .filter_map(|e| e[key].as_str().map(str::to_owned))
                        .collect()
                };
                let seen = (
                    names(&resources, "resources", "uri"),
                    names(&prompts, "prompts", "name"),
                );
                if seen.0.len() == 2 && seen.1.len() == 2 {
                    return seen;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        assert_eq!(
            front_seen,
            (
                vec!["a://one".to_owned(), "a://two".to_owned()],
                vec!["remote_p1".to_owned(), "remote_p2".to_owned()]
            ),
            "{backend_era}"
        );
        let read = client
            .request("resources/read", json!({"uri": "a://two"}))
            .await
            .expect("read through the proxy");
        assert_eq!(read["contents"][0]["text"], "text", "{backend_era}");
        let got = client
            .request("prompts/get", json!({"name": "remote_p2"}))
            .await
            .expect("prompt through the proxy");
        assert_eq!(
            got["messages"][0]["content"]["text"], "hello",
            "{backend_era}"
        );
        guard("the front client closes", client.close())
            .await
            .expect("the front server ends cleanly");
        // Tools are not offered by this backend: the front has none, and
        // nothing forwarded is marked wrongly.
        assert!(front.list_tools().iter().all(|t| t
            .meta
            .as_ref()
            .is_some_and(|m| m.contains_key(PROXIED_META))));
        sync.abort();
        drop(remote);
        again.close().await;
    }
}
