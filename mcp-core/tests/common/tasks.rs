//! Helpers of the tasks tests (`tests/tasks.rs`, `tests/tasks_shared.rs`):
//! 2026-07-28 requests that declare the tasks extension, two tools, and
//! polling a task under paused time.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_core::tasks::{TaskSupport, TASKS_EXTENSION};
use mcp_core::{
    context::InputRequest, transport::CallContext, InvokeContext, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};

use super::guard;

pub const PV: &str = "io.modelcontextprotocol/protocolVersion";
pub const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

pub fn task_caps() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}})
}

/// A 2026-07-28 request with `caps` as its client capabilities.
pub fn mreq(id: u64, method: &str, mut params: Value, caps: Value) -> Value {
    params["_meta"] = json!({PV: "2026-07-28", CAPS: caps});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub async fn send(server: &McpServer, ctx: &CallContext, message: Value) -> Value {
    let shown = message.to_string();
    guard(&shown, server.handle_message(message, ctx))
        .await
        .unwrap_or_else(|| panic!("no reply to {shown}"))
}

#[track_caller]
pub fn result(reply: &Value) -> &Value {
    assert!(reply.get("error").is_none(), "unexpected error: {reply}");
    &reply["result"]
}

#[track_caller]
pub fn error(reply: &Value) -> &Value {
    assert!(reply.get("result").is_none(), "expected an error: {reply}");
    &reply["error"]
}

/// Sleeps `seconds`, reporting progress; records a cancellation it saw.
pub fn slow(cancelled: Arc<AtomicBool>) -> McpToolDef {
    McpToolDef::new(
        "slow",
        "Sleeps",
        json!({"type": "object"}),
        move |args: Map<String, Value>, ctx: InvokeContext| {
            let cancelled = Arc::clone(&cancelled);
            async move {
                let seconds = args.get("seconds").and_then(Value::as_u64).unwrap_or(0);
                for i in 0..seconds {
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                        () = ctx.cancelled() => {
                            cancelled.store(true, Ordering::SeqCst);
                            return "cancelled".to_owned();
                        }
                    }
                    ctx.report_progress((i + 1) as f64, Some(seconds as f64), None)
                        .await;
                }
                format!("slept {seconds}")
            }
        },
    )
    .with_task_support(TaskSupport::Optional)
}

pub fn asker() -> McpToolDef {
    McpToolDef::new(
        "asker",
        "Asks two questions after a while",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let form =
                json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}}});
            match ctx
                .input(vec![
                    InputRequest::elicit("a", form.clone()),
                    InputRequest::elicit("b", form),
                ])
                .await
            {
                Ok(answers) => format!(
                    "a={} b={}",
                    answers["a"]["content"]["v"], answers["b"]["content"]["v"]
                ),
                Err(e) => format!("error {e}"),
            }
        },
    )
    .with_task_support(TaskSupport::Optional)
}

pub async fn call(server: &McpServer, ctx: &CallContext, name: &str, args: Value) -> Value {
    let params = json!({"name": name, "arguments": args});
    send(server, ctx, mreq(1, "tools/call", params, task_caps())).await
}

pub async fn task_op(server: &McpServer, ctx: &CallContext, method: &str, params: Value) -> Value {
    send(server, ctx, mreq(2, method, params, task_caps())).await
}

pub async fn get(server: &McpServer, ctx: &CallContext, task_id: &str) -> Value {
    let reply = task_op(server, ctx, "tasks/get", json!({"taskId": task_id})).await;
    result(&reply).clone()
}

/// Polls `tasks/get` (advancing paused time) until `done` holds.
pub async fn wait_until(
    server: &McpServer,
    ctx: &CallContext,
    task_id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    for _ in 0..200 {
        let task = get(server, ctx, task_id).await;
        if done(&task) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("task {task_id} never reached the awaited state");
}

pub fn terminal(task: &Value) -> bool {
    matches!(
        task["status"].as_str(),
        Some("completed" | "failed" | "cancelled")
    )
}
