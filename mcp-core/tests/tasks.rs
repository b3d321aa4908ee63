//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on
//! 2026-07-28 requests: a `tools/call` answered with a task, `tasks/get`,
//! `tasks/update`, `tasks/cancel`, the errors, isolation between
//! principals, TTLs and bounds, status notifications on a listen naming
//! the task (`notifications/tasks`). Time is paused: sleeps in tools advance
//! the clock instantly, nothing depends on real timing.

mod common;
use common::guard;
use common::tasks::*;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_core::storage::Storage;
use mcp_core::tasks::{InMemoryTaskStore, TaskLimits, TaskSupport, TASKS_EXTENSION};
use mcp_core::{
    context::InputRequest, protocol::ErrorObject, transport::CallContext, InvokeContext, McpServer,
    McpToolDef,
};
use serde_json::json;

fn required() -> McpToolDef {
    McpToolDef::new(
        "required_job",
        "Always a task",
        json!({"type": "object"}),
        |_args, _ctx: InvokeContext| async move { "done" },
    )
    .with_task_support(TaskSupport::Required)
}

fn panicking() -> McpToolDef {
    McpToolDef::new(
        "boom",
        "Panics after a while",
        json!({"type": "object"}),
        |_args, _ctx: InvokeContext| async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            if true {
                panic!("secret panic text");
            }
            "unreachable"
        },
    )
    .with_task_support(TaskSupport::Optional)
}

fn failing() -> McpToolDef {
    McpToolDef::new(
        "protocol_fail",
        "Ends with a protocol error",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            ctx.fail(ErrorObject::internal("broken")).await;
            "unreachable"
        },
    )
    .with_task_support(TaskSupport::Optional)
}

fn server_with(limits: TaskLimits) -> (McpServer, Arc<AtomicBool>) {
    let cancelled = Arc::new(AtomicBool::new(false));
    let server = McpServer::builder()
        .server_info("tasks-test", "1.0.0")
        .storage(Storage::memory().with_tasks(InMemoryTaskStore::new(100)))
        .task_limits(limits)
        .tool(slow(Arc::clone(&cancelled)))
        .tool(asker())
        .tool(required())
        .tool(panicking())
        .tool(failing())
        .tool(McpToolDef::new(
            "plain",
            "Never a task",
            json!({"type": "object"}),
            |_a, _c: InvokeContext| async move { "plain" },
        ))
        .build()
        .expect("valid server");
    (server, cancelled)
}

fn server() -> (McpServer, Arc<AtomicBool>) {
    server_with(TaskLimits::default())
}

#[tokio::test(start_paused = true)]
async fn discover_advertises_the_extension() {
    let (server, _) = server();
    let reply = send(
        &server,
        &CallContext::new(),
        mreq(1, "server/discover", json!({}), json!({})),
    )
    .await;
    let caps = &result(&reply)["capabilities"];
    assert_eq!(caps["extensions"][TASKS_EXTENSION], json!({}), "{caps}");
    assert!(caps.get("tasks").is_none(), "{caps}");
}

#[tokio::test(start_paused = true)]
async fn a_task_tool_returns_a_flat_task_and_completes_with_its_result() {
    let (server, _) = server();
    let ctx = CallContext::new();
    let reply = call(&server, &ctx, "slow", json!({"seconds": 3})).await;
    let created = result(&reply);
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working");
    assert!(created.get("task").is_none() && created.get("result").is_none());
    assert!(created.get("requestState").is_none());
    assert_eq!(created["ttlMs"], TaskLimits::DEFAULT.ttl_ms);
    assert_eq!(
        created["pollIntervalMs"],
        TaskLimits::DEFAULT.poll_interval_ms
    );
    assert!(created["createdAt"]
        .as_str()
        .is_some_and(|t| t.ends_with('Z')));
    let task_id = created["taskId"].as_str().expect("taskId").to_owned();

    // Durable at once: the very next tasks/get finds it.
    let working = get(&server, &ctx, &task_id).await;
    assert_eq!(working["taskId"], task_id.as_str());
    assert_eq!(working["status"], "working");
    assert_eq!(working["resultType"], "complete");
    assert!(working.get("result").is_none());

    let done = wait_until(&server, &ctx, &task_id, terminal).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "slept 3", "{done}");
    assert_eq!(
        done["statusMessage"], "3/3",
        "progress lands in statusMessage"
    );
}

#[tokio::test(start_paused = true)]
async fn an_immediate_result_of_an_optional_tool_is_answered_in_place() {
    let (server, _) = server();
    let reply = call(&server, &CallContext::new(), "slow", json!({"seconds": 0})).await;
    let r = result(&reply);
    assert_eq!(r["resultType"], "complete", "{r}");
    assert_eq!(r["content"][0]["text"], "slept 0");
    assert!(r.get("taskId").is_none());

    // A required tool that finishes at once is still a (completed) task.
    let reply = call(&server, &CallContext::new(), "required_job", json!({})).await;
    let r = result(&reply);
    assert_eq!(r["resultType"], "task", "{r}");
    let task = get(
        &server,
        &CallContext::new(),
        r["taskId"].as_str().expect("id"),
    )
    .await;
    assert_eq!(task["status"], "completed");
    assert_eq!(task["result"]["content"][0]["text"], "done");
}

#[tokio::test(start_paused = true)]
async fn without_the_extension_optional_runs_in_place_and_required_is_32021() {
    let (server, _) = server();
    let ctx = CallContext::new();
    let params = json!({"name": "slow", "arguments": {"seconds": 1}});
    let reply = send(&server, &ctx, mreq(1, "tools/call", params, json!({}))).await;
    let r = result(&reply);
    assert_eq!(r["content"][0]["text"], "slept 1", "{r}");
    assert!(r.get("taskId").is_none());

    let params = json!({"name": "required_job", "arguments": {}});
    let reply = send(&server, &ctx, mreq(1, "tools/call", params, json!({}))).await;
    let e = error(&reply);
    assert_eq!(e["code"], -32021, "{e}");
    assert_eq!(
        e["data"]["requiredCapabilities"]["extensions"][TASKS_EXTENSION],
        json!({}),
        "{e}"
    );

    // A legacy `task` hint does not make a plain tool a task.
    let params = json!({"name": "plain", "arguments": {}, "task": {"ttl": 1000}});
    let reply = send(&server, &ctx, mreq(1, "tools/call", params, task_caps())).await;
    assert_eq!(result(&reply)["content"][0]["text"], "plain");
}

#[tokio::test(start_paused = true)]
async fn tasks_methods_need_the_extension_and_a_known_id() {
    let (server, _) = server();
    let ctx = CallContext::new();
    for (method, params) in [
        ("tasks/get", json!({"taskId": "x"})),
        ("tasks/update", json!({"taskId": "x", "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": "x"})),
    ] {
        let reply = send(&server, &ctx, mreq(3, method, params.clone(), json!({}))).await;
        assert_eq!(error(&reply)["code"], -32021, "{method}: {reply}");
        let reply = task_op(&server, &ctx, method, params).await;
        assert_eq!(error(&reply)["code"], -32602, "{method}: {reply}");
    }
    for removed in ["tasks/result", "tasks/list"] {
        let reply = task_op(&server, &ctx, removed, json!({"taskId": "x"})).await;
        assert_eq!(error(&reply)["code"], -32601, "{removed}: {reply}");
    }
    let reply = task_op(&server, &ctx, "tasks/get", json!({"taskId": 7})).await;
    assert_eq!(error(&reply)["code"], -32602);
    let long = "x".repeat(TaskLimits::DEFAULT.max_task_id_bytes + 1);
    let reply = task_op(&server, &ctx, "tasks/get", json!({"taskId": long})).await;
    assert_eq!(error(&reply)["code"], -32602);
}

#[tokio::test(start_paused = true)]
async fn questions_in_a_task_wait_for_tasks_update_and_partial_answers_keep_it_waiting() {
    let (server, _) = server();
    let ctx = CallContext::new();
    let reply = call(&server, &ctx, "asker", json!({})).await;
    let task_id = result(&reply)["taskId"].as_str().expect("task").to_owned();
    let waiting = wait_until(&server, &ctx, &task_id, |t| t["status"] == "input_required").await;
    let requests = waiting["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 2, "{waiting}");
    assert_eq!(requests["a"]["method"], "elicitation/create");

    let answer = |v: i64| json!({"action": "accept", "content": {"v": v}});
    let ack = task_op(
        &server,
        &ctx,
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": {"a": answer(1), "nobody-asked": answer(9)}}),
    )
    .await;
    let ack = result(&ack);
    assert_eq!(ack["resultType"], "complete", "{ack}");
    assert!(ack.get("taskId").is_none() && ack.get("status").is_none());
    let partial = get(&server, &ctx, &task_id).await;
    assert_eq!(partial["status"], "input_required", "{partial}");
    let pending: Vec<&String> = partial["inputRequests"]
        .as_object()
        .expect("map")
        .keys()
        .collect();
    assert_eq!(pending, ["b"], "{partial}");

    task_op(
        &server,
        &ctx,
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": {"b": answer(2)}}),
    )
    .await;
    let done = wait_until(&server, &ctx, &task_id, terminal).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "a=1 b=2");
}

#[tokio::test(start_paused = true)]
async fn cancel_stops_the_tool_and_is_idempotent() {
    let (server, cancelled) = server();
    let ctx = CallContext::new();
    let reply = call(&server, &ctx, "slow", json!({"seconds": 60})).await;
    let task_id = result(&reply)["taskId"].as_str().expect("task").to_owned();
    for _ in 0..2 {
        let ack = task_op(&server, &ctx, "tasks/cancel", json!({"taskId": task_id})).await;
        let ack = result(&ack);
        assert_eq!(ack["resultType"], "complete", "{ack}");
        assert!(ack.get("status").is_none(), "{ack}");
    }
    let task = get(&server, &ctx, &task_id).await;
    assert_eq!(task["status"], "cancelled", "{task}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        cancelled.load(Ordering::SeqCst),
        "the tool saw its cancellation"
    );
    let task = get(&server, &ctx, &task_id).await;
    assert_eq!(
        task["status"], "cancelled",
        "a late result does not change it"
    );
}

#[tokio::test(start_paused = true)]
async fn a_panic_or_protocol_error_fails_the_task_alone() {
    let (server, _) = server();
    let ctx = CallContext::new();
    let reply = call(&server, &ctx, "boom", json!({})).await;
    let task_id = result(&reply)["taskId"].as_str().expect("task").to_owned();
    let failed = wait_until(&server, &ctx, &task_id, terminal).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(failed.get("result").is_none());
    common::assert_panic_error(&failed["error"], "secret panic text");

    let reply = call(&server, &ctx, "protocol_fail", json!({})).await;
    let task_id = result(&reply)["taskId"].as_str().expect("task").to_owned();
    let failed = wait_until(&server, &ctx, &task_id, terminal).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["message"], "broken");

    // The server goes on serving.
    let reply = call(&server, &ctx, "plain", json!({})).await;
    assert_eq!(result(&reply)["content"][0]["text"], "plain");
}

#[tokio::test(start_paused = true)]
async fn tasks_of_another_principal_are_invisible() {
    let (server, _) = server();
    let alice = CallContext::new().with_principal("alice");
    let bob = CallContext::new().with_principal("bob");
    let reply = call(&server, &alice, "slow", json!({"seconds": 60})).await;
    let task_id = result(&reply)["taskId"].as_str().expect("task").to_owned();
    for (method, params) in [
        ("tasks/get", json!({"taskId": task_id})),
        (
            "tasks/update",
            json!({"taskId": task_id, "inputResponses": {}}),
        ),
        ("tasks/cancel", json!({"taskId": task_id})),
    ] {
        let reply = task_op(&server, &bob, method, params).await;
        assert_eq!(error(&reply)["code"], -32602, "{method}: {reply}");
        let reply = task_op(
            &server,
            &CallContext::new(),
            "tasks/get",
            json!({"taskId": task_id}),
        )
        .await;
        assert_eq!(error(&reply)["code"], -32602, "anonymous: {reply}");
    }
    assert_eq!(get(&server, &alice, &task_id).await["status"], "working");
}

#[tokio::test(start_paused = true)]
async fn tasks_expire_after_their_ttl_and_running_tasks_are_bounded() {
    let limits = TaskLimits {
        ttl_ms: 5_000,
        max_running_per_principal: 2,
        max_input_bytes: 64,
        ..TaskLimits::default()
    };
    let (server, _) = server_with(limits);
    let ctx = CallContext::new();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let reply = call(&server, &ctx, "slow", json!({"seconds": 60})).await;
        ids.push(result(&reply)["taskId"].as_str().expect("task").to_owned());
    }
    let reply = call(&server, &ctx, "slow", json!({"seconds": 60})).await;
    assert_eq!(error(&reply)["code"], -32000, "{reply}");
    // Another principal has its own allowance.
    let other = CallContext::new().with_principal("other");
    let reply = call(&server, &other, "slow", json!({"seconds": 60})).await;
    assert_eq!(result(&reply)["resultType"], "task");

    let big = json!({"taskId": ids[0], "inputResponses": {"k": {"v": "x".repeat(100)}}});
    let reply = task_op(&server, &ctx, "tasks/update", big).await;
    assert_eq!(error(&reply)["code"], -32602, "{reply}");

    tokio::time::sleep(Duration::from_millis(4_000)).await;
    assert_eq!(get(&server, &ctx, &ids[0]).await["status"], "working");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let reply = task_op(&server, &ctx, "tasks/get", json!({"taskId": ids[0]})).await;
    assert_eq!(error(&reply)["code"], -32602, "expired: {reply}");
    // Expired tasks no longer count against the principal.
    let reply = call(&server, &ctx, "slow", json!({"seconds": 60})).await;
    assert_eq!(result(&reply)["resultType"], "task", "{reply}");
}

#[tokio::test(start_paused = true)]
async fn input_gathered_by_round_trip_before_the_task_reaches_the_task() {
    let tool = McpToolDef::new(
        "greet_later",
        "Asks a name, then works",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            let form = json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {}}});
            let answers = ctx
                .input(vec![InputRequest::elicit("user_name", form)])
                .await
                .unwrap_or_default();
            tokio::time::sleep(Duration::from_millis(10)).await;
            format!("Hello, {}", answers["user_name"]["content"]["name"])
        },
    )
    .with_task_support(TaskSupport::Required);
    let server = McpServer::builder()
        .server_info("t", "1")
        .tool(tool)
        .build()
        .expect("valid server");
    let ctx = CallContext::new();
    let reply = call(&server, &ctx, "greet_later", json!({})).await;
    let round1 = result(&reply);
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    assert!(round1.get("taskId").is_none());
    let mut params = json!({
        "name": "greet_later",
        "arguments": {},
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}},
    });
    if let Some(state) = round1.get("requestState") {
        params["requestState"] = state.clone();
    }
    let reply = send(&server, &ctx, mreq(4, "tools/call", params, task_caps())).await;
    let round2 = result(&reply);
    assert_eq!(round2["resultType"], "task", "{round2}");
    assert!(round2.get("requestState").is_none() && round2.get("inputRequests").is_none());
    let task_id = round2["taskId"].as_str().expect("task").to_owned();
    let done = wait_until(&server, &ctx, &task_id, terminal).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, \"Alice\"",
        "{done}"
    );
}

/// Records what the server sends on a connection.
struct Recorder(tokio::sync::mpsc::UnboundedSender<serde_json::Value>);

#[async_trait::async_trait]
impl mcp_core::context::Outbound for Recorder {
    async fn send(&self, message: serde_json::Value) -> bool {
        self.0.send(message).is_ok()
    }
}

#[tokio::test(start_paused = true)]
async fn a_listen_naming_own_tasks_hears_their_status_changes() {
    let (server, _) = server();
    let ctx = CallContext::new();
    let reply = call(&server, &ctx, "asker", json!({})).await;
    let task_id = result(&reply)["taskId"].as_str().expect("task").to_owned();
    wait_until(&server, &ctx, &task_id, |t| t["status"] == "input_required").await;

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let session = mcp_core::transport::Session::new();
    let listener = CallContext::new()
        .with_session(session.clone())
        .with_outbound(Arc::new(Recorder(tx)));
    let listen = mreq(
        9,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [task_id, "not-a-task"]}}),
        task_caps(),
    );
    let running = {
        let server = server.clone();
        tokio::spawn(async move { server.handle_message(listen, &listener).await })
    };
    let ack = guard("the ack", rx.recv()).await.expect("ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"taskIds": [task_id]})
    );

    let answers = json!({
        "a": {"action": "accept", "content": {"v": 1}},
        "b": {"action": "accept", "content": {"v": 2}},
    });
    task_op(
        &server,
        &ctx,
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": answers}),
    )
    .await;
    let mut statuses = Vec::new();
    while statuses.last().map(String::as_str) != Some("completed") {
        let note = guard("a task notification", rx.recv()).await.expect("note");
        assert_eq!(note["method"], "notifications/tasks", "{note}");
        assert_eq!(note["params"]["taskId"], task_id.as_str());
        assert_eq!(
            note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            9
        );
        if note["params"]["status"] == "completed" {
            assert_eq!(note["params"]["result"]["content"][0]["text"], "a=1 b=2");
        }
        statuses.push(
            note["params"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    assert_eq!(
        statuses.first().map(String::as_str),
        Some("working"),
        "{statuses:?}"
    );
    session.close();
    guard("the listen to end", running).await.expect("joined");

    // Another principal's listen is not told of this task.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let other = CallContext::new()
        .with_principal("mallory")
        .with_session(mcp_core::transport::Session::new())
        .with_outbound(Arc::new(Recorder(tx)));
    let listen = mreq(
        10,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [task_id]}}),
        task_caps(),
    );
    let server2 = server.clone();
    let _held = tokio::spawn(async move { server2.handle_message(listen, &other).await });
    let ack = guard("the ack", rx.recv()).await.expect("ack");
    assert_eq!(ack["params"]["notifications"], json!({}), "{ack}");
}
