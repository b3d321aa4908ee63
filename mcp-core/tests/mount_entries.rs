//! A mounted server's own interceptors for its resources and prompts
//! (issue 12): they run for `resources/read` (a URI or a template) and
//! `prompts/get` of the mounted entries, inside the parent's (onion
//! order), never for the parent's own entries; a child's short-circuit
//! answers without the handler; and nested mounts keep each level's.

mod common;

use std::sync::{Arc, Mutex, PoisonError};

use common::guard;
use mcp_core::intercept::{Hook, Interceptor, Next, Operation, Operations, Outcome, Request};
use mcp_core::{
    protocol::ErrorObject, transport::CallContext, McpPromptDef, McpResourceDef, McpServer,
    McpServerBuilder,
};
use serde_json::{json, Value};

type Log = Arc<Mutex<Vec<String>>>;

/// Notes `who`, the hook and the key of each request it sees, and (as
/// "parent") attaches the caller for the handlers.
struct Mark(&'static str, Log);

#[derive(Debug)]
struct Caller(&'static str);

impl Mark {
    fn note(&self, hook: &str, req: &Request<'_>) {
        self.1
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!("{} {hook} {}", self.0, req.key().unwrap_or("?")));
    }
}

impl Interceptor for Mark {
    fn intercept<'a>(&'a self, mut req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        self.note("request", &req);
        if self.0 == "parent" {
            req.extensions_mut().insert(Caller("alice"));
        }
        match req.operation() {
            Operation::ReadResource => self.note("read", &req),
            Operation::GetPrompt => self.note("get", &req),
            _ => {}
        }
        next.pass(req)
    }
}

/// Refuses `resources/read` of `secret://…` before the handler runs.
struct NoSecrets;

impl Interceptor for NoSecrets {
    fn operations(&self) -> Operations {
        Operations::only(Operation::ReadResource)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        if req
            .resource_uri()
            .is_some_and(|uri| uri.starts_with("secret://"))
        {
            return Hook::done(Outcome::error(ErrorObject::invalid_params("no secrets")));
        }
        next.pass(req)
    }
}

fn caller(ctx: &mcp_core::InvokeContext) -> &'static str {
    ctx.extension::<Caller>().map_or("nobody", |c| c.0)
}

fn weather(log: &Log) -> McpServerBuilder {
    McpServer::builder()
        .prompt(McpPromptDef::new("brief", |_args, ctx| async move {
            format!("brief for {}", caller(&ctx))
        }))
        .resource(McpResourceDef::new(
            "weather://today",
            "today",
            |_req, ctx| async move { format!("cloudy for {}", caller(&ctx)) },
        ))
        .resource(McpResourceDef::template(
            "weather://city/{name}",
            "city",
            |req, _ctx| async move {
                format!(
                    "rain in {}",
                    req.vars.get("name").cloned().unwrap_or_default()
                )
            },
        ))
        .resource(McpResourceDef::new(
            "secret://key",
            "key",
            |_req, _ctx| async { "hunter2" },
        ))
        .interceptor(Mark("child", Arc::clone(log)))
        .interceptor(NoSecrets)
}

async fn ask(server: &McpServer, method: &str, params: Value) -> Value {
    let request =
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let reply = guard(
        &request,
        server.handle_frame(request.as_bytes(), &CallContext::new()),
    )
    .await
    .unwrap_or_else(|| panic!("no reply to {request}"));
    serde_json::from_slice(&reply).expect("JSON")
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap_or_else(PoisonError::into_inner))
}

fn parent(log: &Log) -> McpServer {
    McpServer::builder()
        .interceptor(Mark("parent", Arc::clone(log)))
        .prompt(McpPromptDef::new("own", |_args, _ctx| async {
            "own".to_owned()
        }))
        .resource(McpResourceDef::new("own://r", "own", |_req, _ctx| async {
            "own"
        }))
        .mount("weather", weather(log))
        .build()
        .expect("builds")
}

#[tokio::test]
async fn a_mounted_servers_interceptors_run_for_its_prompts_inside_the_parents() {
    let log: Log = Arc::default();
    let server = parent(&log);
    let got = ask(&server, "prompts/get", json!({"name": "weather_brief"})).await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "brief for alice",
        "the parent's extensions cross the boundary: {got}"
    );
    assert_eq!(
        take(&log),
        [
            "parent request weather_brief",
            "parent get weather_brief",
            "child request weather_brief",
            "child get weather_brief",
        ]
    );
    let own = ask(&server, "prompts/get", json!({"name": "own"})).await;
    assert!(own["result"]["messages"].is_array(), "{own}");
    assert_eq!(
        take(&log),
        ["parent request own", "parent get own"],
        "the child's interceptors are for its own entries only"
    );
}

#[tokio::test]
async fn a_mounted_servers_interceptors_run_for_its_resources_and_templates() {
    let log: Log = Arc::default();
    let server = parent(&log);
    let read = ask(&server, "resources/read", json!({"uri": "weather://today"})).await;
    assert_eq!(
        read["result"]["contents"][0]["text"], "cloudy for alice",
        "{read}"
    );
    assert_eq!(
        take(&log),
        [
            "parent request weather://today",
            "parent read weather://today",
            "child request weather://today",
            "child read weather://today",
        ]
    );
    let read = ask(
        &server,
        "resources/read",
        json!({"uri": "weather://city/paris"}),
    )
    .await;
    assert_eq!(
        read["result"]["contents"][0]["text"], "rain in paris",
        "{read}"
    );
    assert_eq!(
        take(&log),
        [
            "parent request weather://city/paris",
            "parent read weather://city/paris",
            "child request weather://city/paris",
            "child read weather://city/paris",
        ],
        "a URI read through a mounted template"
    );
    let own = ask(&server, "resources/read", json!({"uri": "own://r"})).await;
    assert_eq!(own["result"]["contents"][0]["text"], "own", "{own}");
    assert_eq!(
        take(&log),
        ["parent request own://r", "parent read own://r"]
    );

    let refused = ask(&server, "resources/read", json!({"uri": "secret://key"})).await;
    assert_eq!(refused["error"]["message"], "no secrets", "{refused}");
    assert!(!refused.to_string().contains("hunter2"));
}

#[tokio::test]
async fn nested_mounts_keep_each_levels_interceptors_in_order() {
    let log: Log = Arc::default();
    let middle = McpServer::builder()
        .interceptor(Mark("middle", Arc::clone(&log)))
        .mount("weather", weather(&log));
    let server = McpServer::builder()
        .interceptor(Mark("parent", Arc::clone(&log)))
        .mount("outer", middle)
        .build()
        .expect("builds");
    let got = ask(
        &server,
        "prompts/get",
        json!({"name": "outer_weather_brief"}),
    )
    .await;
    assert!(got["result"]["messages"].is_array(), "{got}");
    let hooks: Vec<String> = take(&log)
        .into_iter()
        .filter(|l| l.contains(" get "))
        .collect();
    assert_eq!(
        hooks,
        [
            "parent get outer_weather_brief",
            "middle get outer_weather_brief",
            "child get outer_weather_brief",
        ]
    );
    let read = ask(&server, "resources/read", json!({"uri": "secret://key"})).await;
    assert_eq!(read["error"]["message"], "no secrets", "{read}");
}
