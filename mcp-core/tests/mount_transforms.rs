//! Transforms for mounted tools (`McpServerBuilder::mount_with`): each
//! transform in the listing, schemas kept consistent, calls that get
//! defaults, fixed values and renamed arguments, a hidden tool exactly as
//! unknown as one that never existed, the mounted server's interceptors
//! still running (and argument transforms refused where they would slip
//! past them), every problem a build error, and the catalog lockfile
//! seeing the transformed catalog.

mod common;

use std::sync::{Arc, Mutex, PoisonError};

use mcp_core::handler::{ToolTransforms, TransformProblem};
use mcp_core::intercept::{Hook, Interceptor, Next, Operation, Operations, Request};
use mcp_core::protocol::{CallToolResult, ToolAnnotations};
use mcp_core::{mcp_tool, BuildError, InvokeContext, McpServer, McpServerBuilder, McpToolDef};
use serde_json::{json, Value};

/// Searches a repository.
#[mcp_tool]
async fn search(
    #[arg(description = "What to look for")] query: String,
    #[arg(description = "How many results")] limit: u32,
    #[arg(description = "Which repository")] repo: String,
) -> String {
    format!("{query} {limit} {repo}")
}

/// Calls made to tools of the mounted server, and what its interceptors saw.
type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, line: String) {
    log.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(line);
}

fn lines(log: &Log) -> Vec<String> {
    log.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// Records each `tools/call` it sees: tool name and arguments.
struct Record(&'static str, Log);

impl Interceptor for Record {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let args = req
            .arguments()
            .map_or(Value::Null, |a| Value::Object(a.clone()));
        push(
            &self.1,
            format!("{} {} {args}", self.0, req.tool_name().unwrap_or("?")),
        );
        next.pass(req)
    }
}

fn plain(name: &'static str, log: &Log) -> McpToolDef {
    let log = Arc::clone(log);
    McpToolDef::new(
        name,
        "A plain tool",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        move |_args, _ctx: InvokeContext| {
            push(&log, format!("ran {name}"));
            async move { name }
        },
    )
}

/// The mounted server: `search` (a macro tool, with its own argument
/// check), `echo` and `secret`, an interceptor for `secret` and one for
/// `echo`.
fn child(log: &Log) -> McpServerBuilder {
    McpServer::builder()
        .tool(search::tool())
        .tool(plain("echo", log))
        .tool(plain("secret", log))
        .tool_interceptor("secret", Record("secret-only", Arc::clone(log)))
        .tool_interceptor("echo", Record("echo-only", Arc::clone(log)))
}

fn transforms() -> ToolTransforms {
    ToolTransforms::new()
        .rename("search", "find")
        .hide("secret")
        .describe("search", "Finds pages of the site")
        .title("search", "Find")
        .annotations(
            "search",
            ToolAnnotations {
                read_only_hint: Some(true),
                ..ToolAnnotations::default()
            },
        )
        .default("search", "limit", json!(10))
        .fix("search", "repo", json!("acme/site"))
        .rename_arg("search", "query", "q")
}

fn mounted(log: &Log) -> McpServer {
    McpServer::builder()
        .mount_with("w", child(log), transforms())
        .build()
        .expect("builds")
}

fn text(result: &CallToolResult) -> String {
    result.text_content()
}

#[test]
fn the_listing_shows_every_transform_with_a_consistent_schema() {
    let log = Log::default();
    let server = mounted(&log);
    let tools = server.list_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["w_find", "w_echo"], "renamed, hidden left out");
    let find = &tools[0];
    assert_eq!(find.description.as_deref(), Some("Finds pages of the site"));
    assert_eq!(find.title.as_deref(), Some("Find"));
    assert_eq!(
        find.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );
    let schema = &find.input_schema;
    let properties = schema["properties"].as_object().expect("properties");
    let mut keys: Vec<&str> = properties.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["limit", "q"],
        "fixed `repo` gone, `query` listed as `q`"
    );
    assert_eq!(
        properties["q"]["description"], "What to look for",
        "the renamed argument keeps its schema"
    );
    assert_eq!(properties["limit"]["default"], json!(10));
    assert_eq!(
        schema["required"],
        json!(["q"]),
        "defaulted and fixed arguments are not required; the renamed one is, by its new name"
    );
    // The tool untouched by transforms is listed as the child lists it.
    assert_eq!(
        tools[1].input_schema,
        plain("echo", &log).tool().input_schema
    );
}

#[tokio::test]
async fn a_call_gets_defaults_fixed_values_and_renamed_arguments() {
    let log = Log::default();
    let server = mounted(&log);
    let r = server
        .call_tool("w_find", json!({"q": "rust"}))
        .await
        .expect("call");
    assert!(!r.is_error(), "{}", text(&r));
    assert_eq!(text(&r), "rust 10 acme/site");
    let r = server
        .call_tool("w_find", json!({"q": "rust", "limit": 3}))
        .await
        .expect("call");
    assert_eq!(
        text(&r),
        "rust 3 acme/site",
        "a given value beats the default"
    );
    let r = server
        .call_tool("w_find", json!({"q": "rust", "limit": null}))
        .await
        .expect("call");
    assert_eq!(text(&r), "rust 10 acme/site", "null is left out");
}

#[tokio::test]
async fn a_caller_cannot_set_a_fixed_argument() {
    let log = Log::default();
    let server = mounted(&log);
    let r = server
        .call_tool("w_find", json!({"q": "rust", "repo": "evil/other"}))
        .await
        .expect("a tool error, not a protocol error");
    assert!(r.is_error());
    let message = text(&r);
    assert!(message.starts_with("Invalid arguments"), "{message}");
    assert!(message.contains("`repo`"), "{message}");
    assert!(!message.contains("evil/other"), "never ran: {message}");
}

#[tokio::test]
async fn the_old_name_of_a_renamed_argument_is_refused_and_the_tools_check_still_runs() {
    let log = Log::default();
    let server = mounted(&log);
    let r = server
        .call_tool("w_find", json!({"query": "rust"}))
        .await
        .expect("call");
    assert!(r.is_error());
    let message = text(&r);
    assert!(
        message.starts_with("Invalid arguments") && message.contains("did you mean `q`"),
        "{message}"
    );
    // The mounted tool's own check sees the rewritten arguments.
    let r = server
        .call_tool("w_find", json!({"q": 5}))
        .await
        .expect("call");
    assert!(r.is_error());
    let message = text(&r);
    assert!(
        message.starts_with("Invalid arguments") && message.contains("expected string"),
        "{message}"
    );
    let r = server.call_tool("w_find", json!({})).await.expect("call");
    assert!(
        r.is_error() && text(&r).contains("missing required"),
        "{}",
        text(&r)
    );
}

#[tokio::test]
async fn a_hidden_tool_is_exactly_an_unknown_tool() {
    let log = Log::default();
    let server = mounted(&log);
    let hidden = server
        .call_tool("w_secret", json!({}))
        .await
        .expect_err("hidden");
    let never = server
        .call_tool("w_nothing", json!({}))
        .await
        .expect_err("unknown");
    assert_eq!(hidden.code, never.code);
    assert_eq!(
        hidden.message.replace("w_secret", "NAME"),
        never.message.replace("w_nothing", "NAME")
    );
    assert_eq!(hidden.data, never.data);
    // A renamed tool's old name is gone too.
    let old = server
        .call_tool("w_search", json!({"query": "x"}))
        .await
        .expect_err("old name");
    assert_eq!(old.code, never.code);
    assert!(
        !lines(&log).iter().any(|l| l.contains("secret")),
        "nothing of the hidden tool ran: {:?}",
        lines(&log)
    );
}

#[tokio::test]
async fn the_mounted_servers_interceptors_still_run_under_the_new_name() {
    let log = Log::default();
    let server = McpServer::builder()
        .mount_with(
            "w",
            child(&log).interceptor(Record("child", Arc::clone(&log))),
            ToolTransforms::new()
                .rename("echo", "say")
                .describe("echo", "Says it"),
        )
        .build()
        .expect("builds");
    let r = server
        .call_tool("w_say", json!({"text": "hi"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "echo");
    assert_eq!(
        lines(&log),
        [
            r#"child w_say {"text":"hi"}"#,
            r#"echo-only w_say {"text":"hi"}"#,
            "ran echo"
        ],
        "the child's and the tool's own interceptors, under the new name"
    );
}

/// Refuses any `read` of a `path` outside `/sandbox/`.
struct Sandbox(Operations);

impl Interceptor for Sandbox {
    fn operations(&self) -> Operations {
        self.0
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let path = req.arguments().and_then(|a| a.get("path"));
        let path = path.and_then(Value::as_str).unwrap_or("/sandbox/");
        if !path.starts_with("/sandbox/") {
            return Hook::done(mcp_core::intercept::Outcome::tool(CallToolResult::error(
                "outside the sandbox",
            )));
        }
        next.pass(req)
    }
}

fn reader() -> McpToolDef {
    McpToolDef::new(
        "read",
        "Reads a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        |args: serde_json::Map<String, Value>, _ctx: InvokeContext| async move {
            format!("read {}", args["path"])
        },
    )
}

/// The attack: a mounted server guards `read`'s `path` with an
/// interceptor; renaming the argument to `file` would let
/// `{"file": "/etc/passwd"}` past it (the interceptor sees no `path`, the
/// tool gets `path=/etc/passwd`). Such a mount does not build.
#[tokio::test]
async fn argument_transforms_of_a_tool_its_servers_interceptors_guard_are_refused() {
    let rename = || ToolTransforms::new().rename_arg("read", "path", "file");
    // Without transforms the guard holds.
    let plain = McpServer::builder()
        .mount(
            "fs",
            McpServer::builder()
                .tool(reader())
                .interceptor(Sandbox(Operations::ALL)),
        )
        .build()
        .expect("builds");
    let r = plain
        .call_tool("fs_read", json!({"path": "/etc/passwd"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "outside the sandbox");
    // Its server's interceptor, or the tool's own: refused either way.
    let guarded = [
        McpServer::builder()
            .tool(reader())
            .interceptor(Sandbox(Operations::ALL)),
        McpServer::builder()
            .tool(reader())
            .tool_interceptor("read", Sandbox(Operations::only(Operation::CallTool))),
    ];
    for child in guarded {
        let e = McpServer::builder()
            .mount_with("fs", child, rename())
            .build()
            .err();
        assert!(
            matches!(&e, Some(BuildError::MountTransform { problems, .. })
                if matches!(&problems[..], [TransformProblem::Conflict { tool, argument, .. }]
                    if tool == "read" && argument == "path")),
            "{e:?}"
        );
    }
    // An interceptor that never sees a `tools/call` guards no argument.
    let server = McpServer::builder()
        .mount_with(
            "fs",
            McpServer::builder()
                .tool(reader())
                .interceptor(Sandbox(Operations::only(Operation::ReadResource))),
            rename(),
        )
        .build()
        .expect("no interceptor of the child sees tools/call");
    let r = server
        .call_tool("fs_read", json!({"file": "/sandbox/a"}))
        .await
        .expect("call");
    assert_eq!(text(&r), r#"read "/sandbox/a""#);
}

/// An interceptor the mounted server registers for a tool it does not
/// have fails the build, as it does unmounted; only a hidden tool's goes
/// with it.
#[test]
fn an_interceptor_for_a_tool_the_mounted_server_lacks_fails_the_build() {
    let log = Log::default();
    for transforms in [ToolTransforms::new(), ToolTransforms::new().hide("echo")] {
        let e = McpServer::builder()
            .mount_with(
                "w",
                child(&log).tool_interceptor("typo", Record("typo", Arc::clone(&log))),
                transforms,
            )
            .build()
            .err();
        assert!(
            matches!(&e, Some(BuildError::UnknownTool(name)) if name == "w_typo"),
            "{e:?}"
        );
    }
    McpServer::builder()
        .mount_with("w", child(&log), ToolTransforms::new().hide("echo"))
        .build()
        .expect("the hidden tool's interceptor goes with it");
}

fn problems(transforms: ToolTransforms) -> Vec<TransformProblem> {
    let log = Log::default();
    match McpServer::builder()
        .mount_with("w", child(&log), transforms)
        .build()
    {
        Err(BuildError::MountTransform { prefix, problems }) => {
            assert_eq!(prefix, "w");
            problems
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("built despite the transforms"),
    }
}

#[test]
fn every_problem_is_a_build_error() {
    assert_eq!(
        problems(ToolTransforms::new().hide("nope")),
        [TransformProblem::UnknownTool("nope".into())]
    );
    assert_eq!(
        problems(ToolTransforms::new().default("search", "colour", json!("red"))),
        [TransformProblem::UnknownArgument {
            tool: "search".into(),
            argument: "colour".into()
        }]
    );
    assert_eq!(
        problems(ToolTransforms::new().rename("echo", "search")),
        [TransformProblem::NameTaken {
            tool: "echo".into(),
            argument: None,
            name: "search".into()
        }]
    );
    assert_eq!(
        problems(
            ToolTransforms::new()
                .rename("echo", "same")
                .rename("secret", "same")
        )
        .len(),
        2,
        "two tools renamed onto one name: both refused"
    );
    assert_eq!(
        problems(ToolTransforms::new().rename("echo", "has space")),
        [TransformProblem::InvalidName {
            tool: "echo".into(),
            name: "has space".into()
        }]
    );
    assert_eq!(
        problems(ToolTransforms::new().rename_arg("search", "query", "limit")),
        [TransformProblem::NameTaken {
            tool: "search".into(),
            argument: Some("query".into()),
            name: "limit".into()
        }]
    );
    let bad = problems(ToolTransforms::new().default("search", "limit", json!("ten")));
    assert!(
        matches!(&bad[..], [TransformProblem::BadValue { argument, reason, .. }]
            if argument == "limit" && reason.contains("expected integer")),
        "{bad:?}"
    );
    let both = problems(
        ToolTransforms::new()
            .fix("search", "repo", json!("a/b"))
            .default("search", "repo", json!("c/d")),
    );
    assert!(
        matches!(&both[..], [TransformProblem::Conflict { argument, .. }] if argument == "repo"),
        "{both:?}"
    );
    // Each problem reads as a sentence in the build error.
    let log = Log::default();
    let e = McpServer::builder()
        .mount_with("w", child(&log), ToolTransforms::new().hide("nope"))
        .build()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("mount `w`") && e.contains("no tool `nope`"),
        "{e}"
    );
}

/// A state handle is checked against the caller's principal before the
/// tool runs; a default or fixed handle would skip that check and hand
/// every caller one principal's state, so it is refused.
#[test]
fn a_state_handle_takes_no_default_or_fixed_value() {
    let handle_tool = McpToolDef::new(
        "checkout",
        "Checks out a cart",
        json!({"type": "object", "properties": {"cart": {
            "type": "string", "x-mcp-handle": {"kind": "cart", "mintedBy": "open"}
        }}, "required": ["cart"]}),
        |_args, _ctx: InvokeContext| async { "done" },
    );
    for transforms in [
        ToolTransforms::new().fix("checkout", "cart", json!("h_someone_elses")),
        ToolTransforms::new().default("checkout", "cart", json!("h_someone_elses")),
    ] {
        let e = McpServer::builder()
            .mount_with(
                "shop",
                McpServer::builder().tool(handle_tool.clone()),
                transforms,
            )
            .build()
            .err();
        assert!(
            matches!(&e, Some(BuildError::MountTransform { problems, .. })
                if matches!(&problems[..], [TransformProblem::Conflict { argument, .. }] if argument == "cart")),
            "{e:?}"
        );
    }
}

#[cfg(feature = "catalog")]
#[tokio::test]
async fn the_lockfile_lists_the_transformed_catalog() {
    use mcp_core::catalog::{lock, Catalog, DEFAULT_REVISIONS};
    let log = Log::default();
    let server = mounted(&log);
    let catalog = Catalog::of_server(&server, DEFAULT_REVISIONS)
        .await
        .expect("catalog");
    let text = lock::render(&catalog);
    assert!(text.contains("\"w_find\""), "{text}");
    assert!(text.contains("\"w_echo\""), "{text}");
    assert!(!text.contains("w_secret"), "the hidden tool: {text}");
    assert!(!text.contains("w_search"), "the old name: {text}");
    assert!(!text.contains("\"repo\""), "the fixed argument: {text}");
}
