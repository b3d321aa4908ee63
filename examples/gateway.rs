//! A production-style gateway on interceptors: the pipeline of a real MCP
//! gateway, on `mcp_core`'s API only.
//!
//! Every `tools/call` goes, outermost first:
//! 1. **instrument** — a `tracing` span per request ([`Trace`]) and the
//!    per-tool counters behind the `gateway://metrics` resource;
//! 2. **audit** — one JSON line per successful call of a tool that is not
//!    read-only, appended to the file of `--audit PATH`;
//! 3. **seal** — every result becomes one envelope,
//!    `{"ok":true,"data":…,"meta":{"tool","version"}}` or
//!    `{"ok":false,"error":{"code","message","retryable","hint","errorId"},"meta":…}`
//!    with the error classified (`VALIDATION_ERROR`, the application's own
//!    codes, `ACCESS_DENIED`, `INTERNAL_ERROR` whose details stay in the log);
//! 4. **access check** — before the arguments are parsed: only the
//!    `admin` role may write; every other role — `viewer`, and any missing,
//!    empty or unknown one — may call read-only tools only (see
//!    `gateway_access`);
//! 5. the tool's argument parsing and handler.
//!
//! **Proxied tools.** `--remote NAME=TARGET` (a command line or an
//! `http://` URL; repeatable) mounts another MCP server's tools as
//! `NAME_*` through `mcp_core::client::proxy`. Their results pass through
//! intact (never sealed), the audit always counts them as writes (whatever
//! their annotations say), and a viewer may not call them — a proxied tool
//! is judged by its mount, never by its name or its annotations — unless
//! `--viewer-tool NAME_TOOL` (repeatable) vouches that it is read-only.
//!
//! Tools come in toolsets (`core`: `echo`; `projects`: `project_list`,
//! `project_create`; `tasks`: `task_close`); `--toolsets core,projects`
//! serves a subset. The caller's role is the principal: over HTTP the
//! `X-Gateway-Role` header (none: the least privilege), over stdio `--role`
//! (default `admin`: the local user who started the gateway).
//!
//! Run: `cargo run --example gateway --features client -- --audit /tmp/audit.jsonl`
//! (add `--http 127.0.0.1:8080` for Streamable HTTP; `RUST_LOG=info` shows
//! the request spans on stderr).

mod common;
mod gateway_access;

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use mcp_core::client::proxy::{ProxyOptions, Target};
use mcp_core::client::ClientBuilder;
use mcp_core::intercept::{
    Answer, Hook, Interceptor, Next, Operation, Operations, Outcome, Request, Trace,
};
use mcp_core::{
    handler::IntoToolResult,
    mcp_resource, mcp_tool,
    protocol::{CallToolResult, Content},
    InvokeContext, Json, McpServer, McpToolDef, State, StdioOptions,
};
use serde_json::{json, Map, Value};

use gateway_access::{Policy, Role};

const VERSION: &str = env!("CARGO_PKG_VERSION");

// ---- the application: projects and tasks ---------------------------------

#[derive(Clone, Default)]
struct Projects(Arc<Mutex<Vec<String>>>);

/// An application error: a code the envelope carries as it is.
fn app_error(code: &str, message: &str, retryable: bool) -> CallToolResult {
    let mut detail = Map::new();
    detail.insert("code".into(), json!(code));
    detail.insert("retryable".into(), json!(retryable));
    CallToolResult::error(message).with_structured(detail)
}

/// Echoes the text back.
#[mcp_tool(read_only)]
async fn echo(#[arg(description = "The text to echo")] text: String) -> String {
    text
}

/// Lists the projects.
#[mcp_tool(read_only)]
async fn project_list(projects: State<Projects>) -> Json<Vec<String>> {
    Json(
        projects
            .0
             .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone(),
    )
}

/// Creates a project.
#[mcp_tool(destructive = false)]
async fn project_create(
    #[arg(description = "A unique project name")] name: String,
    projects: State<Projects>,
) -> CallToolResult {
    let mut list = projects.0 .0.lock().unwrap_or_else(PoisonError::into_inner);
    if list.contains(&name) {
        return app_error("CONFLICT", &format!("project {name:?} exists"), false);
    }
    list.push(name.clone());
    Json(json!({ "created": name })).into_tool_result()
}

/// Closes a task (only task 1 exists).
#[mcp_tool(destructive = true)]
async fn task_close(#[arg(description = "The task id")] id: u32) -> CallToolResult {
    if id != 1 {
        return app_error("NOT_FOUND", &format!("no task {id}"), false);
    }
    Json(json!({ "closed": id })).into_tool_result()
}

/// The toolsets' names.
const TOOLSETS: [&str; 3] = ["core", "projects", "tasks"];

/// The toolsets, by name.
fn toolset(name: &str) -> Option<Vec<McpToolDef>> {
    Some(match name {
        "core" => vec![echo::tool()],
        "projects" => vec![project_list::tool(), project_create::tool()],
        "tasks" => vec![task_close::tool()],
        _ => return None,
    })
}

/// The meta-tool `enable_toolset {"name": …}`: adds a toolset's tools to
/// the live catalog (those already there are left as they are).
fn enable_toolset(server: Arc<std::sync::OnceLock<McpServer>>) -> McpToolDef {
    McpToolDef::new(
        "enable_toolset",
        "Adds the tools of a toolset (core, projects or tasks) to this server",
        json!({"type": "object", "properties": {"name": {"type": "string",
            "enum": TOOLSETS}}, "required": ["name"]}),
        move |args: serde_json::Map<String, Value>, _ctx: InvokeContext| {
            let server = server.get().cloned();
            async move {
                let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
                let (Some(server), Some(tools)) = (server, toolset(name)) else {
                    return app_error("NOT_FOUND", &format!("no toolset {name:?}"), false);
                };
                let mut added = 0;
                for tool in tools {
                    if server.add_tool(tool).await.is_ok() {
                        added += 1;
                    }
                }
                Json(json!({ "toolset": name, "added": added })).into_tool_result()
            }
        },
    )
}

// ---- 1. instrument: counters per tool ------------------------------------

#[derive(Default)]
struct Metrics {
    calls: Mutex<BTreeMap<String, (u64, u64)>>,
}

impl Interceptor for Metrics {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let tool = req.tool_name().unwrap_or_default().to_owned();
        Hook::wrap(async move {
            let outcome = next.run(req).await;
            let failed = match &outcome {
                Outcome::Answer(Answer::Tool(r)) => r.is_error(),
                Outcome::InputRequired(_) => return outcome,
                _ => true,
            };
            let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
            let (n, errors) = calls.entry(tool).or_default();
            *n += 1;
            *errors += u64::from(failed);
            drop(calls);
            outcome
        })
    }
}

/// Calls and errors per tool since start.
#[mcp_resource(uri = "gateway://metrics", mime_type = "application/json")]
async fn metrics(metrics: State<Arc<Metrics>>) -> String {
    let calls = metrics
        .0
        .calls
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let by_tool: Map<String, Value> = calls
        .iter()
        .map(|(t, (n, e))| (t.clone(), json!({"calls": n, "errors": e})))
        .collect();
    Value::Object(by_tool).to_string()
}

// ---- 2. audit ------------------------------------------------------------

struct Audit {
    file: Mutex<std::fs::File>,
    policy: Arc<Policy>,
}

impl Interceptor for Audit {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let tool = req.tool_name().unwrap_or_default().to_owned();
        // A proxied tool's annotations are another server's word: always a
        // write here (even one vouched read-only for viewers).
        if !self.policy.is_proxied(&tool) && self.policy.is_read_only(&tool) {
            return next.pass(req);
        }
        let principal = req.principal().unwrap_or("anonymous").to_owned();
        let arguments: Vec<String> = req
            .arguments()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.clone())
            .collect();
        Hook::wrap(async move {
            let outcome = next.run(req).await;
            if let Outcome::Answer(Answer::Tool(result)) = &outcome {
                if !result.is_error() {
                    let line = json!({"tool": tool, "principal": principal, "arguments": arguments, "at": unix_ms()});
                    let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
                    if let Err(e) = writeln!(file, "{line}") {
                        tracing::error!(error = %e, "audit line not written");
                    }
                }
            }
            outcome
        })
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

// ---- 3. seal: one envelope, errors classified ----------------------------

struct Seal {
    policy: Arc<Policy>,
}

static ERRORS: AtomicU64 = AtomicU64::new(0);

fn error_id() -> String {
    format!(
        "gw-{}-{}",
        std::process::id(),
        ERRORS.fetch_add(1, Ordering::Relaxed) + 1
    )
}

impl Interceptor for Seal {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let tool = req.tool_name().unwrap_or_default().to_owned();
        // Proxied results pass through as their server sent them.
        if self.policy.is_proxied(&tool) {
            return next.pass(req);
        }
        Hook::wrap(async move {
            match next.run(req).await {
                Outcome::Answer(Answer::Tool(result)) => Outcome::tool(seal(&tool, result)),
                other => other,
            }
        })
    }
}

fn seal(tool: &str, result: CallToolResult) -> CallToolResult {
    let meta = json!({"tool": tool, "version": VERSION});
    let text = result.text_content();
    let envelope = if result.is_error() {
        let detail = result.structured_content.unwrap_or_default();
        let (code, message, retryable, hint) = match detail.get("code").and_then(Value::as_str) {
            Some(code) => (
                code.to_owned(),
                text,
                detail.get("retryable") == Some(&json!(true)),
                None,
            ),
            None if text.starts_with("Invalid arguments") => (
                "VALIDATION_ERROR".to_owned(),
                text,
                false,
                Some("check the arguments against the tool's input schema"),
            ),
            None => {
                // Details stay in the server's log, never in the answer.
                tracing::error!(tool, detail = %text, "tool failed");
                (
                    "INTERNAL_ERROR".to_owned(),
                    "Internal error".to_owned(),
                    true,
                    None,
                )
            }
        };
        let mut error = json!({"code": code, "message": message, "retryable": retryable, "errorId": error_id()});
        if let Some(hint) = hint {
            error["hint"] = json!(hint);
        }
        json!({"ok": false, "error": error, "meta": meta})
    } else {
        let data = match result.structured_content {
            Some(structured) => Value::Object(structured),
            None => Value::String(text),
        };
        json!({"ok": true, "data": data, "meta": meta})
    };
    let mut sealed = CallToolResult::new(vec![Content::text(envelope.to_string())]);
    sealed.is_error = result.is_error.filter(|e| *e);
    sealed
}

// ---- 4. access check, before parsing ------------------------------------

struct Access {
    policy: Arc<Policy>,
}

impl Interceptor for Access {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let tool = req.tool_name().unwrap_or_default();
        // Deny by default: an unknown or missing role is a viewer, and a
        // tool is read-only only by where it comes from (see `Policy`).
        let role = Role::parse(req.principal());
        if !self.policy.may_call(role, tool) {
            return Hook::done(Outcome::tool(app_error(
                "ACCESS_DENIED",
                &format!("the {role:?} role may not call {tool}"),
                false,
            )));
        }
        next.pass(req)
    }
}

// ---- the server ----------------------------------------------------------

/// `--remote NAME=TARGET`: a command line or an `http://` URL.
fn remote_target(spec: &str) -> std::io::Result<(String, Target)> {
    let (name, target) = spec
        .split_once('=')
        .ok_or_else(|| std::io::Error::other(format!("--remote {spec:?}: expected NAME=TARGET")))?;
    let target = Target::parse(target).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok((name.to_owned(), target))
}

fn main() -> std::io::Result<()> {
    let mut rest = Vec::new();
    let (mut audit, mut role, mut sets) =
        (None, "admin".to_owned(), "core,projects,tasks".to_owned());
    let mut remotes = Vec::new();
    let mut viewer_tools = HashSet::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| std::io::Error::other(format!("{name} needs a value")))
        };
        match arg.as_str() {
            "--audit" => audit = Some(value("--audit")?),
            "--role" => role = value("--role")?,
            "--toolsets" => sets = value("--toolsets")?,
            "--remote" => remotes.push(remote_target(&value("--remote")?)?),
            "--viewer-tool" => {
                viewer_tools.insert(value("--viewer-tool")?);
            }
            _ => rest.push(arg),
        }
    }
    let mut tools = Vec::new();
    for name in sets.split(',') {
        tools.extend(
            toolset(name)
                .ok_or_else(|| std::io::Error::other(format!("unknown toolset {name:?}")))?,
        );
    }
    let runtime = common::runtime_for(&rest)?;
    let options = Options {
        audit,
        role,
        viewer_tools,
    };
    runtime.block_on(serve(tools, remotes, options, rest))
}

/// The gateway's own settings.
struct Options {
    /// `--audit PATH`.
    audit: Option<String>,
    /// `--role`: the stdio caller's role.
    role: String,
    /// `--viewer-tool`: proxied tools vouched read-only.
    viewer_tools: HashSet<String>,
}

async fn serve(
    tools: Vec<McpToolDef>,
    remotes: Vec<(String, Target)>,
    options: Options,
    rest: Vec<String>,
) -> std::io::Result<()> {
    let Options {
        audit,
        role,
        viewer_tools,
    } = options;
    // Logs (the request spans) on stderr, filtered by RUST_LOG, and with
    // `otel` the OpenTelemetry export: before the first backend request.
    common::init_tracing();
    // Over every toolset, enabled now or later by `enable_toolset`.
    let local_read_only: HashSet<String> = TOOLSETS
        .iter()
        .filter_map(|name| toolset(name))
        .flatten()
        .filter(|t| t.tool().annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true))
        .map(|t| t.tool().name.clone())
        .collect();
    let metrics = Arc::new(Metrics::default());
    // The meta-tool reaches the server it is part of once that is built.
    let this: Arc<std::sync::OnceLock<McpServer>> = Arc::default();
    // First, so that its span covers the gateway's own interceptors.
    let mut builder = common::with_telemetry(McpServer::builder())
        .server_info("gateway", VERSION)
        // Live: `enable_toolset` adds tools while serving, and legacy
        // clients are told (`notifications/tools/list_changed`).
        .live_tools()
        .tool(enable_toolset(Arc::clone(&this)))
        .state(Projects::default())
        .state(Arc::clone(&metrics))
        .resource(metrics::resource())
        .tools(tools)
        .interceptor(Trace)
        .interceptor(Arc::clone(&metrics));
    // Proxied entries: each backend's tools mounted under its name. What a
    // backend lists (names, annotations) is its word, not the gateway's:
    // the access rule goes by the mount names only.
    let mut mounts = Vec::new();
    for (name, target) in remotes {
        let client = ClientBuilder::new("gateway", VERSION).timeout(None);
        let (_remote, child) =
            common::connect_backend(&name, target, client, ProxyOptions::new()).await?;
        builder = builder.mount(&name, child);
        mounts.push(name);
    }
    let policy = Arc::new(Policy {
        local_read_only,
        mounts,
        proxied_read_only: viewer_tools,
    });
    if let Some(path) = audit {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        builder = builder.interceptor(Audit {
            file: Mutex::new(file),
            policy: Arc::clone(&policy),
        });
    }
    let server = builder
        .interceptor(Seal {
            policy: Arc::clone(&policy),
        })
        .interceptor(Access { policy })
        .build()
        .map_err(std::io::Error::other)?;
    let _ = this.set(server.clone());
    // The stdio caller has one role; over HTTP each request names its own.
    let stdio = StdioOptions::default().principal(role);
    common::serve_args(server, stdio, rest, |options| {
        options.principal(|parts| {
            parts
                .headers
                .get("x-gateway-role")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        })
    })
    .await
}
