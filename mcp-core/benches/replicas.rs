//! What sharing state across replicas costs: a task round trip (create,
//! then `tasks/get` until completed) on the in-memory store and on Redis,
//! and the latency of a resource update made on one server reaching a
//! subscriber of another through the Redis notification bus (two servers
//! in this process, each with its own pub/sub connection, as two replicas
//! would have).
//!
//! Run: `cargo bench -p mcp-core --features redis --bench replicas`, with
//! `MCP_BENCH_REDIS=redis://127.0.0.1:PORT/` for the Redis cases (a
//! Redis without persistence: `redis-server --port PORT --save ''
//! --appendonly no`). Prints the median and the 99th percentile of each.
//! CI only builds it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mcp_core::redis::RedisBackend;
use mcp_core::storage::{NotificationBus, Storage, TaskStore};
use mcp_core::tasks::{InMemoryTaskStore, TaskSupport, TASKS_EXTENSION};
use mcp_core::{
    context::Outbound,
    transport::{CallContext, Session},
    InvokeContext, McpResourceDef, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

/// A tool that yields once (so the call becomes a task), then answers.
fn quick() -> McpToolDef {
    McpToolDef::new(
        "quick",
        "Answers after one yield",
        json!({"type": "object"}),
        |_args: Map<String, Value>, _ctx: InvokeContext| async {
            tokio::task::yield_now().await;
            "done".to_owned()
        },
    )
    .with_task_support(TaskSupport::Required)
}

fn task_request(id: u64, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// One round trip: the call, then polls (no pause) until completed.
/// Returns its time and the number of polls.
async fn round_trip(server: &McpServer, ctx: &CallContext) -> (Duration, u32) {
    let start = Instant::now();
    let call = task_request(1, "tools/call", json!({"name": "quick", "arguments": {}}));
    let reply = server
        .handle_message(call, ctx)
        .await
        .unwrap_or(Value::Null);
    let task_id = reply["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut polls = 0;
    loop {
        polls += 1;
        let get = task_request(2, "tasks/get", json!({"taskId": task_id}));
        let reply = server.handle_message(get, ctx).await.unwrap_or(Value::Null);
        if reply["result"]["status"] != "working" {
            assert_eq!(reply["result"]["status"], "completed", "{reply}");
            return (start.elapsed(), polls);
        }
    }
}

fn report(name: &str, mut times: Vec<Duration>, extra: &str) {
    times.sort();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
    println!(
        "{name:<44} n={:<5} p50 {:>9.1} µs   p99 {:>9.1} µs{extra}",
        times.len(),
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6
    );
}

async fn tasks_on(name: &str, store: impl TaskStore, n: usize) {
    let server = McpServer::builder()
        .server_info("bench", "1")
        .storage(Storage::memory().with_tasks(store))
        .tool(quick())
        .build()
        .expect("valid server");
    let ctx = CallContext::new();
    for _ in 0..20 {
        round_trip(&server, &ctx).await;
    }
    let mut times = Vec::with_capacity(n);
    let mut polls = 0;
    for _ in 0..n {
        let (time, p) = round_trip(&server, &ctx).await;
        times.push(time);
        polls += p;
    }
    let extra = format!("   ({:.1} polls per trip)", f64::from(polls) / n as f64);
    report(name, times, &extra);
}

struct Recorder(mpsc::UnboundedSender<Instant>);

#[async_trait]
impl Outbound for Recorder {
    async fn send(&self, message: Value) -> bool {
        if message["method"] == "notifications/resources/updated" {
            let _ = self.0.send(Instant::now());
        }
        true
    }
}

async fn fan_out(redis: &RedisBackend, n: usize) {
    let build = |bus| {
        McpServer::builder()
            .server_info("bench", "1")
            .resource_subscriptions()
            .resource(McpResourceDef::new("bench://r", "r", |_req, _ctx| async {
                "r"
            }))
            .storage(Storage::memory().with_notices(bus))
            .build()
            .expect("valid server")
    };
    let (bus_a, bus_b) = (redis.notification_bus(), redis.notification_bus());
    tokio::join!(bus_a.ready(), bus_b.ready());
    let (a, b) = (build(bus_a), build(bus_b));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ctx = CallContext::new()
        .with_session(Session::new())
        .with_outbound(Arc::new(Recorder(tx)));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}});
    b.handle_message(init, &ctx).await;
    let sub = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "bench://r"}});
    b.handle_message(sub, &ctx).await;
    let mut times = Vec::with_capacity(n);
    for i in 0..n + 20 {
        let start = Instant::now();
        a.notify_resource_updated("bench://r").await;
        let heard = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .ok()
            .flatten()
            .expect("the update reached the other server");
        if i >= 20 {
            times.push(heard - start);
        }
    }
    report("listen fan-out A -> Redis pub/sub -> B", times, "");
}

#[tokio::main]
async fn main() {
    let n = 2000;
    tasks_on(
        "task round trip, InMemoryTaskStore",
        InMemoryTaskStore::default(),
        n,
    )
    .await;
    let Some(url) = std::env::var("MCP_BENCH_REDIS")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        println!("(set MCP_BENCH_REDIS=redis://HOST:PORT/ for the Redis cases)");
        return;
    };
    let prefix = format!("mcp-bench:{}:", std::process::id());
    let redis =
        RedisBackend::open_with(&url, &prefix, Duration::from_secs(2)).expect("a Redis URL");
    tasks_on("task round trip, RedisTaskStore", redis.task_store(), n).await;
    fan_out(&redis, n).await;
}
