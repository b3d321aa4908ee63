//! A `tools/call` run as a task. The handler is polled once inside the
//! call, with questions still answered by round trip (a tool may gather
//! input first, SEP-2322, and become a task on the final round):
//! - it asked a question: the call ends `input_required`, no task;
//! - it finished (a tool with optional task support): the result is the
//!   answer, no task;
//! - otherwise the task is stored (durably: `tasks/get` finds it once the
//!   `CreateTaskResult` is sent) and the handler runs on in a runner of
//!   its own, whose outcome settles the task.

use crate::server::round_trip::Invoke;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use serde_json::{Map, Value};

use super::engine::{store_error, Resume, Running, TaskEngine};
use super::requester::{TaskLink, TaskRequester};
use super::wire;
use crate::context::interrupt::{Channel, Interrupt, Interruption};
use crate::context::{Extensions, Progress, ProgressUpdate};
use crate::handler::tool::McpToolDef;
use crate::handler::BoxFuture;
use crate::panic::{catch_panic, panic_error, CatchPanic};
use crate::protocol::{CallToolResult, ErrorObject};
use crate::server::outcome::{Answer, Stop};
use crate::server::request_facts::RequestFacts;
use crate::storage::TaskChange;
use crate::tasks::time::now_ms;
use crate::tasks::{TaskRecord, TaskSupport};

type Work = CatchPanic<BoxFuture<CallToolResult>>;

/// Runs `tool` for a request that declared the tasks extension.
pub(crate) async fn call(
    invoke: Invoke<'_>,
    engine: &Arc<TaskEngine>,
    facts: &RequestFacts,
    (name, tool, args): (String, &McpToolDef, Map<String, Value>),
    params: Map<String, Value>,
    ext: Extensions,
) -> Result<Answer, Stop> {
    let resume = ext.get::<Resume>().map(|r| r.0.clone());
    // Kept for another process to run the call, when one will.
    let request = (engine.spawner.is_some() && resume.is_none()).then(|| {
        let mut request = params.clone();
        request.insert("name".into(), Value::String(name.clone()));
        request.insert("arguments".into(), Value::Object(args.clone()));
        if let Some(meta) = meta_of(&facts.era) {
            request.insert("_meta".into(), meta);
        }
        Value::Object(request)
    });
    let round = invoke.round_trip(facts, &name, &args, &params, tool.may_ask())?;
    let mut ctx = invoke.context(facts, &params, &round, ext)?;
    let task_id = resume.clone().unwrap_or_else(new_task_id);
    let running = engine.admit(&task_id, facts.ctx.principal.clone())?;
    // The task outlives the request: its own token, its own requester.
    ctx.cancel = running.token.clone();
    let requester = Arc::new(TaskRequester::new(Arc::clone(&round.interrupt)));
    let parts = ctx.parts_mut();
    parts.channel = Channel::Custom(requester.clone());
    parts.progress = Some(progress_sink(engine, &task_id));
    let mut work = catch_panic(tool.invoke(args, ctx));
    if let Some(task_id) = resume {
        // Resumed here (`McpServer::run_task`): the task exists already.
        let _ = requester.link.set(TaskLink {
            engine: Arc::clone(engine),
            task_id: task_id.clone(),
            running: running.clone(),
        });
        let deadline = deadline_of(engine, &task_id).await;
        run(
            Arc::clone(engine),
            task_id,
            work,
            Arc::clone(&round.interrupt),
            running,
            deadline,
        )
        .await;
        return Ok(Answer::Json(Value::Object(Map::new())));
    }
    let first = std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut work).poll(cx))).await;
    if let Some(why) = round.interrupt.try_take() {
        engine.forget(&task_id);
        return Err(round.interrupted(why));
    }
    if let (Poll::Ready(done), TaskSupport::Optional) = (&first, tool.task_support()) {
        engine.forget(&task_id);
        let result = done.clone().map_err(panic_error)?;
        return Ok(Answer::Tool(result));
    }
    let now = now_ms();
    let mut record = TaskRecord::new(
        task_id.clone(),
        facts.ctx.principal.as_deref().map(str::to_owned),
        now,
    );
    record.ttl_ms = Some(engine.limits.ttl_ms);
    record.poll_interval_ms = Some(engine.limits.poll_interval_ms);
    record.request = request;
    record.lease_until_ms = engine.lease_from(now);
    if let Err(e) = engine.store.create(record.clone()).await {
        engine.forget(&task_id);
        return Err(store_error(&e).into());
    }
    let mut answer = wire::create_result(&record);
    invoke.lifecycle.decorate(&mut answer);
    match first {
        Poll::Ready(done) => {
            settle(engine, &task_id, outcome_change(done)).await;
            engine.forget(&task_id);
        }
        Poll::Pending if engine.spawner.is_some() => {
            drop(work);
            engine.forget(&task_id);
            if let Some(spawn) = &engine.spawner {
                spawn(&task_id);
            }
        }
        Poll::Pending => {
            let _ = requester.link.set(TaskLink {
                engine: Arc::clone(engine),
                task_id: task_id.clone(),
                running: running.clone(),
            });
            let deadline =
                tokio::time::Instant::now() + Duration::from_millis(engine.limits.ttl_ms);
            tokio::spawn(run(
                Arc::clone(engine),
                task_id,
                work,
                Arc::clone(&round.interrupt),
                running,
                deadline,
            ));
        }
    }
    Ok(Answer::Json(Value::Object(answer)))
}

/// The runner: the handler against its interruptions, its cancellation
/// and its TTL; the first to end settles the task.
async fn run(
    engine: Arc<TaskEngine>,
    task_id: String,
    mut work: Work,
    interrupt: Arc<Interrupt>,
    running: Running,
    deadline: tokio::time::Instant,
) {
    let change = tokio::select! {
        biased;
        done = &mut work => Some(outcome_change(done)),
        why = interrupt.wait() => Some(match why {
            Interruption::Error(e) => TaskChange::Fail(error_json(&e)),
            Interruption::Input(_) => TaskChange::Fail(error_json(&ErrorObject::internal(
                "the task asked for input it cannot receive",
            ))),
        }),
        // `tasks/cancel` already settled it `cancelled`.
        () = running.token.cancelled() => None,
        // Expired: the store forgets it.
        () = tokio::time::sleep_until(deadline) => None,
        // Cancelled or gone in a store other processes share.
        () = ended_in_store(&engine, &task_id) => None,
        // Never ends: renews the lease of a task on a shared store.
        () = keep_lease(&engine, &task_id) => None,
    };
    // The handler is dropped before the task is settled: its cleanup runs
    // first.
    drop(work);
    if let Some(change) = change {
        settle(&engine, &task_id, change).await;
    }
    engine.forget(&task_id);
}

/// The `_meta` a modern request declared (its version, capabilities,
/// client info and log level), rebuilt for the stored request.
fn meta_of(era: &crate::protocol::Era) -> Option<Value> {
    use crate::protocol::meta::{CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION};
    let crate::protocol::Era::Modern(meta) = era else {
        return None;
    };
    let mut map = Map::new();
    map.insert(
        PROTOCOL_VERSION.into(),
        Value::String(meta.client.protocol_version.to_owned()),
    );
    map.insert(
        CLIENT_CAPABILITIES.into(),
        serde_json::to_value(&meta.client.capabilities).unwrap_or(Value::Null),
    );
    if let Some(info) = &meta.client.implementation {
        map.insert(
            CLIENT_INFO.into(),
            serde_json::to_value(info).unwrap_or(Value::Null),
        );
    }
    if let Some(level) = meta.log_level {
        map.insert(LOG_LEVEL.into(), Value::String(level.as_str().to_owned()));
    }
    Some(Value::Object(map))
}

/// Completes when the stored task is terminal or gone (a `tasks/cancel`
/// served by another process), checked at the polling interval.
async fn ended_in_store(engine: &TaskEngine, task_id: &str) {
    let poll = Duration::from_millis(engine.limits.poll_interval_ms.max(10));
    loop {
        tokio::time::sleep(poll).await;
        match engine.store.get(task_id).await {
            Ok(Some(record)) if !record.status.is_terminal() => {}
            Ok(_) => return,
            // A store that fails now may answer later: keep running.
            Err(_) => {}
        }
    }
}

/// Renews the task's lease every third of its length while the tool runs
/// (on a shared store; never completes). A renewal that fails is retried
/// at the next beat: a store that stays away long enough fails the task.
async fn keep_lease(engine: &TaskEngine, task_id: &str) {
    if !engine.store.is_shared() {
        return std::future::pending().await;
    }
    let beat = Duration::from_millis((engine.limits.lease_ms / 3).max(10));
    loop {
        tokio::time::sleep(beat).await;
        if let Some(until) = engine.lease_from(now_ms()) {
            let _ = engine.store.update(task_id, TaskChange::Lease(until)).await;
        }
    }
}

/// When a resumed task expires: its creation plus its TTL (wall clock).
async fn deadline_of(engine: &TaskEngine, task_id: &str) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    let left = match engine.store.get(task_id).await {
        Ok(Some(record)) => record.ttl_ms.map_or(engine.limits.ttl_ms, |ttl| {
            (record.created_at_ms + ttl).saturating_sub(now_ms())
        }),
        _ => 0,
    };
    now + Duration::from_millis(left)
}

/// The change a handler's end makes: `completed` with its result (a tool
/// error too), `failed` with `-32603` for a panic.
fn outcome_change(done: Result<CallToolResult, String>) -> TaskChange {
    match done {
        Ok(result) => TaskChange::Complete(serde_json::to_value(&result).unwrap_or(Value::Null)),
        Err(panic) => TaskChange::Fail(error_json(&panic_error(panic))),
    }
}

fn error_json(e: &ErrorObject) -> Value {
    serde_json::to_value(e).unwrap_or(Value::Null)
}

async fn settle(engine: &TaskEngine, task_id: &str, change: TaskChange) {
    let completes = matches!(change, TaskChange::Complete(_));
    match engine.apply(task_id, change).await {
        Ok(_) => {}
        // A result too large for the store: the task fails saying so,
        // rather than staying `working`.
        Err(e) if completes => {
            tracing::error!(task_id, error = %e.message, "could not store a task's result");
            let error =
                ErrorObject::internal(format!("the task's result was not kept: {}", e.message));
            if let Err(e) = engine
                .apply(task_id, TaskChange::Fail(error_json(&error)))
                .await
            {
                tracing::error!(task_id, error = %e.message, "could not settle a task");
            }
        }
        Err(e) => tracing::error!(task_id, error = %e.message, "could not settle a task"),
    }
}

/// Progress of a task: its `statusMessage` (the message, or `progress/total`).
fn progress_sink(engine: &Arc<TaskEngine>, task_id: &str) -> Progress {
    let engine = Arc::clone(engine);
    let task_id = task_id.to_owned();
    Progress::awaited(Arc::new(move |update: ProgressUpdate| {
        let message = update.message.unwrap_or_else(|| match update.total {
            Some(total) => format!("{}/{}", update.progress, total),
            None => format!("{}", update.progress),
        });
        let engine = Arc::clone(&engine);
        let task_id = task_id.clone();
        Box::pin(async move {
            let _ = engine.apply(&task_id, TaskChange::Message(message)).await;
        })
    }))
}

/// A fresh, unguessable task id (128 random bits, hex).
fn new_task_id() -> String {
    use std::fmt::Write as _;
    let bytes: [u8; 16] = crate::random::bytes();
    bytes.iter().fold(String::with_capacity(32), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
