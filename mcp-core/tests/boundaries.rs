//! What the server guarantees at its boundaries while its catalog changes
//! and whatever a request names: scope checks on every method that names a
//! tool, resource or prompt; 2026-07-28 listing cache hints decided from the
//! catalog as it is now; `Mcp-Param-*` mirroring of tools added while
//! serving; URI-template variables checked after percent-decoding.

mod common;
#[cfg(feature = "http")]
#[path = "common/raw_http.rs"]
mod raw_http;

use common::{ask, guard};
use mcp_core::{
    context::AuthInfo,
    handler::{PromptArgs, ResourceRequest},
    transport::CallContext,
    InvokeContext, McpPromptDef, McpResourceDef, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};

const MODERN: &str = "2026-07-28";

/// A 2026-07-28 request (the `_meta` claim in its params).
fn modern(id: i64, method: &str, params: Value) -> Value {
    let mut params = match params {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    params.insert(
        "_meta".into(),
        json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "boundaries", "version": "1"},
        }),
    );
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A legacy request.
fn legacy(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A call context for a caller granted `scopes`.
fn caller(scopes: &[&str]) -> CallContext {
    let mut ctx = CallContext::new();
    ctx.extensions
        .insert(AuthInfo::new("someone").with_scopes(scopes.iter().copied()));
    ctx
}

fn tool(name: &str) -> McpToolDef {
    McpToolDef::new(
        name,
        "a tool",
        json!({"type": "object"}),
        |_a, _c: InvokeContext| async move { "ok" },
    )
}

fn cache_scope(reply: &Value) -> &str {
    reply["result"]["cacheScope"]
        .as_str()
        .unwrap_or_else(|| panic!("no cacheScope: {reply}"))
}

// ------------------------------------------------------------- cache hints

/// A gateway builds a live catalog with open tools, then adds a tool only
/// some callers may see. The listing now differs per caller: a shared cache
/// told it is `public` would hand one caller's listing to another.
#[tokio::test]
async fn listing_turns_private_once_a_live_catalog_gains_a_scoped_entry() {
    let server = McpServer::builder()
        .live_tools()
        .live_catalog()
        .tool(tool("open"))
        .prompt(McpPromptDef::new(
            "open",
            |_a: PromptArgs, _c: InvokeContext| async move { "hi".to_owned() },
        ))
        .build()
        .expect("server builds");
    let ctx = caller(&["admin"]);
    let before = ask(&server, &ctx, modern(1, "tools/list", json!({}))).await;
    assert_eq!(cache_scope(&before), "public", "{before}");

    server
        .add_tool(tool("secret").with_scopes(["admin"]))
        .await
        .expect("added");
    let after = ask(&server, &ctx, modern(2, "tools/list", json!({}))).await;
    assert_eq!(after["result"]["tools"].as_array().map(Vec::len), Some(2));
    assert_eq!(cache_scope(&after), "private", "{after}");

    server
        .add_prompt(
            McpPromptDef::new("secret", |_a: PromptArgs, _c: InvokeContext| async move {
                "hi".to_owned()
            })
            .with_scopes(["admin"]),
        )
        .await
        .expect("added");
    let prompts = ask(&server, &ctx, modern(3, "prompts/list", json!({}))).await;
    assert_eq!(cache_scope(&prompts), "private", "{prompts}");

    // Once the scoped tool is gone, the listing is the same for all again.
    server.remove_tool("secret").await.expect("removed");
    let again = ask(&server, &ctx, modern(4, "tools/list", json!({}))).await;
    assert_eq!(cache_scope(&again), "public", "{again}");
}

// ------------------------------------------------------------------ scopes

/// A server whose resource, template and prompt need the `secret` scope.
fn scoped_server() -> McpServer {
    McpServer::builder()
        .resource(
            McpResourceDef::new(
                "vault://key",
                "key",
                |_r: ResourceRequest, _c: InvokeContext| async move { "hunter2".to_owned() },
            )
            .with_scopes(["secret"]),
        )
        .resource(
            McpResourceDef::template(
                "vault://users/{id}",
                "user",
                |r: ResourceRequest, _c: InvokeContext| async move { r.vars["id"].clone() },
            )
            .with_scopes(["secret"]),
        )
        .prompt(
            McpPromptDef::new("confess", |_a: PromptArgs, _c: InvokeContext| async move {
                "the secret".to_owned()
            })
            .with_scopes(["secret"]),
        )
        .completion(|req, _ctx| async move { Ok(vec![format!("completed {}", req.ref_name)]) })
        .resource_subscriptions()
        .build()
        .expect("server builds")
}

#[track_caller]
fn assert_insufficient(reply: &Value, what: &str) {
    assert_eq!(reply["error"]["code"], -32003, "{reply}");
    assert_eq!(
        reply["error"]["message"],
        format!("Insufficient scope: {what} needs the scope secret"),
        "{reply}"
    );
    assert_eq!(
        reply["error"]["data"]["scopes"],
        json!(["secret"]),
        "{reply}"
    );
}

/// A caller without the `secret` scope cannot read the scoped resource; it
/// must not get around that by subscribing to it (and hearing of its
/// changes) or by asking for completions of the scoped prompt or template:
/// every method that names the item answers the same `-32003` as the read.
#[tokio::test]
async fn every_method_naming_a_scoped_item_checks_its_scopes() {
    let server = scoped_server();
    let ctx = caller(&["other"]);
    let read = ask(
        &server,
        &ctx,
        legacy(1, "resources/read", json!({"uri": "vault://key"})),
    )
    .await;
    assert_insufficient(&read, "resource `vault://key`");

    let subscribe = ask(
        &server,
        &ctx,
        legacy(2, "resources/subscribe", json!({"uri": "vault://key"})),
    )
    .await;
    assert_insufficient(&subscribe, "resource `vault://key`");
    let subscribe = ask(
        &server,
        &ctx,
        legacy(3, "resources/subscribe", json!({"uri": "vault://users/7"})),
    )
    .await;
    assert_insufficient(&subscribe, "resource `vault://users/7`");

    let prompt = json!({"ref": {"type": "ref/prompt", "name": "confess"},
                        "argument": {"name": "x", "value": ""}});
    let complete = ask(&server, &ctx, legacy(4, "completion/complete", prompt)).await;
    assert_insufficient(&complete, "prompt `confess`");
    let template = json!({"ref": {"type": "ref/resource", "uri": "vault://users/{id}"},
                          "argument": {"name": "id", "value": ""}});
    let complete = ask(&server, &ctx, legacy(5, "completion/complete", template)).await;
    assert_insufficient(&complete, "resource `vault://users/{id}`");

    let listen = json!({"notifications": {"resourceSubscriptions": ["vault://key"]}});
    let listen = guard(
        "a refused listen answers at once",
        server.handle_message(modern(6, "subscriptions/listen", listen), &ctx),
    )
    .await
    .expect("a reply");
    assert_insufficient(&listen, "resource `vault://key`");

    // A caller holding the scope is served by the same methods.
    let granted = caller(&["secret"]);
    let ok = ask(
        &server,
        &granted,
        legacy(7, "resources/subscribe", json!({"uri": "vault://key"})),
    )
    .await;
    assert!(ok.get("error").is_none(), "{ok}");
    let prompt = json!({"ref": {"type": "ref/prompt", "name": "confess"},
                        "argument": {"name": "x", "value": ""}});
    let ok = ask(&server, &granted, legacy(8, "completion/complete", prompt)).await;
    assert_eq!(
        ok["result"]["completion"]["values"][0], "completed confess",
        "{ok}"
    );
}

// ------------------------------------------------------------ URI templates

/// A `{id}` variable is one path segment: a client that encodes `/` or `.`
/// (`%2F`, `%2E`) must not hand the read handler `../..`-style values.
#[tokio::test]
async fn encoded_separators_never_reach_a_simple_template_variable() {
    let server = scoped_server();
    let ctx = caller(&["secret"]);
    let ok = ask(
        &server,
        &ctx,
        legacy(1, "resources/read", json!({"uri": "vault://users/7"})),
    )
    .await;
    assert_eq!(ok["result"]["contents"][0]["text"], "7", "{ok}");
    for uri in [
        "vault://users/..%2F..%2Fetc%2Fpasswd",
        "vault://users/a%2Fb",
        "vault://users/%2E%2E",
        "vault://users/..",
    ] {
        let reply = ask(
            &server,
            &ctx,
            legacy(2, "resources/read", json!({"uri": uri})),
        )
        .await;
        assert_eq!(reply["error"]["code"], -32602, "{uri}: {reply}");
        assert_eq!(
            reply["error"]["message"],
            format!("Unknown resource: {uri}"),
            "{reply}"
        );
    }
}

// --------------------------------------------------------- Mcp-Param-* mirroring

/// A proxy adds a tool whose `region` argument is mirrored into
/// `Mcp-Param-Region` after the HTTP endpoint is up. An intermediary routes
/// on that header: a request whose header says `us` while its body says
/// `eu` must be refused like for a tool built in, not served.
#[cfg(feature = "http")]
#[tokio::test]
async fn a_tool_added_while_serving_has_its_param_headers_checked() {
    use mcp_core::{serve_http, HttpOptions};

    let server = McpServer::builder()
        .live_tools()
        .build()
        .expect("server builds");
    let handle = serve_http(server.clone(), HttpOptions::new())
        .await
        .expect("serve_http");
    let addr = handle.local_addr();
    let schema = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}
    }});
    server
        .add_tool(McpToolDef::new(
            "route",
            "routed by region",
            schema,
            |_a, _c: InvokeContext| async move { "routed" },
        ))
        .await
        .expect("added");

    let send = |id: i64, region: Option<&str>| {
        let body = modern(
            id,
            "tools/call",
            json!({"name": "route", "arguments": {"region": "eu"}}),
        )
        .to_string();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n\
             Mcp-Method: tools/call\r\nMcp-Name: route\r\nConnection: close\r\n\
             Content-Length: {}\r\n",
            body.len()
        );
        if let Some(region) = region {
            head.push_str(&format!("Mcp-Param-Region: {region}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(&body);
        async move { raw_http::raw(addr, head.as_bytes()).await }
    };

    let mismatch = send(1, Some("us")).await;
    assert_eq!(mismatch.status, 400, "{}", mismatch.text());
    assert_eq!(mismatch.error_code(), -32020, "{}", mismatch.text());
    let missing = send(2, None).await;
    assert_eq!(missing.status, 400, "{}", missing.text());
    assert_eq!(missing.error_code(), -32020, "{}", missing.text());
    let matching = send(3, Some("eu")).await;
    assert_eq!(matching.status, 200, "{}", matching.text());
    assert_eq!(
        matching.json()["result"]["content"][0]["text"],
        "routed",
        "{}",
        matching.text()
    );
}
