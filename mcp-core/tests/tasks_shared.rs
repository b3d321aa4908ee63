//! The tasks extension across processes: two servers sharing one
//! [`FileTaskStore`] directory, as the processes of a stdio server started
//! per request (or replicas on one machine) would. A task stored by one is
//! run by the other (`McpServer::run_task`), and answered and cancelled
//! through the first. Time is paused.

mod common;
use common::guard;
use common::tasks::*;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mcp_core::storage::Storage;
use mcp_core::tasks::{FileTaskStore, TaskLimits};
use mcp_core::{transport::CallContext, McpServer};
use serde_json::{json, Map};

/// Two servers sharing one [`FileTaskStore`] directory, as two processes
/// would: `front` stores each new task and hands its id to the test (its
/// spawner), `worker` runs it with `run_task`.
fn shared_pair(
    name: &str,
) -> (
    McpServer,
    McpServer,
    tokio::sync::mpsc::UnboundedReceiver<String>,
    Arc<AtomicBool>,
) {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let limits = TaskLimits {
        poll_interval_ms: 50,
        ..TaskLimits::default()
    };
    let cancelled = Arc::new(AtomicBool::new(false));
    let build = |spawner: Option<tokio::sync::mpsc::UnboundedSender<String>>| {
        let mut builder = McpServer::builder()
            .server_info("shared", "1.0.0")
            .storage(Storage::memory().with_tasks(FileTaskStore::new(&dir, 100).expect("task dir")))
            .task_limits(limits)
            .tool(slow(Arc::clone(&cancelled)))
            .tool(asker());
        if let Some(tx) = spawner {
            builder = builder.task_spawner(move |id| {
                let _ = tx.send(id.to_owned());
            });
        }
        builder.build().expect("valid server")
    };
    (build(Some(tx)), build(None), rx, Arc::clone(&cancelled))
}

#[tokio::test(start_paused = true)]
async fn a_task_stored_by_one_server_runs_on_another_and_is_answered_through_the_first() {
    let (front, worker, mut spawned, _) = shared_pair("tasks-shared-input");
    let ctx = CallContext::new().with_principal("carol");
    let reply = call(&front, &ctx, "asker", json!({})).await;
    let task_id = result(&reply)["taskId"].as_str().expect("task").to_owned();
    let handed = guard("spawner", spawned.recv()).await.expect("an id");
    assert_eq!(handed, task_id);
    let run = tokio::spawn(async move { worker.run_task(&handed).await });

    let waiting = wait_until(&front, &ctx, &task_id, |t| t["status"] == "input_required").await;
    assert_eq!(waiting["inputRequests"].as_object().map(Map::len), Some(2));
    let answers = json!({
        "a": {"action": "accept", "content": {"v": 1}},
        "b": {"action": "accept", "content": {"v": 2}},
    });
    task_op(
        &front,
        &ctx,
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": answers}),
    )
    .await;
    let done = wait_until(&front, &ctx, &task_id, terminal).await;
    assert_eq!(done["result"]["content"][0]["text"], "a=1 b=2", "{done}");
    guard("run_task", run).await.expect("joined").expect("ran");

    // Still invisible to another principal, through either server.
    let reply = task_op(
        &front,
        &CallContext::new(),
        "tasks/get",
        json!({"taskId": task_id}),
    )
    .await;
    assert_eq!(error(&reply)["code"], -32602);
}

#[tokio::test(start_paused = true)]
async fn a_cancel_through_one_server_stops_the_tool_running_on_another() {
    let (front, worker, mut spawned, cancelled) = shared_pair("tasks-shared-cancel");
    let ctx = CallContext::new();
    let reply = call(&front, &ctx, "slow", json!({"seconds": 600})).await;
    let task_id = result(&reply)["taskId"].as_str().expect("task").to_owned();
    let handed = guard("spawner", spawned.recv()).await.expect("an id");
    let run = tokio::spawn(async move { worker.run_task(&handed).await });
    // Its progress, written by the worker, is read through the front.
    let running = wait_until(&front, &ctx, &task_id, |t| t["statusMessage"].is_string()).await;
    assert_eq!(running["status"], "working", "{running}");
    task_op(&front, &ctx, "tasks/cancel", json!({"taskId": task_id})).await;
    guard("run_task", run).await.expect("joined").expect("ran");
    assert_eq!(get(&front, &ctx, &task_id).await["status"], "cancelled");
    // The worker's runner dropped the tool (it did not see its own token).
    assert!(!cancelled.load(Ordering::SeqCst));
}
