//! Per-principal state (`mcp_core::state`): handles minted by one tool and
//! taken back by others, checked before the tool runs, keyed by principal;
//! forged, wrong-kind, unknown and expired handles; the idle TTL, the byte
//! cap, atomic updates, principal-keyed state, the argument's schema,
//! one handle across both eras, and the in-memory store's sweep (each
//! entry by its own TTL).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_core::state::{Handle, PrincipalState, Stateful};
use mcp_core::storage::{
    InMemoryStateStore, StateKey, StateLimits, StateLookup, StateStore, StateWrite,
};
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_core::transport::CallContext;
use mcp_core::{mcp_tool, InvokeContext, Json, McpServer, State, StdioOptions, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

mod common;
use common::guard;

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

#[derive(Default, Serialize, Deserialize)]
struct Cart {
    items: Vec<String>,
}

impl Stateful for Cart {
    const KIND: &'static str = "cart";
    const MINTED_BY: &'static str = "open_cart";
}

#[derive(Default, Serialize, Deserialize)]
struct Note(String);

impl Stateful for Note {
    const KIND: &'static str = "note";
    const MINTED_BY: &'static str = "open_note";
}

#[derive(Default, Serialize, Deserialize)]
struct Visits(u32);

impl Stateful for Visits {
    const KIND: &'static str = "visits";
    const MINTED_BY: &'static str = "visit";
}

#[derive(Serialize, schemars::JsonSchema)]
struct Opened {
    cart: Handle<Cart>,
}

/// How many times a tool body taking a handle ran.
#[derive(Clone, Default)]
struct Runs(Arc<AtomicUsize>);

/// Opens an empty cart.
#[mcp_tool]
async fn open_cart(ctx: &InvokeContext) -> Result<Json<Opened>, ToolError> {
    let cart = Handle::mint(ctx, Cart::default()).await?;
    Ok(Json(Opened { cart }))
}

/// Adds an item; returns how many the cart holds.
#[mcp_tool]
async fn add_item(
    ctx: &InvokeContext,
    State(runs): State<Runs>,
    cart: Handle<Cart>,
    item: String,
) -> Result<Json<usize>, ToolError> {
    runs.0.fetch_add(1, Ordering::SeqCst);
    let n = cart
        .update(ctx, |c| {
            c.items.push(item.clone());
            c.items.len()
        })
        .await?;
    Ok(Json(n))
}

/// Lists the cart.
#[mcp_tool]
async fn show_cart(ctx: &InvokeContext, cart: Handle<Cart>) -> Result<Json<Value>, ToolError> {
    Ok(Json(json!({"items": cart.get(ctx).await?.items})))
}

/// Removes the cart.
#[mcp_tool]
async fn close_cart(ctx: &InvokeContext, cart: Handle<Cart>) -> Result<Json<bool>, ToolError> {
    Ok(Json(cart.remove(ctx).await?))
}

/// Opens a note (another kind).
#[mcp_tool]
async fn open_note(ctx: &InvokeContext) -> Result<String, ToolError> {
    Ok(Handle::mint(ctx, Note("hi".into()))
        .await?
        .as_str()
        .to_owned())
}

/// Counts the caller's visits (state keyed by the principal alone).
#[mcp_tool]
async fn visit(ctx: &InvokeContext) -> Result<Json<u32>, ToolError> {
    let n = PrincipalState::<Visits>::update(ctx, |v| {
        v.0 += 1;
        v.0
    })
    .await?;
    Ok(Json(n))
}

fn server_with(
    configure: impl FnOnce(mcp_core::McpServerBuilder) -> mcp_core::McpServerBuilder,
) -> (McpServer, Runs) {
    let runs = Runs::default();
    let builder = McpServer::builder()
        .server_info("state-test", "1.0.0")
        .state(runs.clone())
        .tool(open_cart::tool())
        .tool(add_item::tool())
        .tool(show_cart::tool())
        .tool(close_cart::tool())
        .tool(open_note::tool())
        .tool(visit::tool());
    (configure(builder).build().expect("server builds"), runs)
}

/// A 2026-07-28 `tools/call` as `principal`; returns the result object.
async fn call(server: &McpServer, principal: &str, tool: &str, args: Value) -> Value {
    static IDS: AtomicUsize = AtomicUsize::new(1);
    let id = IDS.fetch_add(1, Ordering::Relaxed);
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args, "_meta": {PV: "2026-07-28", CAPS: {}}}});
    let ctx = CallContext::new().with_principal(principal);
    let shown = message.to_string();
    let reply = guard(&shown, server.handle_message(message, &ctx))
        .await
        .unwrap_or_else(|| panic!("no reply to {shown}"));
    assert!(reply.get("error").is_none(), "protocol error: {reply}");
    reply["result"].clone()
}

/// The handle `open_cart` returned.
async fn open(server: &McpServer, principal: &str) -> String {
    let result = call(server, principal, "open_cart", json!({})).await;
    assert_ne!(result["isError"], true, "{result}");
    result["structuredContent"]["cart"]
        .as_str()
        .unwrap_or_else(|| panic!("no handle in {result}"))
        .to_owned()
}

/// The error code of a refused call (and its message, without the error id).
#[track_caller]
fn refusal(result: &Value) -> (String, String) {
    assert_eq!(
        result["isError"], true,
        "expected an error result: {result}"
    );
    let s = &result["structuredContent"];
    (
        s["code"].as_str().unwrap_or_default().to_owned(),
        s["message"].as_str().unwrap_or_default().to_owned(),
    )
}

fn count(result: &Value) -> u64 {
    assert_ne!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    text.parse()
        .unwrap_or_else(|_| panic!("not a count: {result}"))
}

#[tokio::test]
async fn a_cart_spans_calls_and_a_handle_of_one_principal_is_unknown_to_another() {
    let (server, runs) = server_with(|b| b);
    let cart = open(&server, "alice").await;
    assert!(cart.starts_with("cart."), "{cart}");
    for (i, item) in ["apple", "pear"].iter().enumerate() {
        let r = call(
            &server,
            "alice",
            "add_item",
            json!({"cart": cart, "item": item}),
        )
        .await;
        assert_eq!(count(&r), i as u64 + 1);
    }
    let shown = call(&server, "alice", "show_cart", json!({"cart": cart})).await;
    assert_eq!(
        shown["structuredContent"],
        json!({"items": ["apple", "pear"]})
    );
    assert_eq!(runs.0.load(Ordering::SeqCst), 2);

    // Bob holding Alice's handle: refused before the tool runs, and told
    // exactly what a handle that no longer exists gets.
    let for_bob = call(
        &server,
        "bob",
        "add_item",
        json!({"cart": cart, "item": "x"}),
    )
    .await;
    assert_eq!(runs.0.load(Ordering::SeqCst), 2, "the tool must not run");
    let (code, message) = refusal(&for_bob);
    assert_eq!(code, "HANDLE_UNKNOWN");
    let gone = open(&server, "bob").await;
    let closed = call(&server, "bob", "close_cart", json!({"cart": gone})).await;
    assert_eq!(closed["structuredContent"], Value::Null);
    assert_eq!(closed["content"][0]["text"], "true");
    let after_close = call(&server, "bob", "show_cart", json!({"cart": gone})).await;
    assert_eq!(refusal(&after_close), (code, message));
    // Alice's cart is untouched by Bob's attempt.
    let shown = call(&server, "alice", "show_cart", json!({"cart": cart})).await;
    assert_eq!(
        shown["structuredContent"],
        json!({"items": ["apple", "pear"]})
    );
}

#[tokio::test]
async fn forged_altered_and_wrong_kind_handles_are_told_apart() {
    let (server, runs) = server_with(|b| b);
    let cart = open(&server, "alice").await;
    let mut altered = cart.clone().into_bytes();
    let i = altered.len() - 3;
    altered[i] = if altered[i] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).expect("ascii");
    for forged in [
        altered.as_str(),
        "cart.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "my cart",
        "",
    ] {
        let r = call(
            &server,
            "alice",
            "add_item",
            json!({"cart": forged, "item": "x"}),
        )
        .await;
        let (code, message) = refusal(&r);
        assert_eq!(code, "HANDLE_FORGED", "{forged:?}: {r}");
        assert!(
            message.contains("not a cart handle this server made"),
            "{message}"
        );
        assert!(r["structuredContent"]["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("open_cart"));
    }
    let note = call(&server, "alice", "open_note", json!({})).await;
    let note = note["content"][0]["text"]
        .as_str()
        .expect("a handle")
        .to_owned();
    let r = call(&server, "alice", "show_cart", json!({"cart": note})).await;
    let (code, message) = refusal(&r);
    assert_eq!(code, "HANDLE_WRONG_KIND");
    assert!(
        message.contains("a note handle, not a cart handle"),
        "{message}"
    );
    // A handle made by another deployment (other keys) is forged here.
    let (other, _) = server_with(|b| b);
    let foreign = open(&other, "alice").await;
    let r = call(&server, "alice", "show_cart", json!({"cart": foreign})).await;
    assert_eq!(refusal(&r).0, "HANDLE_FORGED");
    assert_eq!(
        runs.0.load(Ordering::SeqCst),
        0,
        "no refused call ran its tool"
    );
}

#[tokio::test(start_paused = true)]
async fn idle_state_expires_and_says_so_while_use_keeps_it() {
    let (server, _) = server_with(|b| b.state_ttl(Duration::from_secs(60)));
    let cart = open(&server, "alice").await;
    // Used every 50 s: alive after 150 s.
    for n in 1..=3 {
        tokio::time::advance(Duration::from_secs(50)).await;
        let r = call(
            &server,
            "alice",
            "add_item",
            json!({"cart": cart, "item": "x"}),
        )
        .await;
        assert_eq!(count(&r), n);
    }
    tokio::time::advance(Duration::from_secs(61)).await;
    let r = call(&server, "alice", "show_cart", json!({"cart": cart})).await;
    let (code, message) = refusal(&r);
    assert_eq!(code, "HANDLE_EXPIRED", "{r}");
    assert!(
        message.contains("expired after 60 s without use"),
        "{message}"
    );
    // Still expired (not unknown) on the next try; principal state restarts.
    let r = call(
        &server,
        "alice",
        "add_item",
        json!({"cart": cart, "item": "y"}),
    )
    .await;
    assert_eq!(refusal(&r).0, "HANDLE_EXPIRED");
    assert_eq!(count(&call(&server, "alice", "visit", json!({})).await), 1);
    tokio::time::advance(Duration::from_secs(61)).await;
    assert_eq!(count(&call(&server, "alice", "visit", json!({})).await), 1);
}

#[tokio::test]
async fn a_principal_cannot_hold_more_than_its_byte_cap() {
    let (server, _) = server_with(|b| b.state_byte_cap(300));
    let cart = open(&server, "alice").await;
    let item = "x".repeat(40);
    let mut held = 0;
    let refused = loop {
        let r = call(
            &server,
            "alice",
            "add_item",
            json!({"cart": cart, "item": item}),
        )
        .await;
        if r["isError"] == true {
            break r;
        }
        held = count(&r);
        assert!(held < 100, "the cap never applied");
    };
    let (code, message) = refusal(&refused);
    assert_eq!(code, "STATE_FULL");
    assert!(message.contains("300 bytes"), "{message}");
    assert!(held > 0);
    // The refused write left the cart as it was, and another principal is
    // not affected.
    let shown = call(&server, "alice", "show_cart", json!({"cart": cart})).await;
    assert_eq!(
        shown["structuredContent"]["items"].as_array().map(Vec::len),
        Some(held as usize)
    );
    let bobs = open(&server, "bob").await;
    let r = call(
        &server,
        "bob",
        "add_item",
        json!({"cart": bobs, "item": item}),
    )
    .await;
    assert_eq!(count(&r), 1);
    // Removing the cart frees its bytes.
    call(&server, "alice", "close_cart", json!({"cart": cart})).await;
    let again = open(&server, "alice").await;
    let r = call(
        &server,
        "alice",
        "add_item",
        json!({"cart": again, "item": item}),
    )
    .await;
    assert_eq!(count(&r), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_updates_of_one_cart_lose_none() {
    let (server, _) = server_with(|b| b);
    let cart = open(&server, "alice").await;
    let mut calls = Vec::new();
    for i in 0..50 {
        let server = server.clone();
        let cart = cart.clone();
        calls.push(tokio::spawn(async move {
            call(
                &server,
                "alice",
                "add_item",
                json!({"cart": cart, "item": format!("i{i}")}),
            )
            .await
        }));
    }
    for c in calls {
        let r = c.await.expect("call ran");
        assert_ne!(r["isError"], true, "{r}");
    }
    let shown = call(&server, "alice", "show_cart", json!({"cart": cart})).await;
    assert_eq!(
        shown["structuredContent"]["items"].as_array().map(Vec::len),
        Some(50)
    );
}

#[tokio::test]
async fn principal_state_needs_no_handle() {
    let (server, _) = server_with(|b| b);
    assert_eq!(count(&call(&server, "alice", "visit", json!({})).await), 1);
    assert_eq!(count(&call(&server, "alice", "visit", json!({})).await), 2);
    assert_eq!(count(&call(&server, "bob", "visit", json!({})).await), 1);
}

#[tokio::test]
async fn the_argument_schema_says_handle_and_names_the_minting_tool() {
    let (server, _) = server_with(|b| b);
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {PV: "2026-07-28", CAPS: {}}}});
    let reply = guard(
        "tools/list",
        server.handle_message(message, &CallContext::new()),
    )
    .await
    .expect("a reply");
    let tools = reply["result"]["tools"].as_array().expect("tools");
    let add = tools
        .iter()
        .find(|t| t["name"] == "add_item")
        .expect("add_item");
    let cart = &add["inputSchema"]["properties"]["cart"];
    assert_eq!(cart["type"], "string", "{cart}");
    // No `format`: listed schemas keep only the formats JSON Schema defines.
    assert!(cart.get("format").is_none(), "{cart}");
    assert_eq!(
        cart["x-mcp-handle"],
        json!({"kind": "cart", "mintedBy": "open_cart"})
    );
    assert!(
        cart["description"]
            .as_str()
            .unwrap_or_default()
            .contains("`open_cart`"),
        "{cart}"
    );
    assert!(add["inputSchema"]["required"]
        .as_array()
        .expect("required")
        .contains(&json!("cart")));
    let open = tools
        .iter()
        .find(|t| t["name"] == "open_cart")
        .expect("open_cart");
    assert_eq!(
        open["outputSchema"]["properties"]["cart"]["x-mcp-handle"]["kind"], "cart",
        "{open}"
    );
}

#[tokio::test]
async fn a_handle_from_a_legacy_session_works_in_the_modern_era_for_its_principal() {
    let (server, _) = server_with(|b| b);
    let client = TestClient::connect_with(
        server.clone(),
        StdioOptions::default().principal("alice"),
        ClientOptions::default(),
    )
    .await
    .expect("legacy session");
    let opened = client
        .call_tool("open_cart", json!({}))
        .await
        .expect("open_cart");
    let cart = opened
        .structured_content
        .as_ref()
        .and_then(|s| s.get("cart"))
        .and_then(Value::as_str)
        .expect("handle")
        .to_owned();
    let added = client
        .call_tool("add_item", json!({"cart": cart, "item": "tea"}))
        .await
        .expect("add_item");
    assert_ne!(added.is_error, Some(true));
    let r = call(
        &server,
        "alice",
        "add_item",
        json!({"cart": cart, "item": "milk"}),
    )
    .await;
    assert_eq!(count(&r), 2);
    let r = call(&server, "mallory", "show_cart", json!({"cart": cart})).await;
    assert_eq!(refusal(&r).0, "HANDLE_UNKNOWN");
    let shown = client
        .call_tool("show_cart", json!({"cart": cart}))
        .await
        .expect("show_cart");
    assert_eq!(
        shown.structured_content.map(Value::Object),
        Some(json!({"items": ["tea", "milk"]}))
    );
}

/// A write of `key` with `ttl` (a creation; 4 bytes).
async fn put(store: &InMemoryStateStore, key: &StateKey, ttl: Duration) {
    let limits = StateLimits {
        idle_ttl: ttl,
        ..StateLimits::DEFAULT
    };
    let wrote = store.write(key, None, b"data".to_vec(), &limits).await;
    assert!(matches!(wrote, Ok(StateWrite::Written { .. })), "{wrote:?}");
}

fn key(principal: &str, id: usize) -> StateKey {
    StateKey {
        principal: principal.to_owned(),
        kind: "k".to_owned(),
        id: id.to_string(),
    }
}

/// Every 1,024th write sweeps every principal: each entry must expire by
/// the TTL it was written with, not by the writer's (kept results live
/// 10 minutes, user state an hour by default, either may be the writer).
#[tokio::test(start_paused = true)]
async fn a_sweep_started_by_another_principal_expires_each_entry_by_its_own_ttl() {
    let hour = Duration::from_secs(60 * 60);
    let ten_min = Duration::from_secs(10 * 60);
    let minute = Duration::from_secs(60);
    for (long, short) in [(hour, ten_min), (ten_min, minute)] {
        let store = InMemoryStateStore::new();
        put(&store, &key("alice", 0), long).await;
        // Idle longer than the other writer's TTL, within its own.
        tokio::time::advance(short * 2).await;
        for id in 0..1024 {
            put(&store, &key("bob", id), short).await;
        }
        let limits = StateLimits {
            idle_ttl: long,
            ..StateLimits::DEFAULT
        };
        let found = store.load(&key("alice", 0), &limits).await;
        assert!(
            matches!(found, Ok(StateLookup::Found { .. })),
            "written with a {long:?} TTL, idle {:?}: {found:?}",
            short * 2
        );
        // Past its own TTL, the next full sweep expires it.
        tokio::time::advance(long + minute).await;
        for id in 1024..2048 {
            put(&store, &key("bob", id), short).await;
        }
        let gone = store.load(&key("alice", 0), &limits).await;
        assert!(matches!(gone, Ok(StateLookup::Expired)), "{gone:?}");
    }
}
