//! Two replicas sharing one Redis, behind nginx: the conformance fixture
//! started twice with `--http 127.0.0.1:0 --redis URL` (its `Storage` on
//! Redis: tasks in a `RedisTaskStore`, notices on a `RedisNotificationBus`, legacy sessions
//! in a `RedisSessionStore`), each test under a key prefix of its own.
//!
//! - a task started through one replica completes and is read through the
//!   other; a cancel through the other stops the work on the first (its
//!   running slot is free again);
//! - a `subscriptions/listen` held by one replica hears an update made on
//!   the other;
//! - a legacy session survives its replica's restart (served by the other
//!   replica and by the restarted one, its subscription included);
//! - a replica killed mid-task leaves the task `failed`, not `working`;
//! - bad input: unknown task ids, another principal's task, oversized ids
//!   and bodies;
//! - Redis down (a `redis-server` this test starts and stops): task calls
//!   fail with a clear error, other calls are served, and task calls work
//!   again once Redis is back;
//! - two cart servers (`examples/cart.rs --redis`): 100 concurrent
//!   `add_item`s on one cart, half through each, lose none, and the cart's
//!   handle is unknown to another principal on either.
//!
//! Opt-in, so that `cargo test --workspace` passes with only the Rust
//! toolchain: they run when `MCP_TEST_REDIS=redis://HOST:PORT` names a
//! running Redis, and then need nginx (`/usr/sbin/nginx`) and
//! `redis-server` on `PATH` (missing ones fail, never skip). `.ci/run`
//! installs and starts them and checks that every test here passed: with
//! `MCP_TEST_REDIS_MARKERS=DIR`, each test that passes writes
//! `DIR/<test name>`.

#[path = "harness/nginx.rs"]
mod nginx;
#[path = "../mcp-core/tests/common/raw_http.rs"]
mod raw_http;
#[path = "harness/wire.rs"]
mod wire;

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nginx::{spawn_example, KillOnDrop, LoadBalancer, NGINX};
use serde_json::{json, Value};
use wire::{
    error_code, get_task, head, message, modern, poll_until, post, result, start_task, upstream,
    Events, Resp,
};

/// Hang guard for one exchange, and for what should happen promptly.
const GUARD: Duration = Duration::from_secs(30);
/// `MCP_TEST_REDIS=redis://127.0.0.1:PORT` runs these tests.
const OPT_IN_ENV: &str = "MCP_TEST_REDIS";
/// A directory where each test that passes writes a file named after it.
const MARKERS_ENV: &str = "MCP_TEST_REDIS_MARKERS";
const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

// ---------------------------------------------------------------- harness

/// One test of this file, run only when opted in.
struct RedisTest {
    name: &'static str,
    url: String,
}

impl RedisTest {
    /// `None` (after saying so on stderr) unless `MCP_TEST_REDIS` is set;
    /// then fails (never skips) when nginx or redis-server is missing.
    fn opt_in(name: &'static str) -> Option<Self> {
        let url = match std::env::var(OPT_IN_ENV) {
            Ok(url) if !url.is_empty() => url,
            _ => {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    let line = format!(
                        "\nreplicas: NOT RUN: the Redis-backed replica tests run only with \
                         {OPT_IN_ENV}=redis://127.0.0.1:PORT (a running redis-server; nginx \
                         at {NGINX}). To run them: `apt-get install redis-server nginx`, \
                         `redis-server --port 6390 --save '' --appendonly no --daemonize yes`, \
                         then `{OPT_IN_ENV}=redis://127.0.0.1:6390 cargo test -p mcp-suite-tests --test replicas`.\n"
                    );
                    let _ = std::io::stderr().write_all(line.as_bytes());
                });
                return None;
            }
        };
        assert!(
            Path::new(NGINX).exists(),
            "{OPT_IN_ENV} is set but {NGINX} is missing (`apt-get install nginx`)"
        );
        Some(Self { name, url })
    }

    /// A key prefix of this test alone.
    fn prefix(&self) -> String {
        format!("mcp-test:{}:{}:", self.name, std::process::id())
    }

    /// A replica of the fixture on this test's Redis and prefix.
    fn replica(&self, env: &[(&str, &str)]) -> Replica {
        Replica::start(&self.url, &self.prefix(), env)
    }

    /// Records that the test passed, in `$MCP_TEST_REDIS_MARKERS/<name>`.
    fn passed(self) {
        if let Some(dir) = std::env::var_os(MARKERS_ENV) {
            let dir = PathBuf::from(dir);
            std::fs::create_dir_all(&dir)
                .unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
            std::fs::write(dir.join(self.name), "passed\n")
                .unwrap_or_else(|e| panic!("writing the marker of {}: {e}", self.name));
        }
    }
}

/// The fixture serving HTTP (legacy sessions on) with `--redis`.
struct Replica {
    process: KillOnDrop,
    addr: SocketAddr,
}

impl Replica {
    fn start(url: &str, prefix: &str, env: &[(&str, &str)]) -> Self {
        let mut vars: Vec<(&str, Option<&str>)> = vec![("MCP_REDIS_PREFIX", Some(prefix))];
        vars.extend(env.iter().map(|(k, v)| (*k, Some(*v))));
        let (process, addr) = spawn_example(
            "conformance",
            &["--http", "127.0.0.1:0", "--redis", url],
            &vars,
        );
        Self { process, addr }
    }
}

// ---------------------------------------------------------------- tests

#[test]
fn a_task_started_on_one_replica_completes_and_is_read_on_the_other() {
    let Some(t) =
        RedisTest::opt_in("a_task_started_on_one_replica_completes_and_is_read_on_the_other")
    else {
        return;
    };
    let (a, b) = (t.replica(&[]), t.replica(&[]));
    let lb = LoadBalancer::start(&[a.addr, b.addr]);
    let (id, created) = start_task(lb.addr, 1, None);
    let creator = upstream(&created);
    // Round robin: polls alternate, so the other replica serves some;
    // polled until that one reads it completed.
    let task = poll_until(lb.addr, &id, |task, resp| {
        task["status"] == "completed" && upstream(resp) != creator
    });
    assert_eq!(task["result"]["content"][0]["text"], "job: computed in 1 s");
    t.passed();
}

#[test]
fn a_cancel_through_one_replica_stops_the_work_on_the_other() {
    let Some(t) = RedisTest::opt_in("a_cancel_through_one_replica_stops_the_work_on_the_other")
    else {
        return;
    };
    // One running task per principal: a second one is refused while the
    // first runs, and admitted once its work stopped.
    let limit = [("MCP_TASK_MAX_RUNNING", "1")];
    let (a, b) = (t.replica(&limit), t.replica(&limit));
    let lb = LoadBalancer::start(&[a.addr, b.addr]);
    let (id, _) = start_task(a.addr, 600, None);
    let busy = modern(
        a.addr,
        "tools/call",
        "slow_compute",
        json!({"name": "slow_compute", "arguments": {"seconds": 600}}),
        None,
    );
    assert_eq!(error_code(&busy), -32000, "{}", message(&busy));
    // Cancelled through the balancer, on the replica that does not run it.
    let mut cancel = modern(lb.addr, "tasks/cancel", "", json!({"taskId": id}), None);
    if upstream(&cancel) == a.addr.to_string() {
        cancel = modern(lb.addr, "tasks/cancel", "", json!({"taskId": id}), None);
    }
    assert_eq!(upstream(&cancel), b.addr.to_string());
    result(&cancel);
    let task = result(&get_task(a.addr, &id, None));
    assert_eq!(task["status"], "cancelled", "{task}");
    // A's slot frees once its runner saw the cancel and dropped the tool.
    let deadline = Instant::now() + GUARD;
    loop {
        let params = json!({"name": "slow_compute", "arguments": {"seconds": 600}});
        let again = modern(a.addr, "tools/call", "slow_compute", params, None);
        if message(&again).get("result").is_some() {
            let second = result(&again)["taskId"].as_str().expect("id").to_owned();
            result(&modern(
                a.addr,
                "tasks/cancel",
                "",
                json!({"taskId": second}),
                None,
            ));
            break;
        }
        assert_eq!(error_code(&again), -32000);
        assert!(
            Instant::now() < deadline,
            "hang guard: A still runs the cancelled task"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    t.passed();
}

#[test]
fn a_listener_on_one_replica_hears_an_update_made_on_the_other() {
    let Some(t) = RedisTest::opt_in("a_listener_on_one_replica_hears_an_update_made_on_the_other")
    else {
        return;
    };
    let (a, b) = (t.replica(&[]), t.replica(&[]));
    let lb = LoadBalancer::start(&[a.addr, b.addr]);
    let params = json!({
        "notifications": {"resourceSubscriptions": ["test://watched-resource"]},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    });
    let body =
        json!({"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen", "params": params})
            .to_string();
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    let mut listen = Events::open(lb.addr, &(head(lb.addr, &headers, &body) + &body));
    listen.next("notifications/subscriptions/acknowledged");
    let holder = listen.header("x-upstream").expect("X-Upstream").to_owned();
    let other = if holder == a.addr.to_string() {
        b.addr
    } else {
        a.addr
    };
    let params = json!({"name": "test_update_watched_resource", "arguments": {}});
    let update = modern(
        other,
        "tools/call",
        "test_update_watched_resource",
        params,
        None,
    );
    // Nobody listens on the replica that made the change…
    let text = result(&update)["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(text.ends_with("0 subscriber(s) notified"), "{text}");
    // …yet the listener held by the other one hears of it.
    let note = listen.next("notifications/resources/updated");
    assert_eq!(note["params"]["uri"], "test://watched-resource");
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L"
    );
    t.passed();
}

/// A legacy request in session `session` (none for `initialize`).
fn legacy(
    addr: SocketAddr,
    session: Option<&str>,
    auth: &str,
    id: u64,
    method: &str,
    params: Value,
) -> Resp {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let mut headers = vec![("MCP-Protocol-Version", LEGACY), ("Authorization", auth)];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    post(addr, &headers, &body)
}

/// A legacy session of a client sending `Authorization` survives its
/// replica's restart, with no principal hook on the replicas: each used to
/// bind sessions to a hash keyed by a secret of its own process, so every
/// other replica (and the restarted one) answered 404. The default
/// principal is keyed by the `requestState` keys the replicas share.
#[test]
fn a_legacy_session_survives_its_replicas_restart() {
    let Some(t) = RedisTest::opt_in("a_legacy_session_survives_its_replicas_restart") else {
        return;
    };
    let auth = "Bearer alice";
    let (mut a, b) = (t.replica(&[]), t.replica(&[]));
    let init = json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "survivor", "version": "1"}});
    let resp = legacy(a.addr, None, auth, 1, "initialize", init);
    result(&resp);
    let session = resp
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    result(&legacy(
        a.addr,
        Some(&session),
        auth,
        2,
        "resources/subscribe",
        json!({"uri": "test://watched-resource"}),
    ));
    // The replica that created it stops; a new one starts.
    drop(a.process);
    a = t.replica(&[]);
    let lb = LoadBalancer::start(&[a.addr, b.addr]);
    // Another principal, or a made-up id, is still refused.
    assert_eq!(
        legacy(
            b.addr,
            Some(&session),
            "Bearer mallory",
            3,
            "tools/list",
            json!({})
        )
        .status,
        404
    );
    assert_eq!(
        legacy(
            b.addr,
            Some(&"0".repeat(64)),
            auth,
            3,
            "tools/list",
            json!({})
        )
        .status,
        404
    );
    // Served by both (through the balancer, round robin).
    let mut served = std::collections::HashSet::new();
    for id in 4..8 {
        let resp = legacy(lb.addr, Some(&session), auth, id, "tools/list", json!({}));
        assert!(result(&resp)["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()));
        served.insert(upstream(&resp));
    }
    assert_eq!(served.len(), 2, "{served:?}");
    // Its subscription came along: an update made in the session on B
    // reaches its GET stream on B.
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: {LEGACY}\r\n\
         Authorization: {auth}\r\nMcp-Session-Id: {session}\r\n\r\n",
        b.addr
    );
    let mut stream = Events::open(b.addr, &get);
    let params = json!({"name": "test_update_watched_resource", "arguments": {}});
    result(&legacy(
        b.addr,
        Some(&session),
        auth,
        9,
        "tools/call",
        params,
    ));
    let note = stream.next("notifications/resources/updated");
    assert_eq!(note["params"]["uri"], "test://watched-resource");
    t.passed();
}

#[test]
fn a_replica_killed_mid_task_leaves_the_task_failed() {
    let Some(t) = RedisTest::opt_in("a_replica_killed_mid_task_leaves_the_task_failed") else {
        return;
    };
    let lease = [("MCP_TASK_LEASE_MS", "900")];
    let (a, b) = (t.replica(&lease), t.replica(&lease));
    let (id, _) = start_task(a.addr, 600, None);
    // Renewed while A lives: still working after several leases.
    std::thread::sleep(Duration::from_millis(2000));
    assert_eq!(result(&get_task(b.addr, &id, None))["status"], "working");
    drop(a);
    let task = poll_until(b.addr, &id, |task, _| task["status"] != "working");
    assert_eq!(task["status"], "failed", "{task}");
    let why = task["error"]["message"].as_str().unwrap_or_default();
    assert!(why.contains("stopped"), "{task}");
    t.passed();
}

#[test]
fn bad_task_input_is_refused_on_every_replica() {
    let Some(t) = RedisTest::opt_in("bad_task_input_is_refused_on_every_replica") else {
        return;
    };
    let (a, b) = (t.replica(&[]), t.replica(&[]));
    let (id, _) = start_task(a.addr, 600, Some("Bearer alice"));
    // Unknown, and another principal's (not visible), alike: -32602.
    assert_eq!(error_code(&get_task(b.addr, &"f".repeat(32), None)), -32602);
    assert_eq!(
        error_code(&get_task(b.addr, &id, Some("Bearer mallory"))),
        -32602
    );
    assert_eq!(error_code(&get_task(b.addr, &id, None)), -32602);
    let cancel = modern(
        b.addr,
        "tasks/cancel",
        "",
        json!({"taskId": id}),
        Some("Bearer mallory"),
    );
    assert_eq!(error_code(&cancel), -32602);
    assert_eq!(
        result(&get_task(b.addr, &id, Some("Bearer alice")))["status"],
        "working"
    );
    // Oversized: a task id past its bound, a body past the transport's.
    let long = get_task(b.addr, &"a".repeat(4096), None);
    assert_eq!(error_code(&long), -32602);
    let answers = json!({"taskId": id, "inputResponses": {"x": {"pad": "p".repeat(2 << 20)}}});
    assert_eq!(
        modern(b.addr, "tasks/update", "", answers, Some("Bearer alice")).status,
        413
    );
    result(&modern(
        b.addr,
        "tasks/cancel",
        "",
        json!({"taskId": id}),
        Some("Bearer alice"),
    ));
    t.passed();
}

/// A `redis-server` of this test's own on `port`, killed when dropped.
fn own_redis(port: u16) -> KillOnDrop {
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("starting redis-server (apt-get install redis-server): {e}"));
    let process = KillOnDrop {
        what: format!("redis-server on {port}"),
        child,
    };
    let deadline = Instant::now() + GUARD;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "hang guard: redis-server did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    process
}

#[test]
fn with_redis_down_task_calls_fail_clearly_and_recover() {
    let Some(t) = RedisTest::opt_in("with_redis_down_task_calls_fail_clearly_and_recover") else {
        return;
    };
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let redis = own_redis(port);
    let replica = Replica::start(&format!("redis://127.0.0.1:{port}/"), &t.prefix(), &[]);
    start_task(replica.addr, 1, None);
    drop(redis);
    let params = json!({"name": "slow_compute", "arguments": {"seconds": 5}});
    let down = modern(
        replica.addr,
        "tools/call",
        "slow_compute",
        params.clone(),
        None,
    );
    assert_eq!(error_code(&down), -32603);
    assert_eq!(
        message(&down)["error"]["message"],
        "the task store is unavailable"
    );
    assert_eq!(
        error_code(&get_task(replica.addr, &"f".repeat(32), None)),
        -32603
    );
    // Other calls are served meanwhile.
    let greet = modern(
        replica.addr,
        "tools/call",
        "greet",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
        None,
    );
    assert_eq!(result(&greet)["content"][0]["text"], "Hello, Ada!");
    // Redis back on the same port: task calls work again.
    let _redis = own_redis(port);
    let deadline = Instant::now() + GUARD;
    loop {
        let resp = modern(
            replica.addr,
            "tools/call",
            "slow_compute",
            params.clone(),
            None,
        );
        if message(&resp).get("result").is_some() {
            let id = result(&resp)["taskId"].as_str().expect("id").to_owned();
            assert_eq!(
                result(&get_task(replica.addr, &id, None))["status"],
                "working"
            );
            break;
        }
        assert_eq!(error_code(&resp), -32603);
        assert!(
            Instant::now() < deadline,
            "hang guard: the store did not come back"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    t.passed();
}

// ------------------------------------------------------ per-principal state

/// The handle key both cart replicas share (64 hex digits).
const CART_KEY: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// A 2026-07-28 `tools/call` to a cart replica as `user` (the trusted
/// `x-user` header); returns the result.
fn cart_call(addr: SocketAddr, user: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
        ("x-user", user),
    ];
    result(&post(addr, &headers, &body))
}

#[test]
fn concurrent_cart_updates_through_two_replicas_lose_none() {
    let Some(t) = RedisTest::opt_in("concurrent_cart_updates_through_two_replicas_lose_none")
    else {
        return;
    };
    let prefix = t.prefix();
    let env = [
        ("MCP_REDIS_PREFIX", Some(prefix.as_str())),
        ("MCP_REQUEST_STATE_KEY", Some(CART_KEY)),
    ];
    let args = [
        "--http",
        "127.0.0.1:0",
        "--redis",
        t.url.as_str(),
        "--principal-header",
        "x-user",
    ];
    let (_a, a) = spawn_example("cart", &args, &env);
    let (_b, b) = spawn_example("cart", &args, &env);
    let opened = cart_call(a, "alice", "open_cart", json!({}));
    let cart = opened["structuredContent"]["cart"]
        .as_str()
        .unwrap_or_else(|| panic!("no handle: {opened}"))
        .to_owned();
    let calls: Vec<_> = (0..100)
        .map(|i| {
            let (addr, cart) = (if i % 2 == 0 { a } else { b }, cart.clone());
            std::thread::spawn(move || {
                let args = json!({"cart": cart, "item": format!("item-{i}")});
                let r = cart_call(addr, "alice", "add_item", args);
                assert_ne!(r["isError"], true, "{r}");
                r["content"][0]["text"]
                    .as_str()
                    .and_then(|t| t.parse::<usize>().ok())
                    .unwrap_or_else(|| panic!("not a count: {r}"))
            })
        })
        .collect();
    let mut counts: Vec<usize> = calls
        .into_iter()
        .map(|c| c.join().expect("a call thread"))
        .collect();
    counts.sort_unstable();
    // Each update saw a different length: none was overwritten.
    assert_eq!(counts, (1..=100).collect::<Vec<_>>());
    for addr in [a, b] {
        let shown = cart_call(addr, "alice", "show_cart", json!({"cart": cart}));
        let mut items: Vec<String> = shown["structuredContent"]["items"]
            .as_array()
            .unwrap_or_else(|| panic!("no items: {shown}"))
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        items.sort();
        let mut all: Vec<String> = (0..100).map(|i| format!("item-{i}")).collect();
        all.sort();
        assert_eq!(items, all);
        // Another principal, on either replica: unknown, never shown.
        let other = cart_call(addr, "mallory", "show_cart", json!({"cart": cart}));
        assert_eq!(other["isError"], true, "{other}");
        assert_eq!(
            other["structuredContent"]["code"], "HANDLE_UNKNOWN",
            "{other}"
        );
    }
    t.passed();
}
