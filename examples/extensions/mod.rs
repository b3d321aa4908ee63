//! The conformance fixture's part for the extension scenarios: the tools
//! of the tasks extension (`tasks-*`, SEP-2663; the function bodies are
//! ordinary tools, `task = "..."` alone makes them tasks) and the skills
//! of the skills extension (`sep-2640-*`): the directory `examples/skills`
//! and one skill declared in code.

use std::time::Duration;

use mcp_core::skills::Skill;
use mcp_core::storage::Storage;
use mcp_core::tasks::{FileTaskStore, TaskLimits};
use mcp_core::{
    context::InputRequest, mcp_tool, protocol::ErrorObject, InvokeContext, McpServerBuilder,
    McpToolDef,
};
use serde_json::Value;

use crate::{accepted, answer, ask, field, input, one_field_form};

/// Greets by name (never a task).
#[mcp_tool]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Sleeps `seconds` (reporting progress each second, stopping when
/// cancelled), then reports what it computed. `seconds: 0` answers at once.
#[mcp_tool(task = "optional")]
async fn slow_compute(
    ctx: InvokeContext,
    seconds: f64,
    label: Option<String>,
) -> Result<String, String> {
    let label = label.unwrap_or_else(|| "job".to_owned());
    let whole = seconds.clamp(0.0, 3600.0);
    let mut done = 0.0;
    while done < whole {
        let step = (whole - done).min(1.0);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs_f64(step)) => {}
            () = ctx.cancelled() => return Err(format!("{label}: cancelled")),
        }
        done += step;
        ctx.report_progress(done, Some(whole), None).await;
    }
    Ok(format!("{label}: computed in {whole} s"))
}

/// Works for about a second, then reports a tool error (`isError: true`).
#[mcp_tool(task = "required")]
async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("the job failed: the input could not be processed".to_owned())
}

/// Works briefly, then ends with a protocol error (the task is `failed`).
#[mcp_tool(task = "optional")]
async fn protocol_error_job(ctx: InvokeContext) -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    ctx.fail(ErrorObject::internal("the job hit an internal error"))
        .await;
    String::new()
}

/// Looks the file up, then asks the user to confirm its deletion.
#[mcp_tool(task = "optional")]
async fn confirm_delete(ctx: InvokeContext, filename: String) -> String {
    tokio::time::sleep(Duration::from_millis(50)).await;
    if ctx
        .confirm(&format!("Delete {filename}?"))
        .await
        .is_accepted()
    {
        format!("Deleted {filename}")
    } else {
        format!("Kept {filename}")
    }
}

/// Asks two questions at once (a name and a confirmation).
#[mcp_tool(task = "optional")]
async fn multi_input(ctx: InvokeContext) -> Result<String, String> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut answers = input(
        &ctx,
        vec![
            InputRequest::elicit("name", one_field_form("Your name?", "name", "string")),
            InputRequest::elicit("confirm", one_field_form("Go ahead?", "confirm", "boolean")),
        ],
    )
    .await;
    let name = accepted(&answer(&mut answers, "name"))?;
    let confirm = accepted(&answer(&mut answers, "confirm"))?;
    Ok(format!(
        "name={}, confirm={}",
        field(&name, "name"),
        confirm.get("confirm").unwrap_or(&Value::Null)
    ))
}

/// Asks the user's name by round trip first (SEP-2322), then works on as
/// a task and greets them.
#[mcp_tool(task = "required")]
async fn test_tool_with_task(ctx: InvokeContext) -> Result<String, String> {
    let content = ask(
        &ctx,
        "user_name",
        one_field_form("What is your name?", "name", "string"),
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!(
        "Hello, {}! The task is done.",
        field(&content, "name")
    ))
}

/// The tools above.
pub(crate) fn tools() -> Vec<McpToolDef> {
    vec![
        greet::tool(),
        slow_compute::tool(),
        failing_job::tool(),
        protocol_error_job::tool(),
        confirm_delete::tool(),
        multi_input::tool(),
        test_tool_with_task::tool(),
    ]
}

/// Where the stdio fixture keeps the tasks its processes share:
/// `MCP_CONFORMANCE_TASK_DIR`, a directory of the user running it that no
/// one else can enter (`mktemp -d` makes one; `FileTaskStore` refuses any
/// other). There is no default: a fixed name under a temp directory would
/// be one that another local user can create first.
pub(crate) fn task_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("MCP_CONFORMANCE_TASK_DIR").map(std::path::PathBuf::from)
}

/// Tasks for a fixture that serves one request per process (stdio behind
/// the interop bridge): kept in the directory [`task_dir`] names, and each
/// run by a process of its own (`--run-task ID`, in its own process group,
/// so that it outlives the process that created the task). Without that
/// directory tasks stay in the memory of the process that created them, as
/// for one stdio process serving one client.
pub(crate) fn shared_tasks(builder: McpServerBuilder) -> std::io::Result<McpServerBuilder> {
    let Some(dir) = task_dir() else {
        return Ok(builder);
    };
    let store = FileTaskStore::new(dir, 10_000)?;
    let limits = TaskLimits {
        ttl_ms: 120_000,
        poll_interval_ms: 100,
        ..TaskLimits::default()
    };
    Ok(builder
        .storage(Storage::memory().with_tasks(store))
        .task_limits(limits)
        .task_spawner(|task_id| {
            let exe = match std::env::current_exe() {
                Ok(exe) => exe,
                Err(e) => return eprintln!("conformance: cannot run task {task_id}: {e}"),
            };
            let mut command = std::process::Command::new(exe);
            command
                .arg("--run-task")
                .arg(task_id)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            #[cfg(unix)]
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
            match command.spawn() {
                // Reaped by a thread while this process lives.
                Ok(mut child) => {
                    std::thread::spawn(move || child.wait());
                }
                Err(e) => eprintln!("conformance: cannot run task {task_id}: {e}"),
            }
        }))
}

/// A replica sharing its state through Redis (`--redis URL`): a
/// `Storage` whose tasks are in a `RedisTaskStore`, notices on a
/// `RedisNotificationBus`, legacy sessions in a `RedisSessionStore`. Their
/// owner is the default principal, which every replica derives alike
/// because they share the `requestState` keys (see `state_keys` in
/// conformance.rs). For the replica tests: `MCP_REDIS_PREFIX`
/// sets the key prefix (one per test), `MCP_TASK_LEASE_MS` shortens the
/// task lease (a replica is killed mid-task), `MCP_TASK_MAX_RUNNING` bounds
/// the tasks running per principal.
pub(crate) struct Replicated {
    storage: Storage,
}

impl Replicated {
    /// Takes `--redis URL` out of `args`; `None` without it. Waits (up to
    /// 5 s) for the bus to subscribe, so notices of the other replicas are
    /// heard once the endpoint is announced.
    pub(crate) async fn from_args(args: &mut Vec<String>) -> std::io::Result<Option<Self>> {
        let Some(at) = args.iter().position(|a| a == "--redis") else {
            return Ok(None);
        };
        let url = args
            .get(at + 1)
            .cloned()
            .ok_or_else(|| std::io::Error::other("--redis needs a URL"))?;
        args.drain(at..at + 2);
        let prefix = std::env::var("MCP_REDIS_PREFIX")
            .unwrap_or_else(|_| mcp_core::redis::DEFAULT_REDIS_PREFIX.to_owned());
        let backend = mcp_core::redis::RedisBackend::open_with(
            &url,
            &prefix,
            mcp_core::redis::DEFAULT_REDIS_TIMEOUT,
        )
        .map_err(std::io::Error::other)?;
        let storage = backend.storage();
        let subscribed = async {
            if let Some(bus) = storage.notices() {
                bus.ready().await;
            }
        };
        if tokio::time::timeout(Duration::from_secs(5), subscribed)
            .await
            .is_err()
        {
            eprintln!("conformance: Redis at {url} is not answering; serving anyway");
        }
        Ok(Some(Self { storage }))
    }

    /// The server with its state in Redis.
    pub(crate) fn server(&self, builder: McpServerBuilder) -> McpServerBuilder {
        let env = |name: &str, default| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let limits = TaskLimits {
            ttl_ms: 120_000,
            poll_interval_ms: 100,
            lease_ms: env("MCP_TASK_LEASE_MS", TaskLimits::DEFAULT.lease_ms),
            max_running_per_principal: usize::try_from(env("MCP_TASK_MAX_RUNNING", 64))
                .unwrap_or(64),
            ..TaskLimits::default()
        };
        builder.storage(self.storage.clone()).task_limits(limits)
    }
}

/// The skills directory published by the fixture.
const SKILLS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills");

/// A skill declared in code, published under a prefix
/// (`skill://examples/greeting/SKILL.md`).
fn greeting_skill() -> Result<Skill, mcp_core::skills::SkillError> {
    Skill::new(
        "---\nname: greeting\ndescription: Greet the user by name, politely\n---\n\
         Ask the user's name if you do not know it, then greet them.\n",
    )?
    .with_file("templates/formal.txt", b"Good day, {name}.\n".to_vec())?
    .under("examples")
}

/// Publishes the fixture's skills.
pub(crate) fn skills(builder: McpServerBuilder) -> McpServerBuilder {
    let builder = builder.skills_dir(SKILLS_DIR);
    match greeting_skill() {
        Ok(skill) => builder.skill(skill),
        Err(e) => {
            eprintln!("conformance: the greeting skill is invalid: {e}");
            builder
        }
    }
}
