//! Notices across servers linked by a notification bus ([`InProcessBus`],
//! the same wiring a Redis bus uses), and task leases on a shared store:
//! - a resource update made on one server reaches the subscribers of the
//!   other, once, and not back to the first; without a bus nothing crosses;
//! - a listen on one server watching a task hears its changes made by the
//!   other;
//! - a task on a shared store whose process never renews its lease is
//!   `failed` once the lease lapses; one whose process lives stays
//!   `working`.

mod common;
use common::tasks::*;
use common::{guard, req};

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use mcp_core::storage::{InProcessBus, Storage};
use mcp_core::tasks::{FileTaskStore, TaskLimits};
use mcp_core::{
    context::Outbound,
    transport::{CallContext, Session},
    McpResourceDef, McpServer,
};
use serde_json::{json, Value};
use tokio::sync::mpsc;

const WATCHED: &str = "test://watched";

/// An outbound channel that records what it is sent.
struct Recorder(mpsc::UnboundedSender<Value>);

#[async_trait]
impl Outbound for Recorder {
    async fn send(&self, message: Value) -> bool {
        self.0.send(message).is_ok()
    }
}

fn watched_server(bus: Option<InProcessBus>) -> McpServer {
    let mut builder = McpServer::builder()
        .server_info("fanout", "1")
        .resource_subscriptions()
        .resource(McpResourceDef::new(
            WATCHED,
            "watched",
            |_req, _ctx| async { "content" },
        ));
    if let Some(bus) = bus {
        builder = builder.storage(Storage::memory().with_notices(bus));
    }
    builder.build().expect("valid server")
}

/// A legacy session subscribed to [`WATCHED`]; what it is sent.
async fn subscriber(server: &McpServer) -> mpsc::UnboundedReceiver<Value> {
    let (tx, rx) = mpsc::unbounded_channel();
    let ctx = CallContext::new()
        .with_session(Session::new())
        .with_outbound(Arc::new(Recorder(tx)));
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let reply = send(server, &ctx, req(0, "initialize", init)).await;
    result(&reply);
    let reply = send(
        server,
        &ctx,
        req(1, "resources/subscribe", json!({"uri": WATCHED})),
    )
    .await;
    result(&reply);
    rx
}

/// The next notification of `method`, skipping others.
async fn next_of(rx: &mut mpsc::UnboundedReceiver<Value>, method: &str) -> Value {
    loop {
        let message = guard(method, rx.recv()).await.expect("an open channel");
        if message["method"] == method {
            return message;
        }
    }
}

#[tokio::test]
async fn a_resource_update_on_one_server_reaches_the_subscribers_of_another_once() {
    let hub = InProcessBus::new();
    let (a, b) = (
        watched_server(Some(hub.join())),
        watched_server(Some(hub.join())),
    );
    let mut on_a = subscriber(&a).await;
    let mut on_b = subscriber(&b).await;
    // Counted here: A's own subscriber only.
    assert_eq!(a.notify_resource_updated(WATCHED).await, 1);
    let note = next_of(&mut on_b, "notifications/resources/updated").await;
    assert_eq!(note["params"]["uri"], WATCHED);
    let note = next_of(&mut on_a, "notifications/resources/updated").await;
    assert_eq!(note["params"]["uri"], WATCHED);
    // A later update from B: each hears exactly one more (nothing echoes).
    assert_eq!(b.notify_resource_updated(WATCHED).await, 1);
    next_of(&mut on_a, "notifications/resources/updated").await;
    next_of(&mut on_b, "notifications/resources/updated").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(on_a.try_recv().is_err(), "an echo reached A");
    assert!(on_b.try_recv().is_err(), "an echo reached B");
}

#[tokio::test]
async fn without_a_bus_nothing_crosses() {
    let hub = InProcessBus::new();
    let a = watched_server(None);
    let b = watched_server(Some(hub.join()));
    let mut on_b = subscriber(&b).await;
    assert_eq!(a.notify_resource_updated(WATCHED).await, 0);
    // B hears its own updates only.
    assert_eq!(b.notify_resource_updated("test://other").await, 0);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(on_b.try_recv().is_err());
}

fn task_server(dir: &std::path::Path, limits: TaskLimits, bus: Option<InProcessBus>) -> McpServer {
    let mut storage = Storage::memory().with_tasks(FileTaskStore::new(dir, 100).expect("task dir"));
    if let Some(bus) = bus {
        storage = storage.with_notices(bus);
    }
    McpServer::builder()
        .server_info("shared", "1")
        .storage(storage)
        .task_limits(limits)
        .tool(slow(Arc::new(AtomicBool::new(false))))
        .build()
        .expect("valid server")
}

fn task_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn a_listen_on_one_server_hears_a_task_run_by_another() {
    let dir = task_dir("fanout-task-listen");
    let limits = TaskLimits {
        poll_interval_ms: 50,
        ..TaskLimits::default()
    };
    let hub = InProcessBus::new();
    let runner = task_server(&dir, limits, Some(hub.join()));
    let watcher = task_server(&dir, limits, Some(hub.join()));
    let ctx = CallContext::new().with_principal("dana");
    let reply = call(&runner, &ctx, "slow", json!({"seconds": 1})).await;
    let task_id = result(&reply)["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let listen_ctx = CallContext::new()
        .with_principal("dana")
        .with_session(Session::new())
        .with_outbound(Arc::new(Recorder(tx)));
    let listen = mreq(
        7,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [task_id]}}),
        task_caps(),
    );
    let held = tokio::spawn(async move { watcher.handle_message(listen, &listen_ctx).await });
    let ack = next_of(&mut rx, "notifications/subscriptions/acknowledged").await;
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([task_id]));
    // The runner's changes (progress, then the result) reach the watcher's listen.
    loop {
        let note = next_of(&mut rx, "notifications/tasks").await;
        assert_eq!(note["params"]["taskId"], task_id.as_str());
        if note["params"]["status"] == "completed" {
            break;
        }
    }
    held.abort();
}

#[tokio::test]
async fn a_task_whose_process_stopped_renewing_its_lease_fails() {
    let dir = task_dir("fanout-lease-lapsed");
    let limits = TaskLimits {
        poll_interval_ms: 20,
        lease_ms: 150,
        ..TaskLimits::default()
    };
    // The front stores tasks and hands them to a spawner that never runs
    // them: as if the process started for the task died at once.
    let front = McpServer::builder()
        .server_info("front", "1")
        .storage(Storage::memory().with_tasks(FileTaskStore::new(&dir, 100).expect("task dir")))
        .task_limits(limits)
        .tool(slow(Arc::new(AtomicBool::new(false))))
        .task_spawner(|_| {})
        .build()
        .expect("valid server");
    let ctx = CallContext::new().with_principal("erin");
    let reply = call(&front, &ctx, "slow", json!({"seconds": 60})).await;
    let task_id = result(&reply)["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let task = wait_until(&front, &ctx, &task_id, terminal).await;
    assert_eq!(task["status"], "failed", "{task}");
    let why = task["error"]["message"].as_str().unwrap_or_default();
    assert!(why.contains("stopped"), "{task}");
}

#[tokio::test]
async fn a_task_whose_process_lives_keeps_its_lease() {
    let dir = task_dir("fanout-lease-kept");
    // A lease long enough that a loaded machine (tests run in parallel)
    // still renews it in time, short enough that the call outlives three.
    let limits = TaskLimits {
        poll_interval_ms: 20,
        lease_ms: 600,
        ..TaskLimits::default()
    };
    let server = task_server(&dir, limits, None);
    let ctx = CallContext::new().with_principal("finn");
    let reply = call(&server, &ctx, "slow", json!({"seconds": 2})).await;
    let task_id = result(&reply)["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    // Several leases long: renewed, so it runs to its end.
    let task = wait_until(&server, &ctx, &task_id, terminal).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["content"][0]["text"], "slept 2");
}

#[tokio::test]
async fn a_tool_catalog_change_on_one_server_reaches_a_listen_on_another() {
    let hub = InProcessBus::new();
    let live = |bus: InProcessBus| {
        McpServer::builder()
            .server_info("live", "1")
            .live_tools()
            .storage(Storage::memory().with_notices(bus))
            .build()
            .expect("valid server")
    };
    let (a, b) = (live(hub.join()), live(hub.join()));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ctx = CallContext::new()
        .with_session(Session::new())
        .with_outbound(Arc::new(Recorder(tx)));
    let listen = mreq(
        3,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        json!({}),
    );
    let held = tokio::spawn(async move { b.handle_message(listen, &ctx).await });
    let ack = next_of(&mut rx, "notifications/subscriptions/acknowledged").await;
    assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true);
    let tool = mcp_core::McpToolDef::new(
        "late",
        "Added late",
        json!({"type": "object"}),
        |_args, _ctx| async { "late" },
    );
    // Nobody listens on A itself.
    assert_eq!(a.add_tool(tool).await.expect("added"), 0);
    let note = next_of(&mut rx, "notifications/tools/list_changed").await;
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        3
    );
    held.abort();
}
