//! The attribute macros end to end: every supported argument shape and
//! return shape, schemas, argument errors, resources, templates and prompts.

use mcp_core::testing::TestClient;
use mcp_core::{
    mcp_prompt, mcp_resource, mcp_tool,
    protocol::{CallToolResult, Content, PromptMessage},
    InvokeContext, Json, McpServer, State,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Echo the input back.
#[mcp_tool]
async fn echo(#[arg(description = "The text to echo")] text: String) -> String {
    text
}

/// Add two numbers.
#[mcp_tool(name = "add", title = "Adder", read_only, idempotent)]
fn add_numbers(a: i64, b: i64, scale: Option<i64>) -> String {
    (a + b).saturating_mul(scale.unwrap_or(1)).to_string()
}

/// Arguments of `search`.
#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// How many results.
    limit: Option<u32>,
    filter: Option<Filter>,
}

#[derive(Deserialize, JsonSchema)]
struct Filter {
    /// Only this language.
    language: String,
}

/// Search with a struct of arguments.
#[mcp_tool(destructive = false, open_world)]
async fn search(#[args] args: SearchArgs, ctx: InvokeContext) -> Vec<Content> {
    let lang = args.filter.map(|f| f.language).unwrap_or_default();
    vec![
        Content::text(format!("{}:{}", args.query, args.limit.unwrap_or(10))),
        Content::text(format!("lang={lang};cancelled={}", ctx.is_cancelled())),
    ]
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    total: i64,
}

/// Sum a list into a structured result.
#[mcp_tool]
async fn sum(values: Vec<i64>) -> Json<Sum> {
    Json(Sum {
        total: values.iter().sum(),
    })
}

/// Fail when asked.
#[mcp_tool]
async fn maybe_fail(fail: bool) -> Result<&'static str, String> {
    if fail {
        Err("it failed as asked".to_owned())
    } else {
        Ok("fine")
    }
}

/// Do nothing.
#[mcp_tool]
async fn nothing(_ctx: &InvokeContext) {}

/// A full result.
#[mcp_tool]
async fn full() -> CallToolResult {
    CallToolResult::text("full")
        .with_structured(json!({"k": 1}).as_object().cloned().unwrap_or_default())
}

#[derive(Clone)]
struct Greeting(String);

/// Greet with application state.
#[mcp_tool]
async fn greet(State(greeting): State<Greeting>, who: String) -> String {
    format!("{} {who}", greeting.0)
}

/// Panic on purpose.
#[mcp_tool]
async fn boom() -> String {
    panic!("kaboom")
}

/// An argument whose own parsing panics (a bug in a hand-written
/// `Deserialize`): it runs before the tool's future exists.
#[derive(JsonSchema)]
struct Touchy(String);

impl<'de> Deserialize<'de> for Touchy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "boom" {
            panic!("kaboom while parsing");
        }
        Ok(Self(text))
    }
}

/// Echo an argument parsed by a panicking `Deserialize`.
#[mcp_tool]
async fn touchy(value: Touchy) -> String {
    value.0
}

/// The project notes.
#[mcp_resource(uri = "notes://project", mime_type = "text/markdown")]
async fn notes() -> String {
    "# Notes".to_owned()
}

/// Binary blob.
#[mcp_resource(uri = "blob://one", name = "one")]
fn blob() -> Vec<u8> {
    vec![0, 1, 2]
}

/// Log lines of one day.
#[mcp_resource(uri = "logs://{day}/{level}", mime_type = "text/plain")]
async fn day_log(day: u32, level: String) -> String {
    format!("day {day} at {level}")
}

/// Plan the week.
#[mcp_prompt]
async fn plan(
    #[arg(description = "Who the plan is for")] who: String,
    focus: Option<String>,
) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!(
        "Plan for {who}; focus {}",
        focus.unwrap_or_else(|| "balance".into())
    ))]
}

fn server() -> McpServer {
    McpServer::builder()
        .tool(echo::tool())
        .tool(add_numbers::tool())
        .tool(search::tool())
        .tool(sum::tool())
        .tool(maybe_fail::tool())
        .tool(nothing::tool())
        .tool(full::tool())
        .tool(greet::tool())
        .tool(boom::tool())
        .tool(touchy::tool())
        .resource(notes::resource())
        .resource(blob::resource())
        .resource(day_log::resource())
        .prompt(plan::prompt())
        .state(Greeting("Hello".into()))
        .build()
        .expect("valid server")
}

fn tool_json(server: &McpServer, name: &str) -> Value {
    let tool = server
        .list_tools()
        .into_iter()
        .find(|t| t.name == name)
        .expect("tool listed");
    serde_json::to_value(tool).expect("serializes")
}

#[tokio::test]
async fn functions_stay_callable_as_written() {
    assert_eq!(echo("x".into()).await, "x");
    assert_eq!(add_numbers(2, 3, None), "5");
    assert_eq!(day_log(3, "warn".into()).await, "day 3 at warn");
}

#[tokio::test]
async fn plain_arguments_become_properties() {
    let s = server();
    let echo = tool_json(&s, "echo");
    assert_eq!(echo["description"], "Echo the input back.");
    assert_eq!(
        echo["inputSchema"],
        json!({"type": "object", "properties": {"text": {"type": "string", "description": "The text to echo"}}, "required": ["text"]})
    );
    let add = tool_json(&s, "add");
    assert_eq!(add["title"], "Adder");
    assert_eq!(
        add["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true})
    );
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(add["inputSchema"]["properties"]["scale"]["type"], "integer");
    assert_eq!(
        s.call_tool("add", json!({"a": 2, "b": 3, "scale": 10}))
            .await
            .expect("call")
            .text_content(),
        "50"
    );
    assert_eq!(
        s.call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .expect("call")
            .text_content(),
        "5"
    );
}

#[tokio::test]
async fn struct_arguments_are_inlined_without_null_unions() {
    let s = server();
    let search = tool_json(&s, "search");
    let schema = &search["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert!(
        schema.get("$defs").is_none() && schema.get("$schema").is_none(),
        "{schema}"
    );
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(
        schema["properties"]["query"]["description"],
        "What to look for."
    );
    assert_eq!(schema["properties"]["limit"]["type"], "integer");
    assert_eq!(schema["properties"]["filter"]["type"], "object");
    assert_eq!(
        schema["properties"]["filter"]["properties"]["language"]["description"],
        "Only this language."
    );
    assert!(
        !schema.to_string().contains("null"),
        "no null unions: {schema}"
    );
    assert_eq!(
        search["annotations"],
        json!({"destructiveHint": false, "openWorldHint": true})
    );
    let r = s
        .call_tool(
            "search",
            json!({"query": "q", "filter": {"language": "rust"}}),
        )
        .await
        .expect("call");
    assert_eq!(r.text_content(), "q:10lang=rust;cancelled=false");
}

#[tokio::test]
async fn return_shapes_convert() {
    let s = server();
    let sum_tool = tool_json(&s, "sum");
    assert_eq!(
        sum_tool["outputSchema"]["properties"]["total"]["type"],
        "integer"
    );
    let r = s
        .call_tool("sum", json!({"values": [1, 2, 3]}))
        .await
        .expect("call");
    assert_eq!(
        r.structured_content,
        json!({"total": 6}).as_object().cloned()
    );
    assert_eq!(r.text_content(), r#"{"total":6}"#);
    let err = s
        .call_tool("maybe_fail", json!({"fail": true}))
        .await
        .expect("call");
    assert!(err.is_error());
    assert_eq!(err.text_content(), "it failed as asked");
    let ok = s
        .call_tool("maybe_fail", json!({"fail": false}))
        .await
        .expect("call");
    assert!(!ok.is_error());
    assert_eq!(ok.text_content(), "fine");
    let nothing = s.call_tool("nothing", json!({})).await.expect("call");
    assert!(nothing.content.is_empty() && !nothing.is_error());
    let full = s.call_tool("full", Value::Null).await.expect("call");
    assert_eq!(
        full.structured_content,
        json!({"k": 1}).as_object().cloned()
    );
    assert!(tool_json(&s, "nothing")["inputSchema"]["properties"]
        .as_object()
        .is_some_and(|p| p.is_empty()));
}

#[tokio::test]
async fn state_is_injected() {
    let s = server();
    assert!(tool_json(&s, "greet")["inputSchema"]["properties"]
        .get("greeting")
        .is_none());
    let r = s
        .call_tool("greet", json!({"who": "Ada"}))
        .await
        .expect("call");
    assert_eq!(r.text_content(), "Hello Ada");
}

#[test]
fn missing_state_fails_the_build_naming_the_tool_and_the_type() {
    let err = McpServer::builder()
        .tool(greet::tool())
        .build()
        .expect_err("no state");
    assert_eq!(
        err,
        mcp_core::BuildError::MissingState {
            handler: "tool `greet`".to_owned(),
            type_name: std::any::type_name::<Greeting>(),
        }
    );
}

#[tokio::test]
async fn bad_arguments_are_repairable_tool_errors() {
    let s = server();
    let cases = [
        (
            json!({"text": 5}),
            "`text`: expected string, received the integer 5",
        ),
        (json!({}), "`text`: missing required field (string)"),
        (
            json!({"text": null}),
            "`text`: expected string, received null",
        ),
        (
            json!({"txt": "hi"}),
            "`txt`: unknown field; did you mean `text`? Valid fields: text",
        ),
    ];
    for (args, expected) in cases {
        let r = s.call_tool("echo", args.clone()).await.expect("call");
        assert!(r.is_error(), "{args}");
        assert!(
            r.text_content().contains(expected),
            "{args}: {}",
            r.text_content()
        );
    }
    let r = s
        .call_tool("search", json!({"query": "q", "filter": {"language": 7}}))
        .await
        .expect("call");
    assert!(
        r.text_content()
            .contains("`filter.language`: expected string, received the integer 7"),
        "{}",
        r.text_content()
    );
    let r = s
        .call_tool("sum", json!({"values": [1, "two"]}))
        .await
        .expect("call");
    assert!(
        r.text_content().contains("`values[1]`: expected integer"),
        "{}",
        r.text_content()
    );
    let huge = "x".repeat(2 << 20);
    let r = s
        .call_tool("add", json!({"a": huge, "b": 1}))
        .await
        .expect("call");
    assert!(
        r.is_error() && r.text_content().len() < 1000,
        "error text stays short"
    );
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let r = s
        .call_tool("sum", json!({"values": deep}))
        .await
        .expect("call");
    assert!(r.is_error());
}

#[tokio::test]
async fn resources_and_templates() {
    let client = TestClient::connect(server()).await.expect("init");
    let list = client
        .request("resources/list", json!({}))
        .await
        .expect("list");
    assert_eq!(
        list["resources"][0],
        json!({"uri": "notes://project", "name": "notes", "description": "The project notes.", "mimeType": "text/markdown"})
    );
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .expect("templates");
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "logs://{day}/{level}"
    );
    let read = client
        .request("resources/read", json!({"uri": "logs://12/warn"}))
        .await
        .expect("read");
    assert_eq!(
        read["contents"][0],
        json!({"uri": "logs://12/warn", "mimeType": "text/plain", "text": "day 12 at warn"})
    );
    let bad = client
        .request("resources/read", json!({"uri": "logs://twelve/warn"}))
        .await
        .expect_err("parse failure");
    assert_eq!(bad.code, -32602);
    assert!(
        bad.message
            .contains("invalid value \"twelve\" for URI variable `day`"),
        "{}",
        bad.message
    );
    let blob = client
        .request("resources/read", json!({"uri": "blob://one"}))
        .await
        .expect("read");
    assert_eq!(blob["contents"][0]["blob"], "AAEC");
}

#[tokio::test]
async fn prompts_with_required_and_optional_arguments() {
    let client = TestClient::connect(server()).await.expect("init");
    let list = client
        .request("prompts/list", json!({}))
        .await
        .expect("list");
    assert_eq!(
        list["prompts"][0],
        json!({"name": "plan", "description": "Plan the week.", "arguments": [
            {"name": "who", "description": "Who the plan is for", "required": true},
            {"name": "focus", "required": false}
        ]})
    );
    let got = client
        .request(
            "prompts/get",
            json!({"name": "plan", "arguments": {"who": "Ada"}}),
        )
        .await
        .expect("get");
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Plan for Ada; focus balance"
    );
    let missing = client
        .request("prompts/get", json!({"name": "plan", "arguments": {}}))
        .await
        .expect_err("missing");
    assert_eq!(missing.code, -32602);
    assert!(missing.message.contains("`who`"), "{}", missing.message);
}

/// A handler panic as the client sees it: `-32603` with an error id, the
/// panic's message (every one here says "kaboom") never sent.
fn assert_hidden_panic(err: &mcp_core::protocol::ErrorObject) {
    assert_eq!(err.code, -32603);
    assert!(
        err.message.starts_with("Internal error (error id "),
        "{err:?}"
    );
    assert!(!err.to_value().to_string().contains("kaboom"), "{err:?}");
}

#[tokio::test]
async fn a_panicking_macro_tool_is_an_internal_error() {
    let client = TestClient::connect(server()).await.expect("init");
    let err = client
        .call_tool("boom", json!({}))
        .await
        .expect_err("panics");
    assert_hidden_panic(&err);
    assert_eq!(
        client
            .call_tool("echo", json!({"text": "still"}))
            .await
            .expect("alive")
            .text_content(),
        "still"
    );
}

#[tokio::test]
async fn a_panic_while_parsing_arguments_is_an_internal_error_for_that_call() {
    let client = TestClient::connect(server()).await.expect("init");
    let err = client
        .call_tool("touchy", json!({"value": "boom"}))
        .await
        .expect_err("panics");
    assert_hidden_panic(&err);
    let ok = client
        .call_tool("touchy", json!({"value": "fine"}))
        .await
        .expect("alive");
    assert_eq!(ok.text_content(), "fine");
}
