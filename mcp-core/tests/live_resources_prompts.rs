//! A live catalog beyond tools (issue 12): resources, resource templates
//! and prompts added and removed while serving (`live_catalog`), over stdio
//! (TestClient) and HTTP, in both eras: `listChanged` advertised per part,
//! `notifications/{resources,prompts}/list_changed` to legacy sessions and
//! to 2026-07-28 listens that ask, truthful cache hints, removed entries
//! refused, duplicates refused, running requests keeping their version,
//! per-caller listings, and the replica bus.

mod common;
#[path = "common/raw_http.rs"]
mod raw_http;

use std::sync::Arc;
use std::time::Duration;

use common::HANG_GUARD;
use mcp_core::intercept::{Hook, Interceptor, Next, Request};
use mcp_core::storage::{InProcessBus, Storage};
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_core::transport::http::SessionOptions;
use mcp_core::{
    context::AuthInfo, BuildError, InvokeContext, McpPromptDef, McpResourceDef, McpServer,
    McpToolDef, StdioOptions,
};
use mcp_core::{serve_http, HttpOptions};
use serde_json::{json, Value};
use tokio::sync::Notify;

fn resource(uri: &'static str) -> McpResourceDef {
    McpResourceDef::new(uri, "a note", move |_req, _ctx| async move {
        format!("{uri} read")
    })
}

fn template(uri_template: &'static str) -> McpResourceDef {
    McpResourceDef::template(uri_template, "files", |req, _ctx| async move {
        format!("file {}", req.vars.get("path").cloned().unwrap_or_default())
    })
}

fn prompt(name: &'static str) -> McpPromptDef {
    McpPromptDef::new(
        name,
        move |_args, _ctx| async move { format!("{name} says hi") },
    )
}

fn tool(name: &'static str) -> McpToolDef {
    McpToolDef::new(
        name,
        "A tool",
        json!({"type": "object"}),
        move |_args, _ctx: InvokeContext| async move { format!("{name} ran") },
    )
}

/// The `field` of each item of `listing[key]`.
fn names(listing: &Value, key: &str, field: &str) -> Vec<String> {
    listing[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t[field].as_str().map(str::to_owned))
        .collect()
}

fn modern_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {}})
}

async fn next_method(client: &TestClient) -> String {
    let note = client
        .next_notification(HANG_GUARD)
        .await
        .expect("a notification");
    note["method"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn resources_and_templates_come_and_go_and_legacy_sessions_hear_of_it() {
    let server = McpServer::builder().live_catalog().build().expect("builds");
    let client = TestClient::connect(server.clone())
        .await
        .expect("initialize");
    let caps = &client.initialize_result().expect("initialized")["capabilities"];
    assert_eq!(caps["resources"]["listChanged"], true, "{caps}");
    assert_eq!(caps["prompts"]["listChanged"], true, "{caps}");
    assert_eq!(caps["tools"]["listChanged"], true, "{caps}");
    let empty = client
        .request("resources/list", json!({}))
        .await
        .expect("a live part is served while empty");
    assert_eq!(names(&empty, "resources", "uri"), Vec::<String>::new());

    assert_eq!(server.add_resource(resource("memo://a")).await, Ok(1));
    assert_eq!(
        next_method(&client).await,
        "notifications/resources/list_changed"
    );
    let listing = client
        .request("resources/list", json!({}))
        .await
        .expect("list");
    assert_eq!(names(&listing, "resources", "uri"), ["memo://a"]);
    let read = client
        .request("resources/read", json!({"uri": "memo://a"}))
        .await
        .expect("read");
    assert_eq!(read["contents"][0]["text"], "memo://a read", "{read}");
    assert_eq!(
        server.add_resource(resource("memo://a")).await,
        Err(BuildError::DuplicateResource("memo://a".into()))
    );

    assert_eq!(server.add_resource(template("file:///{path}")).await, Ok(1));
    assert_eq!(
        next_method(&client).await,
        "notifications/resources/list_changed"
    );
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .expect("templates");
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        ["file:///{path}"]
    );
    let read = client
        .request("resources/read", json!({"uri": "file:///notes.txt"}))
        .await
        .expect("read through the template");
    assert_eq!(read["contents"][0]["text"], "file notes.txt", "{read}");
    assert_eq!(
        server.add_resource(template("file:///{path}")).await,
        Err(BuildError::DuplicateResource("file:///{path}".into()))
    );
    assert!(matches!(
        server.add_resource(template("file:///{path")).await,
        Err(BuildError::InvalidUriTemplate { .. })
    ));

    assert_eq!(server.remove_resource("memo://a").await, Some(1));
    assert_eq!(
        next_method(&client).await,
        "notifications/resources/list_changed"
    );
    assert_eq!(
        server.remove_resource("memo://a").await,
        None,
        "already gone"
    );
    let gone = client
        .request("resources/read", json!({"uri": "memo://a"}))
        .await
        .expect_err("removed");
    assert_eq!(gone.code, -32602, "{gone:?}");
    assert!(gone.message.contains("Unknown resource"), "{gone:?}");
    assert_eq!(
        server.remove_resource("file:///{path}").await,
        None,
        "a template is removed as a template"
    );
    assert_eq!(
        server.remove_resource_template("file:///{path}").await,
        Some(1)
    );
    assert_eq!(
        next_method(&client).await,
        "notifications/resources/list_changed"
    );
    let gone = client
        .request("resources/read", json!({"uri": "file:///notes.txt"}))
        .await
        .expect_err("template removed");
    assert!(gone.message.contains("Unknown resource"), "{gone:?}");
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .expect("templates");
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn prompts_come_and_go_and_legacy_sessions_hear_of_it() {
    let server = McpServer::builder()
        .live_catalog()
        .prompt(prompt("first"))
        .build()
        .expect("builds");
    let client = TestClient::connect(server.clone())
        .await
        .expect("initialize");
    assert_eq!(server.add_prompt(prompt("second")).await, Ok(1));
    assert_eq!(
        next_method(&client).await,
        "notifications/prompts/list_changed"
    );
    let listing = client
        .request("prompts/list", json!({}))
        .await
        .expect("list");
    assert_eq!(names(&listing, "prompts", "name"), ["first", "second"]);
    let got = client
        .request("prompts/get", json!({"name": "second"}))
        .await
        .expect("get");
    assert_eq!(
        got["messages"][0]["content"]["text"], "second says hi",
        "{got}"
    );
    assert_eq!(
        server.add_prompt(prompt("first")).await,
        Err(BuildError::DuplicatePrompt("first".into()))
    );

    assert_eq!(server.remove_prompt("first").await, Some(1));
    assert_eq!(
        next_method(&client).await,
        "notifications/prompts/list_changed"
    );
    assert_eq!(server.remove_prompt("first").await, None, "already gone");
    let gone = client
        .request("prompts/get", json!({"name": "first"}))
        .await
        .expect_err("removed");
    assert_eq!(gone.code, -32602, "{gone:?}");
    assert!(gone.message.contains("Unknown prompt"), "{gone:?}");
    let listing = client
        .request("prompts/list", json!({}))
        .await
        .expect("list");
    assert_eq!(names(&listing, "prompts", "name"), ["second"]);

    // Tools stay as they were, and the session hears only of what changed.
    assert_eq!(server.add_tool(tool("t")).await, Ok(1));
    assert_eq!(
        next_method(&client).await,
        "notifications/tools/list_changed"
    );
}

#[tokio::test]
async fn only_the_live_parts_advertise_list_changed_and_accept_changes() {
    let fixed = McpServer::builder()
        .live_tools()
        .resource(resource("memo://fixed"))
        .prompt(prompt("fixed"))
        .build()
        .expect("builds");
    let caps = fixed.capabilities();
    assert_eq!(caps["tools"]["listChanged"], true, "{caps}");
    assert_eq!(caps["resources"]["listChanged"], false, "{caps}");
    assert_eq!(caps["prompts"]["listChanged"], false, "{caps}");
    assert_eq!(
        fixed.add_resource(resource("memo://more")).await,
        Err(BuildError::CatalogNotLive)
    );
    assert_eq!(
        fixed.add_prompt(prompt("more")).await,
        Err(BuildError::CatalogNotLive)
    );
    assert_eq!(fixed.remove_resource("memo://fixed").await, None);
    assert_eq!(fixed.remove_resource_template("memo://fixed").await, None);
    assert_eq!(fixed.remove_prompt("fixed").await, None);

    let bare = McpServer::builder().build().expect("builds");
    assert!(bare.capabilities().get("resources").is_none());
    assert!(bare.capabilities().get("prompts").is_none());
    let live = McpServer::builder().live_catalog().build().expect("builds");
    assert!(live.capabilities()["resources"].is_object());
    assert!(live.capabilities()["prompts"].is_object());

    // A change needing state the server lacks is refused, as at build.
    let needs = prompt("needs").requires_state::<String>();
    assert!(matches!(
        live.add_prompt(needs).await,
        Err(BuildError::MissingState { .. })
    ));
}

#[tokio::test]
async fn a_2026_listen_hears_of_the_parts_it_asked_for_and_listings_stay_truthful() {
    // Tools live, prompts and resources fixed: only tools/list says "do
    // not cache".
    let partly = McpServer::builder()
        .live_tools()
        .prompt(prompt("fixed"))
        .build()
        .expect("builds");
    let client = TestClient::start(partly, StdioOptions::default(), ClientOptions::default());
    let meta = modern_meta();
    let tools = client
        .request("tools/list", json!({"_meta": meta}))
        .await
        .expect("tools");
    let prompts = client
        .request("prompts/list", json!({"_meta": meta}))
        .await
        .expect("prompts");
    assert_eq!(tools["ttlMs"], 0, "{tools}");
    assert_eq!(
        prompts["ttlMs"], 60_000,
        "a fixed part may be cached: {prompts}"
    );
    assert_eq!(names(&prompts, "prompts", "name"), ["fixed"]);
    assert_eq!(prompts["resultType"], "complete", "{prompts}");

    let server = McpServer::builder()
        .live_catalog()
        .resource(resource("memo://a"))
        .build()
        .expect("builds");
    let client = TestClient::start(
        server.clone(),
        StdioOptions::default(),
        ClientOptions::default(),
    );
    for (method, key) in [
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
    ] {
        let listing = client
            .request(method, json!({"_meta": meta}))
            .await
            .expect("list");
        assert_eq!(listing["ttlMs"], 0, "{method}: {listing}");
        assert!(listing[key].is_array(), "{method}: {listing}");
        assert!(
            listing["_meta"]["io.modelcontextprotocol/serverInfo"].is_object(),
            "{method}: {listing}"
        );
    }
    let listen = client
        .start_request(
            "subscriptions/listen",
            json!({"_meta": meta, "notifications": {"resourcesListChanged": true, "promptsListChanged": true}}),
        )
        .await;
    let ack = client
        .next_notification(HANG_GUARD)
        .await
        .expect("the acknowledgement");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourcesListChanged": true, "promptsListChanged": true}),
        "{ack}"
    );
    let listen_id = serde_json::to_value(&listen.id).expect("id");
    // The listener is registered right after the acknowledgement is
    // queued: a change made before that is retried, never counted.
    let mut told = 0;
    for _ in 0..100 {
        told = server.add_prompt(prompt("new")).await.unwrap_or(0);
        if told > 0 {
            break;
        }
        server.remove_prompt("new").await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(told, 1);
    let note = client
        .next_notification(HANG_GUARD)
        .await
        .expect("a notification");
    assert_eq!(
        note["method"], "notifications/prompts/list_changed",
        "{note}"
    );
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen_id,
        "{note}"
    );
    assert_eq!(
        server.add_tool(tool("t")).await,
        Ok(0),
        "tools were not asked for"
    );
    assert_eq!(server.remove_resource("memo://a").await, Some(1));
    let note = client
        .next_notification(HANG_GUARD)
        .await
        .expect("a notification");
    assert_eq!(
        note["method"], "notifications/resources/list_changed",
        "{note}"
    );
    let listing = client
        .request("resources/list", json!({"_meta": meta}))
        .await
        .expect("list");
    assert_eq!(names(&listing, "resources", "uri"), Vec::<String>::new());
}

#[tokio::test]
async fn a_read_and_a_get_that_started_finish_with_the_catalog_they_started_with() {
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let (s, r) = (Arc::clone(&started), Arc::clone(&release));
    let slow_resource = McpResourceDef::new("memo://slow", "slow", move |_req, _ctx| {
        let (s, r) = (Arc::clone(&s), Arc::clone(&r));
        async move {
            s.notify_one();
            r.notified().await;
            "read in full"
        }
    });
    let (s, r) = (Arc::clone(&started), Arc::clone(&release));
    let slow_prompt = McpPromptDef::new("slow", move |_args, _ctx| {
        let (s, r) = (Arc::clone(&s), Arc::clone(&r));
        async move {
            s.notify_one();
            r.notified().await;
            "got in full".to_owned()
        }
    });
    let server = McpServer::builder()
        .live_catalog()
        .resource(slow_resource)
        .prompt(slow_prompt)
        .build()
        .expect("builds");
    let client = TestClient::connect(server.clone())
        .await
        .expect("initialize");

    let read = client
        .start_request("resources/read", json!({"uri": "memo://slow"}))
        .await;
    common::guard("the read starts", started.notified()).await;
    assert_eq!(server.remove_resource("memo://slow").await, Some(1));
    release.notify_one();
    let reply = read.response(HANG_GUARD).await.expect("a reply");
    assert_eq!(
        reply["result"]["contents"][0]["text"], "read in full",
        "{reply}"
    );

    let get = client
        .start_request("prompts/get", json!({"name": "slow"}))
        .await;
    common::guard("the get starts", started.notified()).await;
    assert_eq!(server.remove_prompt("slow").await, Some(1));
    release.notify_one();
    let reply = get.response(HANG_GUARD).await.expect("a reply");
    assert_eq!(
        reply["result"]["messages"][0]["content"]["text"], "got in full",
        "{reply}"
    );
    let gone = client
        .request("prompts/get", json!({"name": "slow"}))
        .await
        .expect_err("gone for new requests");
    assert!(gone.message.contains("Unknown prompt"), "{gone:?}");
}

/// Grants the caller `files:read` (as an authorizing transport would).
struct Grant;

impl Interceptor for Grant {
    fn intercept<'a>(&'a self, mut req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        req.extensions_mut()
            .insert(AuthInfo::new("svc").with_scopes(["files:read"]));
        next.pass(req)
    }
}

#[tokio::test]
async fn scoped_entries_added_live_are_listed_only_to_callers_granted_them() {
    let server = McpServer::builder()
        .live_catalog()
        .interceptor(Grant)
        .build()
        .expect("builds");
    let client = TestClient::connect(server.clone())
        .await
        .expect("initialize");
    server.add_prompt(prompt("open")).await.expect("added");
    server
        .add_prompt(prompt("reader").with_scopes(["files:read"]))
        .await
        .expect("added");
    server
        .add_prompt(prompt("admin").with_scopes(["admin"]))
        .await
        .expect("added");
    server
        .add_resource(resource("memo://secret").with_scopes(["admin"]))
        .await
        .expect("added");
    let listing = client
        .request("prompts/list", json!({}))
        .await
        .expect("list");
    assert_eq!(names(&listing, "prompts", "name"), ["open", "reader"]);
    let listing = client
        .request("resources/list", json!({}))
        .await
        .expect("list");
    assert_eq!(names(&listing, "resources", "uri"), Vec::<String>::new());
    let refused = client
        .request("prompts/get", json!({"name": "admin"}))
        .await
        .expect_err("not granted");
    assert_eq!(refused.code, -32003, "{refused:?}");
    assert_eq!(server.declared_scopes(), ["admin", "files:read"]);
    // Once the scoped entries are gone, the listing is shared again.
    server.remove_prompt("reader").await;
    server.remove_prompt("admin").await;
    let listing = client
        .request("prompts/list", json!({}))
        .await
        .expect("list");
    assert_eq!(names(&listing, "prompts", "name"), ["open"]);
}

#[tokio::test]
async fn another_replica_hears_of_resource_and_prompt_changes_through_the_bus() {
    let hub = InProcessBus::new();
    let a = McpServer::builder()
        .server_info("a", "1")
        .live_catalog()
        .storage(Storage::memory().with_notices(hub.join()))
        .build()
        .expect("builds");
    let b = McpServer::builder()
        .server_info("b", "1")
        .live_catalog()
        .storage(Storage::memory().with_notices(hub.join()))
        .build()
        .expect("builds");
    let on_b = TestClient::connect(b).await.expect("initialize");
    assert_eq!(a.add_prompt(prompt("p")).await, Ok(0), "none listens on a");
    assert_eq!(
        next_method(&on_b).await,
        "notifications/prompts/list_changed"
    );
    assert_eq!(a.add_resource(resource("memo://r")).await, Ok(0));
    assert_eq!(
        next_method(&on_b).await,
        "notifications/resources/list_changed"
    );
}

// ---------------------------------------------------------------- HTTP

fn http_request(
    addr: std::net::SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Vec<u8> {
    let mut out = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    if method == "POST" {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("Connection: close\r\n\r\n");
    out.push_str(body);
    out.into_bytes()
}

async fn post(
    addr: std::net::SocketAddr,
    headers: &[(&str, &str)],
    body: &Value,
) -> raw_http::Resp {
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    raw_http::raw(addr, &http_request(addr, "POST", &all, &body.to_string())).await
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn over_http_a_legacy_session_hears_of_changes_on_its_stream_and_a_2026_listing_is_not_cached(
) {
    let server = McpServer::builder()
        .live_catalog()
        .prompt(prompt("first"))
        .build()
        .expect("builds");
    let handle = serve_http(
        server.clone(),
        HttpOptions::new().sessions(SessionOptions::default()),
    )
    .await
    .expect("serve");
    let addr = handle.local_addr();
    let init = rpc(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "live-test", "version": "1"}}),
    );
    let r = post(addr, &[], &init).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json()["result"]["capabilities"]["prompts"]["listChanged"],
        true
    );
    let sid = r.header("mcp-session-id").expect("a session").to_owned();
    let session = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let r = post(
        addr,
        &session,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(r.status, 202);
    let mut stream = raw_http::Stream::open(
        addr,
        &http_request(
            addr,
            "GET",
            &[("Accept", "text/event-stream"), session[0], session[1]],
            "",
        ),
    )
    .await;
    assert_eq!(stream.status, 200);
    assert!(stream.is_sse());

    // The session's channel moves to the GET stream once it is open.
    let mut told = 0;
    for _ in 0..100 {
        told = server.add_prompt(prompt("second")).await.unwrap_or(0);
        if told > 0 {
            break;
        }
        server.remove_prompt("second").await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(told, 1);
    let note = common::guard("a notification", stream.next_event())
        .await
        .expect("an event");
    assert_eq!(
        note["method"], "notifications/prompts/list_changed",
        "{note}"
    );
    let listing = post(addr, &session, &rpc(1, "prompts/list", json!({}))).await;
    assert_eq!(
        names(&listing.json()["result"], "prompts", "name"),
        ["first", "second"]
    );
    assert_eq!(server.remove_prompt("first").await, Some(1));
    let note = common::guard("a notification", stream.next_event())
        .await
        .expect("an event");
    assert_eq!(
        note["method"], "notifications/prompts/list_changed",
        "{note}"
    );
    let gone = post(
        addr,
        &session,
        &rpc(2, "prompts/get", json!({"name": "first"})),
    )
    .await;
    assert_eq!(gone.json()["error"]["code"], -32602, "{}", gone.text());

    assert_eq!(server.add_resource(resource("memo://h")).await, Ok(1));
    let note = common::guard("a notification", stream.next_event())
        .await
        .expect("an event");
    assert_eq!(
        note["method"], "notifications/resources/list_changed",
        "{note}"
    );
    let read = post(
        addr,
        &session,
        &rpc(3, "resources/read", json!({"uri": "memo://h"})),
    )
    .await;
    assert_eq!(
        read.json()["result"]["contents"][0]["text"],
        "memo://h read"
    );

    // 2026-07-28 over HTTP: the listing of a live part is not to be cached.
    let modern = rpc(4, "resources/list", json!({"_meta": modern_meta()}));
    let r = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "resources/list"),
        ],
        &modern,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let result = &r.json()["result"];
    assert_eq!(result["ttlMs"], 0, "{result}");
    assert_eq!(names(result, "resources", "uri"), ["memo://h"]);
    drop(stream);
    handle.close().await;
}
