//! Authoring that never surprises (issue 18): one rule for argument shapes,
//! sync functions off the runtime, state checked at `build()`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_core::testing::TestClient;
use mcp_core::{
    mcp_prompt, mcp_resource, mcp_tool, BuildError, InvokeContext, McpServer, McpToolDef,
    PromptMessage, State,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// A unit enum: its schema is `{"type": "string", "enum": [...]}`.
#[derive(Debug, Deserialize, JsonSchema)]
enum Units {
    Celsius,
    Fahrenheit,
}

/// A newtype over a string: its schema is `{"type": "string"}`.
#[derive(Debug, Deserialize, JsonSchema)]
struct City(String);

/// A struct.
#[derive(Debug, Deserialize, JsonSchema)]
struct A {
    x: i64,
}

/// Say which units.
#[mcp_tool]
async fn units(units: Units) -> String {
    format!("{units:?}")
}

/// Say which city.
#[mcp_tool]
fn city(city: City) -> String {
    city.0
}

/// One struct argument.
#[mcp_tool]
fn one(a: A) -> String {
    a.x.to_string()
}

/// The same struct argument and one more.
#[mcp_tool]
fn two(a: A, verbose: bool) -> String {
    format!("{}{}", a.x, if verbose { "!" } else { "" })
}

/// An optional struct argument.
#[mcp_tool]
fn maybe(a: Option<A>) -> String {
    a.map_or_else(|| "none".to_owned(), |a| a.x.to_string())
}

/// The whole arguments object as one struct.
#[mcp_tool]
fn whole(#[args] a: A, ctx: &InvokeContext) -> String {
    let _ = ctx;
    a.x.to_string()
}

/// The whole arguments object as an enum: uncallable.
#[mcp_tool]
fn whole_units(#[args] units: Units) -> String {
    format!("{units:?}")
}

/// The whole arguments object as a newtype over a string: uncallable.
#[mcp_tool]
fn whole_city(#[args] city: City) -> String {
    city.0
}

fn schema(server: &McpServer, name: &str) -> Value {
    server
        .list_tools()
        .iter()
        .find(|t| t.name == name)
        .map(|t| Value::Object(t.input_schema.clone()))
        .unwrap_or(Value::Null)
}

fn shapes_server() -> McpServer {
    McpServer::builder()
        .tool(units::tool())
        .tool(city::tool())
        .tool(one::tool())
        .tool(two::tool())
        .tool(maybe::tool())
        .tool(whole::tool())
        .build()
        .expect("valid server")
}

#[tokio::test]
async fn an_enum_argument_is_a_property_and_callable() {
    let s = shapes_server();
    assert_eq!(
        schema(&s, "units"),
        json!({
            "type": "object",
            "properties": {"units": {"type": "string", "enum": ["Celsius", "Fahrenheit"], "description": "A unit enum: its schema is `{\"type\": \"string\", \"enum\": [...]}`."}},
            "required": ["units"],
        })
    );
    let r = s
        .call_tool("units", json!({"units": "Fahrenheit"}))
        .await
        .expect("call");
    assert_eq!(
        (r.is_error, r.text_content()),
        (None, "Fahrenheit".to_owned())
    );
}

#[tokio::test]
async fn a_newtype_argument_is_a_property_and_callable() {
    let s = shapes_server();
    assert_eq!(schema(&s, "city")["properties"]["city"]["type"], "string");
    assert_eq!(schema(&s, "city")["required"], json!(["city"]));
    let r = s
        .call_tool("city", json!({"city": "Lisbon"}))
        .await
        .expect("call");
    assert_eq!((r.is_error, r.text_content()), (None, "Lisbon".to_owned()));
}

#[tokio::test]
async fn adding_an_argument_never_changes_another_ones_shape() {
    let s = shapes_server();
    let a = json!({"type": "object", "properties": {"x": {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX}}, "required": ["x"], "description": "A struct."});
    assert_eq!(schema(&s, "one")["properties"]["a"], a);
    assert_eq!(schema(&s, "two")["properties"]["a"], a);
    assert_eq!(schema(&s, "one")["required"], json!(["a"]));
    assert_eq!(schema(&s, "two")["required"], json!(["a", "verbose"]));
    assert_eq!(
        schema(&s, "maybe")["properties"]["a"]["properties"],
        a["properties"]
    );
    assert_eq!(schema(&s, "maybe").get("required"), None);
    for (tool, args, want) in [
        ("one", json!({"a": {"x": 1}}), "1"),
        ("two", json!({"a": {"x": 2}, "verbose": true}), "2!"),
        ("maybe", json!({"a": {"x": 3}}), "3"),
        ("maybe", json!({}), "none"),
    ] {
        let r = s.call_tool(tool, args).await.expect("call");
        assert_eq!((r.is_error, r.text_content()), (None, want.to_owned()));
    }
}

#[tokio::test]
async fn args_takes_the_whole_arguments_object() {
    let s = shapes_server();
    assert_eq!(
        schema(&s, "whole"),
        json!({"type": "object", "properties": {"x": {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX}}, "required": ["x"], "description": "A struct."})
    );
    let r = s.call_tool("whole", json!({"x": 4})).await.expect("call");
    assert_eq!((r.is_error, r.text_content()), (None, "4".to_owned()));
}

#[test]
fn args_of_an_enum_or_a_string_newtype_is_a_build_error() {
    for (def, tool) in [
        (whole_units::tool(), "whole_units"),
        (whole_city::tool(), "whole_city"),
    ] {
        let err = McpServer::builder()
            .tool(def)
            .build()
            .expect_err("not an object");
        assert_eq!(
            err,
            BuildError::InputSchemaNotAnObject {
                tool: tool.to_owned(),
                found: "\"string\"".to_owned(),
            }
        );
        assert!(err.to_string().contains("#[args]"), "{err}");
    }
}

/// Sleep two seconds, blocking the thread.
#[mcp_tool]
fn nap(State(started): State<Arc<AtomicUsize>>) -> &'static str {
    started.fetch_add(1, Ordering::SeqCst);
    std::thread::sleep(Duration::from_secs(2));
    "rested"
}

/// On the test's single-threaded runtime, a sync tool that ran on the
/// runtime thread would hold every other request until it returned.
#[tokio::test(flavor = "current_thread")]
async fn sync_tools_run_off_the_runtime() {
    let started = Arc::new(AtomicUsize::new(0));
    let server = McpServer::builder()
        .tool(nap::tool())
        .state(Arc::clone(&started))
        .build()
        .expect("valid server");
    let client = TestClient::connect(server).await.expect("init");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for _ in 0..3 {
        let pending = client
            .start_request("tools/call", json!({"name": "nap", "arguments": {}}))
            .await;
        let tx = tx.clone();
        tokio::spawn(async move {
            let reply = pending.response(Duration::from_secs(60)).await;
            let _ = tx.send(("nap", reply));
        });
    }
    // The ping goes once the three naps are running (or, were they on the
    // runtime thread, once they have all returned).
    while started.load(Ordering::SeqCst) < 3 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let pending = client.start_request("ping", json!({})).await;
    tokio::spawn(async move {
        let reply = pending.response(Duration::from_secs(60)).await;
        let _ = tx.send(("ping", reply));
    });
    let mut order = Vec::new();
    while let Some((name, reply)) = rx.recv().await {
        let reply = reply.expect("a reply");
        assert!(reply.get("result").is_some(), "{reply}");
        order.push(name);
    }
    assert_eq!(order, ["ping", "nap", "nap", "nap"]);
}

#[derive(Clone)]
struct Config(String);

type AppState = State<Config>;

/// Greet with state.
#[mcp_tool]
fn greet(State(config): State<Config>, who: String) -> String {
    format!("{} {who}", config.0)
}

/// Greet with state under an alias.
#[mcp_tool]
async fn greet_aliased(config: AppState) -> String {
    config.0 .0
}

/// A resource reading state.
#[mcp_resource(uri = "config://greeting")]
fn greeting(State(config): State<Config>) -> String {
    config.0
}

/// A prompt reading state.
#[mcp_prompt]
async fn welcome(who: String, config: AppState) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!("{} {who}", config.0 .0))]
}

fn missing(build: Result<McpServer, BuildError>) -> (String, &'static str) {
    match build {
        Err(BuildError::MissingState { handler, type_name }) => (handler, type_name),
        other => panic!("expected MissingState, got {other:?}"),
    }
}

#[test]
fn state_never_registered_fails_the_build_naming_the_handler_and_type() {
    let config = std::any::type_name::<Config>();
    assert_eq!(
        missing(McpServer::builder().tool(greet::tool()).build()),
        ("tool `greet`".to_owned(), config)
    );
    assert_eq!(
        missing(McpServer::builder().tool(greet_aliased::tool()).build()),
        ("tool `greet_aliased`".to_owned(), config)
    );
    assert_eq!(
        missing(McpServer::builder().resource(greeting::resource()).build()),
        ("resource `config://greeting`".to_owned(), config)
    );
    assert_eq!(
        missing(McpServer::builder().prompt(welcome::prompt()).build()),
        ("prompt `welcome`".to_owned(), config)
    );
    let hand_written = McpToolDef::new("count", "Count", json!({"type": "object"}), |_, ctx| {
        let n = ctx
            .state::<Arc<AtomicUsize>>()
            .map(|n| n.load(Ordering::SeqCst));
        async move { format!("{n:?}") }
    })
    .requires_state::<Arc<AtomicUsize>>();
    let err = McpServer::builder()
        .tool(hand_written.clone())
        .build()
        .expect_err("missing");
    assert_eq!(
        missing(Err(err.clone())),
        (
            "tool `count`".to_owned(),
            std::any::type_name::<Arc<AtomicUsize>>()
        )
    );
    assert!(err.to_string().contains(".state(value)"), "{err}");
    // Registered, everything builds.
    McpServer::builder()
        .tool(greet::tool())
        .tool(greet_aliased::tool())
        .resource(greeting::resource())
        .prompt(welcome::prompt())
        .tool(hand_written)
        .state(Config("Hello".into()))
        .state(Arc::new(AtomicUsize::new(0)))
        .build()
        .expect("valid server");
}

#[tokio::test]
async fn sync_resources_and_prompts_still_answer() {
    let s = McpServer::builder()
        .resource(greeting::resource())
        .prompt(welcome::prompt())
        .state(Config("Hello".into()))
        .build()
        .expect("valid server");
    let client = TestClient::connect(s).await.expect("init");
    let read = client
        .request("resources/read", json!({"uri": "config://greeting"}))
        .await
        .expect("read");
    assert_eq!(read["contents"][0]["text"], "Hello");
    let got = client
        .request(
            "prompts/get",
            json!({"name": "welcome", "arguments": {"who": "Ada"}}),
        )
        .await
        .expect("get");
    assert_eq!(got["messages"][0]["content"]["text"], "Hello Ada");
}
