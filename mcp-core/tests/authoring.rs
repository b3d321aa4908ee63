//! Authoring that never surprises (issue 18): one rule for argument shapes,
//! sync functions off the runtime, state checked at `build()`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_core::testing::TestClient;
use mcp_core::{
    mcp_prompt, mcp_resource, mcp_tool, protocol::PromptMessage, BuildError, InvokeContext,
    McpServer, McpToolDef, State,
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

// ---------------------------------------------------------------------------
// The mistakes a first server still hits.

/// A colour, with documented names.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Color {
    /// Warm.
    Red,
    /// Calm.
    Green,
    Blue,
}

/// A filter with an optional field.
#[allow(dead_code)] // read through `Debug`
#[derive(Debug, Deserialize, JsonSchema)]
struct Range {
    from: u32,
    to: Option<u32>,
}

/// The whole arguments object, with optional fields of every kind.
#[allow(dead_code)] // read through `Debug`
#[derive(Debug, Deserialize, JsonSchema)]
struct Query {
    text: String,
    limit: Option<u32>,
    color: Option<Color>,
    units: Option<Units>,
    #[serde(default)]
    page: u16,
    range: Option<Range>,
}

/// Optional arguments a model may send as `null`.
#[mcp_tool]
fn query(#[args] q: Query) -> String {
    format!("{q:?}")
}

/// Plain optional arguments.
#[mcp_tool]
fn plain(count: u8, limit: Option<u32>, color: Option<Color>) -> String {
    format!("{count} {limit:?} {color:?}")
}

/// Integers of several widths.
#[mcp_tool]
fn widths(small: u8, id: u32, offset: i64, big: Option<u64>, ratio: f64) -> String {
    format!("{small} {id} {offset} {big:?} {ratio}")
}

fn mistakes_server() -> McpServer {
    McpServer::builder()
        .server_info("mistakes", "0")
        .tool(query::tool())
        .tool(plain::tool())
        .tool(widths::tool())
        .build()
        .expect("valid server")
}

/// What a call answers, from a JSON tree and from its text (both paths
/// must agree): the result's text and whether it is an error.
async fn call_both(s: &McpServer, tool: &str, args: Value) -> (Option<bool>, String) {
    let line = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": args}
    })
    .to_string();
    let out = s
        .handle_frame(line.as_bytes(), &mcp_core::transport::CallContext::new())
        .await
        .unwrap_or_default();
    let reply: Value = serde_json::from_slice(&out).unwrap_or_default();
    let tree = s.call_tool(tool, args).await.expect("call");
    assert_eq!(reply["result"], json!(tree), "text and tree disagree");
    (tree.is_error, tree.text_content())
}

/// Models send `null` for an optional parameter they leave out. It used to
/// be refused (`expected integer (uint32), received null`), even for an
/// `Option<enum>` whose listed schema offered `null`; it is taken as absent
/// now, on both argument paths, in nested objects too, and a
/// `#[serde(default)]` field gets its default. A required parameter given
/// `null` is still a clear error.
#[tokio::test]
async fn null_for_an_optional_argument_is_taken_as_absent() {
    let s = mistakes_server();
    let (err, text) = call_both(
        &s,
        "query",
        json!({"text": "t", "limit": null, "color": null, "units": null, "page": null,
               "range": {"from": 1, "to": null}}),
    )
    .await;
    assert_eq!(err, None, "{text}");
    assert_eq!(
        text,
        "Query { text: \"t\", limit: None, color: None, units: None, page: 0, \
         range: Some(Range { from: 1, to: None }) }"
    );
    let (err, text) = call_both(&s, "query", json!({"text": "t", "range": null})).await;
    assert_eq!(err, None, "{text}");
    let (err, text) = call_both(
        &s,
        "plain",
        json!({"count": 1, "limit": null, "color": null}),
    )
    .await;
    assert_eq!((err, text.as_str()), (None, "1 None None"));
    // Required: still refused, naming the field and what it takes.
    let (err, text) = call_both(&s, "plain", json!({"count": null})).await;
    assert_eq!(err, Some(true));
    assert!(
        text.contains("`count`: expected integer, received null"),
        "{text}"
    );
    let (err, text) = call_both(&s, "query", json!({"text": null})).await;
    assert_eq!(err, Some(true));
    assert!(
        text.contains("`text`: expected string, received null"),
        "{text}"
    );
    let (err, text) = call_both(&s, "query", json!({"text": "t", "range": {"from": null}})).await;
    assert_eq!(err, Some(true));
    assert!(text.contains("`range.from`: expected integer"), "{text}");
    // The listed schema no longer offers `null` where it means "absent".
    let listed = schema(&s, "query").to_string();
    assert!(!listed.contains("null"), "{listed}");
}

/// An enum whose variants have doc comments was listed as a `oneOf` of
/// `const`s, and a wrong value got "does not match any of the 3 allowed
/// shapes". It is listed as `type: string` with an `enum` of every name
/// (and its descriptions in a `oneOf` beside it), and a wrong value gets
/// the list of allowed names.
#[tokio::test]
async fn an_enum_of_documented_names_is_checked_as_a_list() {
    let s = mistakes_server();
    let color = &schema(&s, "plain")["properties"]["color"];
    assert_eq!(color["type"], "string", "{color}");
    let mut names: Vec<&str> = color["enum"]
        .as_array()
        .expect("enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["blue", "green", "red"], "{color}");
    let described = color["oneOf"].as_array().expect("described names");
    assert!(described.contains(&json!({"const": "red", "description": "Warm."})));
    assert!(described.contains(&json!({"const": "green", "description": "Calm."})));
    assert!(described.contains(&json!({"const": "blue"})));
    for tool in ["plain", "query"] {
        let args = if tool == "plain" {
            json!({"count": 1, "color": "purple"})
        } else {
            json!({"text": "t", "color": "purple"})
        };
        let (err, text) = call_both(&s, tool, args).await;
        assert_eq!(err, Some(true));
        assert!(text.contains("`color`: expected one of \""), "{text}");
        for name in ["\"red\"", "\"green\"", "\"blue\""] {
            assert!(text.contains(name), "{text}");
        }
        assert!(text.contains("received the string \"purple\""), "{text}");
        assert!(!text.contains("allowed shapes"), "{text}");
    }
    let (err, text) = call_both(&s, "plain", json!({"count": 1, "color": "green"})).await;
    assert_eq!((err, text.as_str()), (None, "1 None Some(Green)"));
}

/// Every `format` in `schema`, wherever it is.
fn formats(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(f)) = map.get("format") {
                out.push(f.clone());
            }
            map.values().for_each(|v| formats(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
        _ => {}
    }
}

/// Listed schemas carried schemars' own formats (`uint32`, `int64`,
/// `double`), which JSON Schema does not define and clients warn about.
/// Only standard formats are listed now; an integer's range is written as
/// `minimum`/`maximum` and still enforced by the argument checker.
#[tokio::test]
async fn listed_schemas_keep_only_standard_formats_and_integer_ranges() {
    let s = mistakes_server();
    for tool in ["query", "plain", "widths"] {
        let mut found = Vec::new();
        formats(&schema(&s, tool), &mut found);
        assert!(found.is_empty(), "{tool}: {found:?}");
    }
    let w = schema(&s, "widths");
    assert_eq!(
        w["properties"]["small"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    assert_eq!(
        w["properties"]["id"],
        json!({"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u32})
    );
    assert_eq!(
        w["properties"]["offset"],
        json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX})
    );
    assert_eq!(
        w["properties"]["big"],
        json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
    );
    assert_eq!(w["properties"]["ratio"], json!({"type": "number"}));
    let ok = json!({"small": 1, "id": 2, "offset": -3, "ratio": 0.5});
    assert_eq!(call_both(&s, "widths", ok).await.0, None);
    for (field, value, words) in [
        (
            "small",
            json!(300),
            "`small`: must be at most 255, received 300",
        ),
        ("id", json!(-1), "`id`: must be at least 0, received -1"),
        (
            "id",
            json!(4_294_967_296_u64),
            "`id`: must be at most 4294967295, received 4294967296",
        ),
    ] {
        let mut args = json!({"small": 1, "id": 2, "offset": -3, "ratio": 0.5});
        args[field] = value;
        let (err, text) = call_both(&s, "widths", args).await;
        assert_eq!(err, Some(true), "{field}");
        assert!(text.contains(words), "{text}");
    }
}

/// A standard format survives the rewrite.
#[allow(dead_code)] // read through `Debug`
#[derive(Debug, Deserialize, JsonSchema)]
struct Stamped {
    #[schemars(extend("format" = "date-time"))]
    at: String,
}

#[test]
fn a_standard_format_is_kept() {
    let schema = mcp_core::handler::schema_for::<Stamped>();
    assert_eq!(schema["properties"]["at"]["format"], "date-time");
}

/// An error type with only `Display`.
#[derive(Debug)]
struct Missing(&'static str);

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no such note: {}", self.0)
    }
}

/// A resource failing with a `String`.
#[mcp_resource(uri = "notes://string")]
fn note_string() -> Result<String, String> {
    Err("the notes are locked".to_owned())
}

/// A resource failing with an own `Display` error.
#[mcp_resource(uri = "notes://custom")]
async fn note_custom() -> Result<String, Missing> {
    Err(Missing("custom"))
}

/// A resource failing with a boxed error (the shape of `anyhow::Result`).
#[mcp_resource(uri = "notes://boxed")]
async fn note_boxed() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    Err("boxed failure".into())
}

/// A resource failing with a JSON-RPC error of its own: its code is kept.
#[mcp_resource(uri = "notes://coded")]
fn note_coded() -> Result<String, mcp_core::protocol::ErrorObject> {
    Err(mcp_core::protocol::ErrorObject::invalid_params("bad note"))
}

/// A prompt failing with a `String`.
#[mcp_prompt]
fn brief_string(topic: String) -> Result<String, String> {
    Err(format!("no brief on {topic}"))
}

/// A prompt failing with an own `Display` error.
#[mcp_prompt]
async fn brief_custom() -> Result<Vec<PromptMessage>, Missing> {
    Err(Missing("brief"))
}

/// A prompt failing with a boxed error.
#[mcp_prompt]
async fn brief_boxed() -> Result<PromptMessage, Box<dyn std::error::Error + Send + Sync>> {
    Err("boxed brief".into())
}

/// A resource or prompt function returning `Result<_, String>` (or
/// `anyhow::Result`, or an own `Display` error) did not compile, with an
/// error inside the macro's support code, while tools took any `Display`
/// error. Resources and prompts take any `Display` error now: it is the
/// JSON-RPC error of the request (`-32603` with the error's text, as a
/// tool's error result says it), and an `ErrorObject` keeps its code.
#[tokio::test]
async fn resources_and_prompts_take_any_display_error() {
    let s = McpServer::builder()
        .server_info("errors", "0")
        .resource(note_string::resource())
        .resource(note_custom::resource())
        .resource(note_boxed::resource())
        .resource(note_coded::resource())
        .prompt(brief_string::prompt())
        .prompt(brief_custom::prompt())
        .prompt(brief_boxed::prompt())
        .build()
        .expect("valid server");
    let client = TestClient::connect(s).await.expect("init");
    for (uri, code, message) in [
        ("notes://string", -32603, "the notes are locked"),
        ("notes://custom", -32603, "no such note: custom"),
        ("notes://boxed", -32603, "boxed failure"),
        ("notes://coded", -32602, "bad note"),
    ] {
        let err = client
            .request("resources/read", json!({"uri": uri}))
            .await
            .expect_err(uri);
        assert_eq!((err.code, err.message.as_str()), (code, message), "{uri}");
    }
    for (name, args, message) in [
        ("brief_string", json!({"topic": "rust"}), "no brief on rust"),
        ("brief_custom", json!({}), "no such note: brief"),
        ("brief_boxed", json!({}), "boxed brief"),
    ] {
        let err = client
            .request("prompts/get", json!({"name": name, "arguments": args}))
            .await
            .expect_err(name);
        assert_eq!(
            (err.code, err.message.as_str()),
            (-32603, message),
            "{name}"
        );
    }
}
