//! The client's cache of 2026-07-28 listings and reads, counted at the
//! server: a result with `ttlMs` is fetched once while fresh, again once
//! stale, after a change notification, or when it was evicted; a disabled
//! cache fetches every time; a proxy keeps `private` reads per caller.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::client::proxy::{ProxyOptions, Remote, Target};
use mcp_core::client::{CacheOptions, Client, ClientBuilder, Handlers, Protocol, RequestOptions};
use mcp_core::context::AuthInfo;
use mcp_core::intercept::{Hook, Interceptor, Next, Request};
use mcp_core::protocol::{CacheScope, CallToolResult, ResourceContents};
use mcp_core::{
    serve_http, transport::stdio::serve_io, HttpOptions, InvokeContext, McpPromptDef,
    McpResourceDef, McpServer, McpToolDef, StdioOptions,
};
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

mod client_support;
use client_support::guard;

const MODERN: &str = "2026-07-28";
const HOUR_MS: u64 = 3_600_000;

/// How many requests of each method reached the server.
#[derive(Clone, Default)]
struct Counts(Arc<Mutex<HashMap<String, usize>>>);

impl Counts {
    fn of(&self, method: &str) -> usize {
        self.0
            .lock()
            .expect("counts")
            .get(method)
            .copied()
            .unwrap_or(0)
    }
}

impl Interceptor for Counts {
    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        *self
            .0
            .lock()
            .expect("counts")
            .entry(req.method().to_owned())
            .or_default() += 1;
        next.pass(req)
    }
}

/// How many times each resource was read, by URI.
#[derive(Clone, Default)]
struct Reads(Arc<Mutex<HashMap<String, usize>>>);

impl Reads {
    fn of(&self, uri: &str) -> usize {
        self.0.lock().expect("reads").get(uri).copied().unwrap_or(0)
    }
}

fn tool(name: &str) -> McpToolDef {
    McpToolDef::new(
        name,
        "does nothing",
        json!({"type": "object"}),
        |_args: Map<String, Value>, _ctx: InvokeContext| async { CallToolResult::text("ok") },
    )
}

/// A resource at `uri` whose reads are counted, with this caching hint
/// (none: the server's default, `ttlMs: 0`).
fn resource(
    reads: &Reads,
    uri: &str,
    text: &str,
    hint: Option<(u64, CacheScope)>,
) -> McpResourceDef {
    let reads = reads.clone();
    let text = text.to_owned();
    let def = McpResourceDef::new(
        uri,
        uri,
        move |req: mcp_core::handler::ResourceRequest, _ctx| {
            *reads
                .0
                .lock()
                .expect("reads")
                .entry(req.uri.clone())
                .or_default() += 1;
            let contents = vec![ResourceContents::text(req.uri, text.clone())];
            async move { contents }
        },
    );
    match hint {
        Some((ttl, scope)) => def.with_cache(ttl, scope),
        None => def,
    }
}

/// A live backend whose listings are fresh for an hour (public), with
/// resources fresh for an hour (public and private), for 1 ms, and not
/// at all.
fn backend(counts: &Counts, reads: &Reads) -> McpServer {
    McpServer::builder()
        .server_info("cached", "1.0.0")
        .live_catalog()
        .list_cache(HOUR_MS, CacheScope::Public)
        .interceptor(counts.clone())
        .tool(tool("first"))
        .prompt(McpPromptDef::new("greet", |_args, _ctx| async {
            "hello".to_owned()
        }))
        .resource(resource(
            reads,
            "mem://public",
            "shared",
            Some((HOUR_MS, CacheScope::Public)),
        ))
        .resource(resource(
            reads,
            "mem://private",
            "mine",
            Some((HOUR_MS, CacheScope::Private)),
        ))
        .resource(resource(
            reads,
            "mem://brief",
            "soon stale",
            Some((1, CacheScope::Public)),
        ))
        .resource(resource(reads, "mem://zero", "never kept", None))
        .resource(resource(
            reads,
            "mem://big-a",
            &"a".repeat(1000),
            Some((HOUR_MS, CacheScope::Public)),
        ))
        .resource(resource(
            reads,
            "mem://big-b",
            &"b".repeat(1000),
            Some((HOUR_MS, CacheScope::Public)),
        ))
        .build()
        .expect("backend")
}

/// A 2026-07-28 client of `server` over an in-process stream.
async fn connect(server: McpServer, builder: ClientBuilder, options: StdioOptions) -> Client {
    let (client_end, server_end) = tokio::io::duplex(256 * 1024);
    let (server_r, server_w) = tokio::io::split(server_end);
    let (client_r, client_w) = tokio::io::split(client_end);
    let _served = serve_io(server, server_r, server_w, options);
    guard(
        "connect",
        builder
            .protocol(Protocol::pinned(MODERN))
            .connect_io(client_r, client_w),
    )
    .await
    .expect("client")
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("cache-test", "0")
}

#[tokio::test]
async fn listings_and_reads_are_fetched_once_while_fresh() {
    let (counts, reads) = (Counts::default(), Reads::default());
    let client = connect(backend(&counts, &reads), builder(), StdioOptions::default()).await;
    for _ in 0..2 {
        assert_eq!(
            guard("tools", client.list_tools())
                .await
                .expect("tools")
                .len(),
            1
        );
        guard("prompts", client.list_prompts())
            .await
            .expect("prompts");
        guard("resources", client.list_resources())
            .await
            .expect("resources");
        guard("templates", client.list_resource_templates())
            .await
            .expect("templates");
        let contents = guard("read", client.read_resource("mem://public"))
            .await
            .expect("read");
        assert_eq!(contents.len(), 1);
        guard("read", client.read_resource("mem://private"))
            .await
            .expect("read");
    }
    for method in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ] {
        assert_eq!(counts.of(method), 1, "{method}");
    }
    assert_eq!(reads.of("mem://public"), 1);
    assert_eq!(reads.of("mem://private"), 1);
    // A request through Client::request is served from the same cache.
    let result = client
        .request("tools/list", Value::Null, &RequestOptions::new())
        .await
        .expect("tools/list");
    assert_eq!(result["tools"][0]["name"], "first");
    assert_eq!(counts.of("tools/list"), 1);
    client.clear_cache();
    guard("tools", client.list_tools()).await.expect("tools");
    assert_eq!(counts.of("tools/list"), 2, "cleared, so fetched again");
}

#[tokio::test]
async fn stale_and_zero_ttl_results_are_fetched_again() {
    let (counts, reads) = (Counts::default(), Reads::default());
    let client = connect(backend(&counts, &reads), builder(), StdioOptions::default()).await;
    for _ in 0..3 {
        guard("read", client.read_resource("mem://zero"))
            .await
            .expect("read");
    }
    assert_eq!(reads.of("mem://zero"), 3, "ttlMs 0 is never kept");
    guard("read", client.read_resource("mem://brief"))
        .await
        .expect("read");
    // 1 ms of freshness is certainly over after 20 ms.
    tokio::time::sleep(Duration::from_millis(20)).await;
    guard("read", client.read_resource("mem://brief"))
        .await
        .expect("read");
    assert_eq!(reads.of("mem://brief"), 2, "stale after its ttlMs");
}

#[tokio::test]
async fn change_notifications_drop_entries() {
    let (counts, reads) = (Counts::default(), Reads::default());
    let server = backend(&counts, &reads);
    let (seen_tx, mut seen) = mpsc::unbounded_channel::<String>();
    let handlers = Handlers::default().on_notification(move |method, _params| {
        let _ = seen_tx.send(method.to_owned());
    });
    let client = Arc::new(
        connect(
            server.clone(),
            builder().handlers(handlers),
            StdioOptions::default(),
        )
        .await,
    );
    guard("tools", client.list_tools()).await.expect("tools");
    guard("prompts", client.list_prompts())
        .await
        .expect("prompts");
    guard("read", client.read_resource("mem://public"))
        .await
        .expect("read");
    let listener = Arc::clone(&client);
    let listen = tokio::spawn(async move {
        let wanted = json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true});
        let _ = listener.listen(wanted, &RequestOptions::new()).await;
    });
    // The listen is open once the server counts it.
    guard("listen", async {
        while counts.of("subscriptions/listen") == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;

    server.add_tool(tool("second")).await.expect("add tool");
    wait_for(&mut seen, "notifications/tools/list_changed").await;
    let tools = guard("tools", client.list_tools()).await.expect("tools");
    assert_eq!(tools.len(), 2, "the new listing");
    assert_eq!(counts.of("tools/list"), 2);
    guard("prompts", client.list_prompts())
        .await
        .expect("prompts");
    assert_eq!(counts.of("prompts/list"), 1, "other lists stay cached");

    server
        .remove_resource("mem://zero")
        .await
        .expect("remove resource");
    wait_for(&mut seen, "notifications/resources/list_changed").await;
    guard("read", client.read_resource("mem://public"))
        .await
        .expect("read");
    assert_eq!(
        reads.of("mem://public"),
        2,
        "reads go with the resource listing"
    );
    listen.abort();
}

#[tokio::test]
async fn a_disabled_cache_sends_every_request() {
    let (counts, reads) = (Counts::default(), Reads::default());
    let client = connect(
        backend(&counts, &reads),
        builder().cache(CacheOptions::disabled()),
        StdioOptions::default(),
    )
    .await;
    for _ in 0..3 {
        guard("tools", client.list_tools()).await.expect("tools");
        guard("read", client.read_resource("mem://public"))
            .await
            .expect("read");
    }
    assert_eq!(counts.of("tools/list"), 3);
    assert_eq!(reads.of("mem://public"), 3);
}

#[tokio::test]
async fn the_size_bound_evicts_the_least_recently_used() {
    let (counts, reads) = (Counts::default(), Reads::default());
    // Room for one read of 1,000 bytes of text, not two.
    let client = connect(
        backend(&counts, &reads),
        builder().cache(CacheOptions::new().max_bytes(2_000)),
        StdioOptions::default(),
    )
    .await;
    let read = |uri: &'static str| {
        let client = &client;
        async move { guard(uri, client.read_resource(uri)).await.expect("read") }
    };
    read("mem://big-a").await;
    read("mem://big-a").await;
    assert_eq!(reads.of("mem://big-a"), 1, "kept while it fits");
    read("mem://big-b").await;
    read("mem://big-b").await;
    assert_eq!(reads.of("mem://big-b"), 1, "the newer one is kept");
    read("mem://big-a").await;
    assert_eq!(reads.of("mem://big-a"), 2, "the older one was evicted");

    // An entry larger than the whole cache is never kept.
    let tiny = connect(
        backend(&counts, &reads),
        builder().cache(CacheOptions::new().max_bytes(500)),
        StdioOptions::default(),
    )
    .await;
    guard("read", tiny.read_resource("mem://big-b"))
        .await
        .expect("read");
    guard("read", tiny.read_resource("mem://big-b"))
        .await
        .expect("read");
    assert_eq!(reads.of("mem://big-b"), 3);
}

/// Waits for notification `method` on `seen` (the client's own callback:
/// the cache has dropped its entries by then).
async fn wait_for(seen: &mut mpsc::UnboundedReceiver<String>, method: &str) {
    let arrived = async {
        while let Some(m) = seen.recv().await {
            if m == method {
                return;
            }
        }
        panic!("{method} never arrived");
    };
    guard(method, arrived).await;
}

/// A front server over the proxy, to a caller known as `principal`.
async fn front_client(front: &McpServer, principal: &str) -> Client {
    connect(
        front.clone(),
        // The front's own answers are not what this test counts.
        builder().cache(CacheOptions::disabled()),
        StdioOptions::default().extension(AuthInfo::new(principal)),
    )
    .await
}

#[tokio::test]
async fn a_proxy_keeps_private_reads_per_caller_and_public_ones_for_all() {
    let (counts, reads) = (Counts::default(), Reads::default());
    let upstream = serve_http(backend(&counts, &reads), HttpOptions::new().port(0))
        .await
        .expect("backend");
    let remote = guard(
        "proxy connect",
        Remote::connect(
            "cached",
            Target::Url(upstream.url().to_owned()),
            builder().protocol(Protocol::pinned(MODERN)),
            ProxyOptions::new(),
        ),
    )
    .await
    .expect("remote");
    let front = guard("listings", remote.builder())
        .await
        .expect("proxied server")
        .build()
        .expect("front");
    assert_eq!(counts.of("tools/list"), 1);
    // A second catalog comes from the cached listings.
    let _again = guard("listings", remote.builder()).await.expect("again");
    assert_eq!(counts.of("tools/list"), 1, "listed upstream once");
    assert_eq!(counts.of("resources/list"), 1);

    let alice = front_client(&front, "alice").await;
    let bob = front_client(&front, "bob").await;
    for client in [&alice, &bob, &alice, &bob] {
        let mine = guard("read", client.read_resource("mem://private"))
            .await
            .expect("read");
        assert_eq!(mine, vec![ResourceContents::text("mem://private", "mine")]);
        guard("read", client.read_resource("mem://public"))
            .await
            .expect("read");
    }
    assert_eq!(
        reads.of("mem://private"),
        2,
        "one private read per principal"
    );
    assert_eq!(reads.of("mem://public"), 1, "one public read for everyone");

    // Another connection of the same principal shares its entries.
    let alice_again = front_client(&front, "alice").await;
    guard("read", alice_again.read_resource("mem://private"))
        .await
        .expect("read");
    assert_eq!(reads.of("mem://private"), 2);
    let carol = front_client(&front, "carol").await;
    guard("read", carol.read_resource("mem://private"))
        .await
        .expect("read");
    assert_eq!(reads.of("mem://private"), 3);
    upstream.close().await;
}
