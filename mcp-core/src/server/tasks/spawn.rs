//! A `tools/call` run as a task. The handler is polled once inside the
//! call, with questions still answered by round trip (a tool may gather
//! input first, SEP-2322, and become a task on the final round):
//! - it asked a question: the call ends `input_required`, no task;
//! - it finished (a tool with optional task support): the result is the
//!   answer, no task;
//! - otherwise the task is stored (durably: `tasks/get` finds it once the
//!   `CreateTaskResult` is sent) and the handler runs on in a runner of
//!   its own, whose outcome settles the task.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use serde_json::{Map, Value};

use super::engine::{store_error, Running, TaskEngine};
use super::requester::{TaskLink, TaskRequester};
use super::wire;
use crate::context::interrupt::{Channel, Interrupt, Interruption};
use crate::context::{Extensions, Progress, ProgressUpdate};
use crate::handler::tool::McpToolDef;
use crate::panic::{catch_panic, panic_error, CatchPanic};
use crate::protocol::{CallToolResult, ErrorObject};
use crate::server::outcome::{Answer, Stop};
use crate::server::scope::RequestScope;
use crate::server::McpServer;
use crate::tasks::time::now_ms;
use crate::tasks::{TaskChange, TaskRecord, TaskSupport};
use crate::BoxFuture;

type Work = CatchPanic<BoxFuture<CallToolResult>>;

/// Runs `tool` for a request that declared the tasks extension.
pub(crate) async fn call(
    server: &McpServer,
    engine: &Arc<TaskEngine>,
    scope: &RequestScope,
    (name, tool, args): (String, &McpToolDef, Map<String, Value>),
    params: Map<String, Value>,
    ext: Extensions,
) -> Result<Answer, Stop> {
    let round = server.round_trip(scope, &name, &args, &params, tool.may_ask())?;
    let mut ctx = server.invoke_context(scope, &params, &round, ext)?;
    let task_id = new_task_id();
    let running = engine.admit(&task_id, scope.ctx.principal.clone())?;
    // The task outlives the request: its own token, its own requester.
    ctx.cancel = running.token.clone();
    let requester = Arc::new(TaskRequester::new(Arc::clone(&round.interrupt)));
    ctx.channel = Channel::Custom(requester.clone());
    ctx.progress = Some(progress_sink(engine, &task_id));
    let mut work = catch_panic(tool.invoke(args, ctx));
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
        scope.ctx.principal.as_deref().map(str::to_owned),
        now,
    );
    record.ttl_ms = Some(engine.limits.ttl_ms);
    record.poll_interval_ms = Some(engine.limits.poll_interval_ms);
    if let Err(e) = engine.store.create(record.clone()).await {
        engine.forget(&task_id);
        return Err(store_error(&e).into());
    }
    let mut answer = wire::create_result(&record);
    server.decorate(&mut answer);
    match first {
        Poll::Ready(done) => {
            settle(engine, &task_id, outcome_change(done)).await;
            engine.forget(&task_id);
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
    };
    // The handler is dropped before the task is settled: its cleanup runs
    // first.
    drop(work);
    if let Some(change) = change {
        settle(&engine, &task_id, change).await;
    }
    engine.forget(&task_id);
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
    if let Err(e) = engine.store.update(task_id, change).await {
        tracing::error!(task_id, error = %e, "could not settle a task");
    }
}

/// Progress of a task: its `statusMessage` (the message, or `progress/total`).
fn progress_sink(engine: &Arc<TaskEngine>, task_id: &str) -> Progress {
    let store = Arc::clone(&engine.store);
    let task_id = task_id.to_owned();
    Progress::awaited(Arc::new(move |update: ProgressUpdate| {
        let message = update.message.unwrap_or_else(|| match update.total {
            Some(total) => format!("{}/{}", update.progress, total),
            None => format!("{}", update.progress),
        });
        let store = Arc::clone(&store);
        let task_id = task_id.clone();
        Box::pin(async move {
            let _ = store.update(&task_id, TaskChange::Message(message)).await;
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
