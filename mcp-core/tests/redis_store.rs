//! The Redis stores against a real Redis (feature `redis`): the task
//! store's records, atomic changes under contention, TTL expiry, bounds
//! and leases; the notification bus between two members; the session
//! store; the per-principal state store (compare-and-set, principals
//! apart, byte cap, idle expiry).
//!
//! Opt-in: they run when `MCP_TEST_REDIS=redis://HOST:PORT` names a running
//! Redis (each test under a key prefix of its own); without it each returns
//! at once. `.ci/run` starts a Redis, sets the variable and
//! `MCP_TEST_REDIS_MARKERS=DIR`, where each test that passes writes
//! `DIR/redis_store-<test name>`, and checks every test left its marker.

use std::sync::Arc;
use std::time::Duration;

use mcp_core::redis::RedisBackend;
use mcp_core::storage::{
    BusEvent, BusSink, NotificationBus, SessionRecord, SessionStore, StateKey, StateLimits,
    StateLookup, StateStore, StateWrite, TaskChange, TaskStore, TaskStoreError,
};
use mcp_core::tasks::{TaskRecord, TaskStatus};
use serde_json::{json, Map, Value};

const GUARD: Duration = Duration::from_secs(10);

/// The test's Redis under a prefix of its own, or `None` when not opted in.
fn redis(name: &str) -> Option<(RedisBackend, Marker)> {
    let Some(url) = std::env::var("MCP_TEST_REDIS")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            use std::io::Write as _;
            let line = "\nredis_store: NOT RUN: the Redis store tests run only with \
                        MCP_TEST_REDIS=redis://127.0.0.1:PORT (a running redis-server).\n";
            let _ = std::io::stderr().write_all(line.as_bytes());
        });
        return None;
    };
    let prefix = format!("mcp-unit:{name}:{}:", std::process::id());
    let backend = RedisBackend::open_with(&url, &prefix, Duration::from_secs(2))
        .unwrap_or_else(|e| panic!("MCP_TEST_REDIS={url}: {e}"));
    Some((backend, Marker(format!("redis_store-{name}"))))
}

/// Written when the test passed (`MCP_TEST_REDIS_MARKERS`).
struct Marker(String);

impl Marker {
    fn passed(self) {
        if let Some(dir) = std::env::var_os("MCP_TEST_REDIS_MARKERS") {
            let dir = std::path::PathBuf::from(dir);
            std::fs::create_dir_all(&dir).expect("marker dir");
            std::fs::write(dir.join(&self.0), "passed\n").expect("marker");
        }
    }
}

fn record(id: &str, ttl_ms: Option<u64>) -> TaskRecord {
    let mut record = TaskRecord::new(id.into(), Some("alice".into()), 1);
    record.ttl_ms = ttl_ms;
    record
}

async fn within<F: std::future::Future>(fut: F) -> F::Output {
    tokio::time::timeout(GUARD, fut).await.expect("hang guard")
}

#[tokio::test]
async fn records_round_trip_and_changes_apply() {
    let Some((redis, marker)) = redis("records_round_trip_and_changes_apply") else {
        return;
    };
    let store = redis.task_store();
    assert!(store.is_shared());
    within(store.create(record("t1", Some(60_000))))
        .await
        .expect("created");
    let got = within(store.get("t1")).await.expect("read").expect("found");
    assert_eq!(got, record("t1", Some(60_000)));
    assert_eq!(within(store.get("nope")).await.expect("read"), None);
    assert_eq!(
        within(store.update("nope", TaskChange::Cancel))
            .await
            .expect("update"),
        None
    );
    let mut ask = Map::new();
    ask.insert("q".into(), json!({"method": "elicitation/create"}));
    let asked = within(store.update("t1", TaskChange::Ask(ask)))
        .await
        .expect("update")
        .expect("found");
    assert_eq!(asked.status, TaskStatus::InputRequired);
    let mut answer = Map::new();
    answer.insert("q".into(), json!({"action": "accept"}));
    let answered = within(store.update("t1", TaskChange::Answer(answer)))
        .await
        .expect("update")
        .expect("found");
    assert_eq!(answered.status, TaskStatus::Working);
    assert_eq!(answered.input_responses["q"], json!({"action": "accept"}));
    let done = within(store.update("t1", TaskChange::Complete(json!({"content": []}))))
        .await
        .expect("update")
        .expect("found");
    assert_eq!(done.status, TaskStatus::Completed);
    // Terminal: later changes leave it as it is, read back by anyone.
    let after = within(store.update("t1", TaskChange::Cancel))
        .await
        .expect("update")
        .expect("found");
    assert_eq!(after.status, TaskStatus::Completed);
    assert_eq!(within(store.get("t1")).await.expect("read"), Some(after));
    marker.passed();
}

#[tokio::test]
async fn concurrent_changes_are_never_lost() {
    let Some((redis, marker)) = redis("concurrent_changes_are_never_lost") else {
        return;
    };
    let store = Arc::new(redis.task_store());
    within(store.create(record("busy", Some(60_000))))
        .await
        .expect("created");
    // 24 writers, each adding its own question: a lost update would drop one.
    let writers: Vec<_> = (0..24)
        .map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut ask = Map::new();
                ask.insert(format!("q{i}"), json!({"method": "elicitation/create"}));
                store.update("busy", TaskChange::Ask(ask)).await
            })
        })
        .collect();
    for writer in writers {
        within(writer).await.expect("joined").expect("applied");
    }
    let got = within(store.get("busy"))
        .await
        .expect("read")
        .expect("found");
    assert_eq!(
        got.input_requests.len(),
        24,
        "{:?}",
        got.input_requests.keys()
    );
    marker.passed();
}

#[tokio::test]
async fn tasks_expire_with_their_ttl_and_bounds_hold() {
    let Some((redis, marker)) = redis("tasks_expire_with_their_ttl_and_bounds_hold") else {
        return;
    };
    let store = redis.task_store().with_limits(2, 4096);
    within(store.create(record("short", Some(150))))
        .await
        .expect("created");
    within(store.create(record("long", Some(60_000))))
        .await
        .expect("created");
    assert_eq!(
        within(store.create(record("third", Some(60_000)))).await,
        Err(TaskStoreError::Full)
    );
    // Gone once its TTL passed (Redis expires the key)…
    within(async {
        while store.get("short").await.expect("read").is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    // …which makes room again.
    within(store.create(record("third", Some(60_000))))
        .await
        .expect("room again");
    // A record over the size bound is refused, the stored one unchanged.
    let big = Value::String("x".repeat(8192));
    let refused = within(store.update("long", TaskChange::Complete(big))).await;
    assert!(
        matches!(refused, Err(TaskStoreError::TooLarge { max: 4096, .. })),
        "{refused:?}"
    );
    let kept = within(store.get("long"))
        .await
        .expect("read")
        .expect("found");
    assert_eq!(kept.status, TaskStatus::Working);
    marker.passed();
}

#[tokio::test]
async fn a_lapsed_lease_fails_the_task_and_a_renewed_one_does_not() {
    let Some((redis, marker)) = redis("a_lapsed_lease_fails_the_task_and_a_renewed_one_does_not")
    else {
        return;
    };
    let store = redis.task_store();
    let mut leased = record("leased", Some(60_000));
    leased.lease_until_ms = Some(1_000);
    within(store.create(leased)).await.expect("created");
    // Judged before the lease's end: nothing changes.
    let early = within(store.update("leased", TaskChange::Orphaned(500)))
        .await
        .expect("update")
        .expect("found");
    assert_eq!(early.status, TaskStatus::Working);
    // Renewed, then judged between the old and the new end: still working.
    within(store.update("leased", TaskChange::Lease(5_000)))
        .await
        .expect("update");
    let renewed = within(store.update("leased", TaskChange::Orphaned(2_000)))
        .await
        .expect("update")
        .expect("found");
    assert_eq!(renewed.status, TaskStatus::Working);
    assert_eq!(renewed.lease_until_ms, Some(5_000));
    // Past it: failed, saying why.
    let failed = within(store.update("leased", TaskChange::Orphaned(6_000)))
        .await
        .expect("update")
        .expect("found");
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(
        failed.error.as_ref().and_then(|e| e["code"].as_i64()),
        Some(-32603)
    );
    marker.passed();
}

/// A sink collecting what a bus delivers.
fn collector() -> (BusSink, tokio::sync::mpsc::UnboundedReceiver<BusEvent>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (Arc::new(move |event| drop(tx.send(event))), rx)
}

#[tokio::test]
async fn the_bus_carries_notices_to_the_other_members_only() {
    let Some((redis, marker)) = redis("the_bus_carries_notices_to_the_other_members_only") else {
        return;
    };
    let (a, b) = (redis.notification_bus(), redis.notification_bus());
    within(async { tokio::join!(a.ready(), b.ready()) }).await;
    let (sink_a, mut heard_a) = collector();
    let (sink_b, mut heard_b) = collector();
    a.attach(sink_a);
    b.attach(sink_b);
    let event = BusEvent::ResourceUpdated {
        uri: "test://x".into(),
    };
    within(a.publish(event.clone())).await;
    assert_eq!(within(heard_b.recv()).await, Some(event));
    within(b.publish(BusEvent::ToolsListChanged)).await;
    assert_eq!(
        within(heard_a.recv()).await,
        Some(BusEvent::ToolsListChanged)
    );
    // Neither heard its own.
    assert!(heard_a.try_recv().is_err());
    assert!(heard_b.try_recv().is_err());
    marker.passed();
}

#[tokio::test]
async fn session_records_are_saved_loaded_and_removed() {
    let Some((redis, marker)) = redis("session_records_are_saved_loaded_and_removed") else {
        return;
    };
    let store = redis.session_store();
    let record: SessionRecord = serde_json::from_value(json!({
        "principal": "alice", "protocol_version": "2025-11-25", "capabilities": {"roots": {}},
        "client_info": {"name": "c", "version": "1"}, "log_level": "debug",
        "subscriptions": ["test://a"],
    }))
    .expect("a record");
    within(store.save("s1", &record, Duration::from_secs(60)))
        .await
        .expect("saved");
    assert_eq!(
        within(store.load("s1")).await.expect("loaded"),
        Some(record.clone())
    );
    assert_eq!(within(store.load("s2")).await.expect("loaded"), None);
    within(store.remove("s1")).await.expect("removed");
    assert_eq!(within(store.load("s1")).await.expect("loaded"), None);
    // Expires with its TTL.
    within(store.save("s3", &record, Duration::from_millis(100)))
        .await
        .expect("saved");
    within(async {
        while store.load("s3").await.expect("loaded").is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    marker.passed();
}

/// One `storage()` per replica: the three parts of two replicas' storages
/// meet on the same keys and channel (a task, a notice, a session made
/// through one are seen through the other).
#[tokio::test]
async fn two_storages_on_one_prefix_share_tasks_notices_and_sessions() {
    let Some((redis, marker)) =
        redis("two_storages_on_one_prefix_share_tasks_notices_and_sessions")
    else {
        return;
    };
    let (one, two) = (redis.storage(), redis.storage());
    let part = |what: Option<&Arc<dyn TaskStore>>| Arc::clone(what.expect("a task store"));
    let (tasks_one, tasks_two) = (part(one.tasks()), part(two.tasks()));
    assert!(tasks_two.is_shared());
    within(tasks_one.create(record("shared", Some(60_000))))
        .await
        .expect("created");
    let seen = within(tasks_two.get("shared")).await.expect("read");
    assert_eq!(seen.map(|t| t.owner), Some(Some("alice".to_owned())));

    let (bus_one, bus_two) = (one.notices().expect("a bus"), two.notices().expect("a bus"));
    within(async { tokio::join!(bus_one.ready(), bus_two.ready()) }).await;
    let (sink, mut heard) = collector();
    bus_two.attach(sink);
    within(bus_one.publish(BusEvent::PromptsListChanged)).await;
    assert_eq!(
        within(heard.recv()).await,
        Some(BusEvent::PromptsListChanged)
    );

    let (sessions_one, sessions_two) = (
        one.sessions().expect("a session store"),
        two.sessions().expect("a session store"),
    );
    let record: SessionRecord = serde_json::from_value(json!({
        "principal": "ann", "protocol_version": null, "capabilities": null,
        "client_info": null, "log_level": null, "subscriptions": [],
    }))
    .expect("a record");
    within(sessions_one.save("s1", &record, Duration::from_secs(60)))
        .await
        .expect("saved");
    assert_eq!(
        within(sessions_two.load("s1")).await.expect("loaded"),
        Some(record)
    );
    marker.passed();
}

fn state_key(principal: &str, id: &str) -> StateKey {
    StateKey {
        principal: principal.into(),
        kind: "cart".into(),
        id: id.into(),
    }
}

/// The state store: versions compare-and-set, principals never meet, the
/// byte cap holds, and an idle entry reads as expired (then stays so).
#[tokio::test]
async fn state_entries_swap_by_version_stay_apart_fit_the_cap_and_expire() {
    let Some((redis, marker)) =
        redis("state_entries_swap_by_version_stay_apart_fit_the_cap_and_expire")
    else {
        return;
    };
    let store = redis.state_store();
    let limits = StateLimits::DEFAULT;
    let alice = state_key("alice", "c1");
    let write = |key: &StateKey, expected: Option<u64>, value: &str, limits: StateLimits| {
        let (store, key, value) = (store.clone(), key.clone(), value.as_bytes().to_vec());
        async move {
            within(store.write(&key, expected, value, &limits))
                .await
                .expect("write")
        }
    };
    assert_eq!(
        write(&alice, None, "[]", limits).await,
        StateWrite::Written { version: 1 }
    );
    assert_eq!(
        write(&alice, None, "[]", limits).await,
        StateWrite::Conflict
    );
    assert_eq!(
        within(store.load(&alice, &limits)).await.expect("load"),
        StateLookup::Found {
            version: 1,
            value: b"[]".to_vec()
        }
    );
    assert_eq!(
        write(&alice, Some(1), "[1]", limits).await,
        StateWrite::Written { version: 2 }
    );
    // A writer that read version 1 lost the race.
    assert_eq!(
        write(&alice, Some(1), "[2]", limits).await,
        StateWrite::Conflict
    );
    // Bob's key of the same id is another entry: nothing there.
    let bob = state_key("bob", "c1");
    assert_eq!(
        within(store.load(&bob, &limits)).await.expect("load"),
        StateLookup::Missing
    );
    assert_eq!(
        write(&bob, Some(2), "[]", limits).await,
        StateWrite::Missing
    );

    // The cap counts the principal's other live entries.
    let small = StateLimits {
        max_bytes_per_principal: 64,
        ..limits
    };
    let carol = state_key("carol", "a");
    assert_eq!(
        write(&carol, None, &"x".repeat(40), small).await,
        StateWrite::Written { version: 1 }
    );
    let second = state_key("carol", "b");
    assert!(matches!(
        write(&second, None, &"y".repeat(40), small).await,
        StateWrite::OverCap { cap: 64, .. }
    ));
    assert!(within(store.remove(&carol)).await.expect("remove"));
    assert_eq!(
        write(&second, None, &"y".repeat(40), small).await,
        StateWrite::Written { version: 1 }
    );

    // Idle past a 1 ms TTL: expired, on every later read and write.
    let brief = StateLimits {
        idle_ttl: Duration::from_millis(1),
        ..limits
    };
    let dave = state_key("dave", "d");
    assert_eq!(
        write(&dave, None, "{}", brief).await,
        StateWrite::Written { version: 1 }
    );
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(
        within(store.load(&dave, &brief)).await.expect("load"),
        StateLookup::Expired
    );
    assert_eq!(
        within(store.load(&dave, &brief)).await.expect("load"),
        StateLookup::Expired
    );
    assert_eq!(
        write(&dave, Some(1), "{}", brief).await,
        StateWrite::Expired
    );
    assert!(!within(store.remove(&dave)).await.expect("remove"));
    marker.passed();
}

/// Two servers on one Redis and one handle key (two replicas in one
/// process): 100 concurrent `add_item`s, half through each, lose none.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn state_updates_through_two_servers_at_once_lose_none() {
    use mcp_core::state::{Handle, Stateful};
    use mcp_core::transport::{CallContext, StateKey as SealKey, StateKeys};
    use mcp_core::{InvokeContext, McpServer, McpToolDef, ToolError};

    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Cart(Vec<u32>);
    impl Stateful for Cart {
        const KIND: &'static str = "cart";
        const MINTED_BY: &'static str = "open";
    }
    let Some((redis, marker)) = redis("state_updates_through_two_servers_at_once_lose_none") else {
        return;
    };
    let keys = StateKeys::new(SealKey::new("k", [7u8; 32]).expect("key"), Vec::new());
    let server = |backend: RedisBackend| {
        let open = McpToolDef::new(
            "open",
            "",
            json!({"type": "object"}),
            |_, ctx: InvokeContext| async move {
                Handle::mint(&ctx, Cart::default())
                    .await
                    .map(|h| h.as_str().to_owned())
            },
        );
        let add = McpToolDef::new(
            "add",
            "",
            json!({"type": "object"}),
            |args: Map<String, Value>, ctx: InvokeContext| async move {
                let cart: Handle<Cart> = serde_json::from_value(args["cart"].clone())
                    .map_err(|e| ToolError::new("BAD", e.to_string()))?;
                let n = args["n"].as_u64().unwrap_or_default() as u32;
                cart.update(&ctx, |c| {
                    c.0.push(n);
                    c.0.len()
                })
                .await
                .map(|len| len.to_string())
            },
        );
        McpServer::builder()
            .server_info("replica", "1")
            .request_state_keys(keys.clone())
            .storage(backend.storage())
            .tool(open)
            .tool(add)
            .build()
            .expect("server")
    };
    let url = std::env::var("MCP_TEST_REDIS").expect("set");
    let other =
        RedisBackend::open_with(&url, redis.prefix(), Duration::from_secs(2)).expect("open");
    let (one, two) = (server(redis), server(other));
    static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let call = |server: McpServer, name: &'static str, args: Value| async move {
        let id = IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": name, "arguments": args, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}});
        let ctx = CallContext::new().with_principal("alice");
        let reply = within(server.handle_message(message, &ctx))
            .await
            .expect("a reply");
        let result = reply["result"].clone();
        assert_ne!(result["isError"], true, "{reply}");
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text: {reply}"))
            .to_owned()
    };
    let cart = call(one.clone(), "open", json!({})).await;
    let mut calls = Vec::new();
    for n in 0..100u32 {
        let server = if n % 2 == 0 { one.clone() } else { two.clone() };
        calls.push(tokio::spawn(call(
            server,
            "add",
            json!({"cart": cart, "n": n}),
        )));
    }
    let mut counts = Vec::new();
    for c in calls {
        counts.push(c.await.expect("ran").parse::<usize>().expect("a count"));
    }
    counts.sort_unstable();
    // Every update saw a different length: none overwrote another.
    assert_eq!(counts, (1..=100).collect::<Vec<_>>());
    marker.passed();
}

/// A result cut on one replica is read back page by page on another
/// through the shared Redis state store, by the same principal only.
#[tokio::test]
async fn a_kept_result_is_read_back_on_another_replica_by_its_principal_only() {
    use mcp_core::handler::ResultLimit;
    use mcp_core::transport::CallContext;
    use mcp_core::{InvokeContext, McpServer, McpToolDef};

    let Some((redis, marker)) =
        redis("a_kept_result_is_read_back_on_another_replica_by_its_principal_only")
    else {
        return;
    };
    let server = |backend: RedisBackend| {
        let big = McpToolDef::new(
            "big",
            "",
            json!({"type": "object"}),
            |_, _ctx: InvokeContext| async move { "a line of text\n".repeat(2_000) },
        );
        McpServer::builder()
            .server_info("replica", "1")
            .storage(backend.storage())
            .result_limit(ResultLimit::bytes(8192))
            .tool(big)
            .build()
            .expect("server")
    };
    let url = std::env::var("MCP_TEST_REDIS").expect("set");
    let other =
        RedisBackend::open_with(&url, redis.prefix(), Duration::from_secs(2)).expect("open");
    let (one, two) = (server(redis), server(other));
    let ask = |server: &McpServer, who: &str, method: &str, params: Value| {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let ctx = CallContext::new().with_principal(who);
        let server = server.clone();
        async move {
            within(server.handle_message(message, &ctx))
                .await
                .expect("a reply")
        }
    };
    let cut = ask(&one, "alice", "tools/call", json!({"name": "big"})).await;
    // No negotiated revision here (a bare legacy request), so the URI is
    // in the note rather than in a `resource_link` block.
    let note = cut["result"]["content"][1]["text"].as_str().unwrap_or("");
    let uri = note
        .find("mcp-result://")
        .and_then(|at| note[at..].split_whitespace().next())
        .unwrap_or_else(|| panic!("no URI in the note: {cut}"))
        .to_owned();
    let stolen = ask(&two, "bob", "resources/read", json!({"uri": uri})).await;
    assert_eq!(
        stolen["error"]["message"],
        format!("Unknown resource: {uri}")
    );
    let mut next = Some(uri);
    let mut whole = String::new();
    while let Some(uri) = next.take() {
        let page = ask(&two, "alice", "resources/read", json!({"uri": uri})).await;
        let contents = &page["result"]["contents"][0];
        whole.push_str(
            contents["text"]
                .as_str()
                .unwrap_or_else(|| panic!("{page}")),
        );
        next = contents["_meta"]["nextUri"].as_str().map(str::to_owned);
    }
    let whole: Value = serde_json::from_str(&whole).expect("the pages make the JSON");
    assert_eq!(
        whole["content"][0]["text"],
        "a line of text\n".repeat(2_000)
    );
    marker.passed();
}
