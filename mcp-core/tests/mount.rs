//! Composition (issue 12): one server's catalog mounted into another under
//! a prefix — names namespaced, resources kept with collisions caught at
//! build, the parent's interceptors around the child's, the child's state
//! and the parent's extensions reaching the mounted handlers.

mod common;

use std::sync::{Arc, Mutex, PoisonError};

use common::guard;
use mcp_core::intercept::{Hook, Interceptor, Next, Operation, Operations, Request};
use mcp_core::{
    mcp_prompt, mcp_resource, mcp_tool, transport::CallContext, BuildError, InvokeContext,
    McpServer, McpServerBuilder, McpToolDef, State,
};
use serde_json::{json, Value};

#[derive(Clone)]
struct Sky(&'static str);

#[derive(Debug)]
struct Caller(&'static str);

/// Tomorrow's weather.
#[mcp_tool]
async fn forecast(sky: State<Sky>, ctx: InvokeContext) -> String {
    let caller = ctx.extension::<Caller>().map_or("nobody", |c| c.0);
    format!("{} for {caller}", sky.0 .0)
}

/// A briefing.
#[mcp_prompt]
async fn brief() -> String {
    "Brief me on the weather".into()
}

/// Today's weather.
#[mcp_resource(uri = "weather://today")]
async fn today() -> String {
    "cloudy".into()
}

type Log = Arc<Mutex<Vec<String>>>;

struct Mark(&'static str, Log);

impl Interceptor for Mark {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, mut req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        self.1
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!("{} {}", self.0, req.tool_name().unwrap_or("?")));
        if self.0 == "parent" {
            req.extensions_mut().insert(Caller("alice"));
        }
        next.pass(req)
    }
}

fn weather(log: &Log) -> McpServerBuilder {
    McpServer::builder()
        .state(Sky("sunny"))
        .tool(forecast::tool())
        .prompt(brief::prompt())
        .resource(today::resource())
        .interceptor(Mark("child", Arc::clone(log)))
}

fn echo() -> McpToolDef {
    McpToolDef::new(
        "echo",
        "Echoes",
        json!({"type": "object"}),
        |_args, _ctx: InvokeContext| async { "echo" },
    )
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
    let reply: Value = serde_json::from_slice(&reply).expect("JSON");
    reply["result"].clone()
}

#[tokio::test]
async fn a_mounted_catalog_is_namespaced_and_runs_inside_the_parents_interceptors() {
    let log: Log = Arc::default();
    let server = McpServer::builder()
        .tool(echo())
        .interceptor(Mark("parent", Arc::clone(&log)))
        .mount("weather", weather(&log))
        .build()
        .expect("builds");
    let tools: Vec<String> = server.list_tools().iter().map(|t| t.name.clone()).collect();
    assert_eq!(tools, ["echo", "weather_forecast"]);
    let prompts = ask(&server, "prompts/list", json!({})).await;
    assert_eq!(prompts["prompts"][0]["name"], "weather_brief", "{prompts}");
    let prompt = ask(&server, "prompts/get", json!({"name": "weather_brief"})).await;
    assert!(prompt["messages"].is_array(), "{prompt}");
    let read = ask(&server, "resources/read", json!({"uri": "weather://today"})).await;
    assert_eq!(read["contents"][0]["text"], "cloudy", "{read}");

    let call = ask(&server, "tools/call", json!({"name": "weather_forecast"})).await;
    assert_eq!(call["content"][0]["text"], "sunny for alice", "{call}");
    let call = ask(&server, "tools/call", json!({"name": "echo"})).await;
    assert_eq!(call["content"][0]["text"], "echo", "{call}");
    assert_eq!(
        *log.lock().unwrap_or_else(PoisonError::into_inner),
        [
            "parent weather_forecast",
            "child weather_forecast",
            "parent echo"
        ],
        "the child's interceptor runs for its own tools only, inside the parent's"
    );
}

#[test]
fn collisions_and_bad_prefixes_are_build_errors() {
    let log: Log = Arc::default();
    let both = McpServer::builder()
        .resource(today::resource())
        .mount("weather", weather(&log))
        .build();
    assert!(
        matches!(both, Err(BuildError::DuplicateResource(ref u)) if u == "weather://today"),
        "{both:?}"
    );
    let twice = McpServer::builder()
        .mount(
            "w",
            McpServer::builder().tool(forecast::tool()).state(Sky("x")),
        )
        .mount("w", McpServer::builder().tool(forecast::tool()))
        .build();
    // The same prefix twice is refused for the prefix itself, before any
    // of its names can clash.
    assert!(
        matches!(twice, Err(BuildError::MountPrefixCollision { ref first, ref second }) if first == "w" && second == "w"),
        "{twice:?}"
    );
    for bad in ["", "we ather", "météo"] {
        let err = McpServer::builder().mount(bad, weather(&log)).build();
        assert!(
            matches!(err, Err(BuildError::InvalidMountPrefix(_))),
            "{bad:?}: {err:?}"
        );
    }
}
