//! Injected arguments are recognised by their type, not their spelling:
//! `InvokeContext` and `State` under other names (a `use ... as`, a type
//! alias), by value, by reference and destructured.

use std::sync::Arc;

use mcp_core::InvokeContext as Ctx;
use mcp_core::State as Shared;
use mcp_core::{mcp_prompt, mcp_resource, mcp_tool, McpServer, State, protocol::PromptMessage};
use serde_json::json;

type AppState = State<Arc<Config>>;
type CtxRef<'a> = &'a mcp_core::InvokeContext;

struct Config {
    greeting: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    query: String,
}

/// An aliased context by value.
#[mcp_tool]
async fn t(ctx: Ctx, x: u32) -> String {
    format!("{x}:{}", ctx.is_cancelled())
}

/// An aliased context by reference and an aliased state, destructured.
#[mcp_tool]
fn by_ref(ctx: &Ctx, Shared(config): Shared<Arc<Config>>, who: String) -> String {
    let _ = ctx;
    format!("{} {who}", config.greeting)
}

/// A type alias of a state and of a context reference.
#[mcp_tool]
fn aliases(config: AppState, ctx: CtxRef<'_>, n: i64) -> String {
    let _ = ctx;
    format!("{}{n}", config.0.greeting)
}

/// A struct argument beside an aliased context: it is still the whole
/// arguments object.
#[mcp_tool]
async fn search(#[args] args: SearchArgs, ctx: Ctx) -> String {
    let _ = ctx;
    args.query
}

/// Only an aliased context, ignored.
#[mcp_tool]
fn only(_: Ctx) {}

/// A resource with an aliased context.
#[mcp_resource(uri = "notes://{day}")]
fn notes(ctx: &Ctx, day: u32, config: AppState) -> String {
    let _ = ctx;
    format!("{}{day}", config.0.greeting)
}

/// A prompt with an aliased context and state.
#[mcp_prompt]
fn plan(who: String, _ctx: Ctx, Shared(config): Shared<Arc<Config>>) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!("{} {who}", config.greeting))]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = McpServer::builder()
        .tool(t::tool())
        .tool(by_ref::tool())
        .tool(aliases::tool())
        .tool(search::tool())
        .tool(only::tool())
        .resource(notes::resource())
        .prompt(plan::prompt())
        .state(Arc::new(Config {
            greeting: "Hello".into(),
        }))
        .build()
        .expect("valid server");
    let schemas: Vec<_> = server
        .list_tools()
        .iter()
        .map(|t| (t.name.clone(), serde_json::Value::Object(t.input_schema.clone())))
        .collect();
    let schema = |name: &str| {
        schemas
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.clone())
            .expect("listed")
    };
    assert_eq!(
        schema("t"),
        json!({"type": "object", "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u32}}, "required": ["x"]})
    );
    assert_eq!(schema("by_ref")["required"], json!(["who"]));
    assert_eq!(schema("aliases")["required"], json!(["n"]));
    assert_eq!(schema("search")["required"], json!(["query"]));
    assert_eq!(schema("only"), json!({"type": "object", "properties": {}}));
    let r = server.call_tool("t", json!({"x": 7})).await.expect("call");
    assert_eq!(r.text_content(), "7:false");
    let r = server
        .call_tool("by_ref", json!({"who": "Ada"}))
        .await
        .expect("call");
    assert_eq!(r.text_content(), "Hello Ada");
    let r = server
        .call_tool("aliases", json!({"n": 3}))
        .await
        .expect("call");
    assert_eq!(r.text_content(), "Hello3");
    let r = server
        .call_tool("search", json!({"query": "q"}))
        .await
        .expect("call");
    assert_eq!(r.text_content(), "q");
    // An injected argument is not something a client can send.
    let r = server
        .call_tool("t", json!({"x": 1, "ctx": 2}))
        .await
        .expect("call");
    assert!(r.is_error == Some(true), "{:?}", r.text_content());
    assert!(r.text_content().contains("unknown field"), "{}", r.text_content());
}
