//! A tool's arguments in a request decoded from bytes (as the transports
//! give it) get exactly the answer the same arguments get as JSON
//! (`McpServer::call_tool`): decoding a frame changes no result and no
//! error message of the schema checker.

use mcp_core::{mcp_tool, transport::CallContext, McpServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// Echo the input back.
#[mcp_tool]
async fn echo(text: String) -> String {
    text
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Mode {
    /// Quick and rough (a documented name: listed with its description).
    Fast,
    Slow,
}

#[derive(Deserialize, JsonSchema)]
struct Filter {
    /// Only this language.
    language: String,
}

/// Every kind of argument the checker looks at.
#[mcp_tool]
async fn search(
    query: String,
    limit: Option<u8>,
    #[arg(description = "How")] mode: Option<Mode>,
    tags: Option<Vec<String>>,
    filter: Option<Filter>,
    ratio: Option<f64>,
) -> String {
    format!(
        "{query} {limit:?} {} {tags:?} {} {ratio:?}",
        mode.map_or("-", |m| match m {
            Mode::Fast => "fast",
            Mode::Slow => "slow",
        }),
        filter.map_or_else(String::new, |f| f.language)
    )
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Strict {
    id: u32,
    #[schemars(range(min = 1, max = 9))]
    level: i64,
}

/// A whole arguments struct with a range the type does not enforce.
#[mcp_tool]
async fn strict(#[args] args: Strict) -> String {
    format!("{} {}", args.id, args.level)
}

#[tokio::test]
async fn answers_from_text_equal_answers_from_json() {
    let server = McpServer::builder()
        .server_info("text", "0")
        .tool(echo::tool())
        .tool(search::tool())
        .tool(strict::tool())
        .build()
        .expect("server");
    let cases = [
        ("echo", r#"{"text":"hi"}"#),
        ("echo", r#"{"text":"caf\u00e9 \"q\""}"#),
        ("echo", r#"{}"#),
        ("echo", r#"{"text":1}"#),
        ("echo", r#"{"txet":"hi"}"#),
        ("echo", r#"{"text":"a","text":"b"}"#),
        ("echo", r#"{"text":"hi","extra":null}"#),
        ("search", r#"{"query":"q"}"#),
        (
            "search",
            r#"{"query":"q","limit":7,"mode":"fast","tags":["a"],"ratio":1}"#,
        ),
        ("search", r#"{"query":"q","limit":300}"#),
        ("search", r#"{"query":"q","limit":-1}"#),
        ("search", r#"{"query":"q","limit":2.5}"#),
        ("search", r#"{"query":"q","mode":"medium"}"#),
        ("search", r#"{"query":"q","tags":["a",2]}"#),
        ("search", r#"{"query":"q","filter":{"language":"en"}}"#),
        ("search", r#"{"query":"q","filter":{}}"#),
        ("search", r#"{"query":"q","filter":null,"mode":null}"#),
        ("strict", r#"{"id":1,"level":5}"#),
        ("strict", r#"{"id":1,"level":10}"#),
        ("strict", r#"{"id":1,"level":5,"more":true}"#),
        ("strict", r#"{"id":-1,"level":5}"#),
        // `null` for an optional argument is absent; for a required one it
        // is refused, either way the arguments arrive.
        (
            "search",
            r#"{"query":"q","limit":null,"tags":null,"ratio":null}"#,
        ),
        ("search", r#"{"query":"q","filter":{"language":null}}"#),
        ("search", r#"{"query":null}"#),
        ("strict", r#"{"id":null,"level":5}"#),
        ("strict", r#"{"id":1,"level":5,"more":null}"#),
        ("echo", r#"{"text":null}"#),
    ];
    let ctx = CallContext::new();
    for (tool, args) in cases {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
        );
        let out = server
            .handle_frame(line.as_bytes(), &ctx)
            .await
            .unwrap_or_default();
        let reply: Value = serde_json::from_slice(&out).unwrap_or_default();
        let from_text = &reply["result"];
        let args: Value = serde_json::from_str(args).unwrap_or_default();
        let from_json = server.call_tool(tool, args).await.map(|r| json!(r));
        assert_eq!(
            Some(from_text),
            from_json.as_ref().ok(),
            "{tool} {line}: {reply}"
        );
    }
}

#[derive(Deserialize, JsonSchema)]
struct Item {
    name: String,
    #[serde(default)]
    count: u16,
}

/// Counts the items of each name.
#[mcp_tool]
async fn tally(items: Vec<Item>, note: Option<String>) -> String {
    let counts: Vec<String> = items
        .iter()
        .map(|i| format!("{}={}", i.name, i.count))
        .collect();
    format!("{} {note:?}", counts.join(","))
}

/// A `null` for an optional field is dropped wherever it sits (in an
/// array item too), so the field gets its default; arguments without any
/// `null` are deserialized as they are.
#[tokio::test]
async fn nulls_for_optional_fields_are_absent_at_any_depth() {
    let server = McpServer::builder()
        .server_info("text", "0")
        .tool(tally::tool())
        .build()
        .expect("server");
    for (args, expected) in [
        (
            json!({"items": [{"name": "a", "count": 2}], "note": "n"}),
            "a=2 Some(\"n\")",
        ),
        (
            json!({"items": [{"name": "a", "count": null}, {"name": "b"}]}),
            "a=0,b=0 None",
        ),
        (json!({"items": [], "note": null}), " None"),
    ] {
        let result = server.call_tool("tally", args.clone()).await.expect("call");
        assert!(!result.is_error(), "{args}: {result:?}");
        assert_eq!(result.text_content(), expected, "{args}");
    }
    let refused = server
        .call_tool("tally", json!({"items": [{"name": null}]}))
        .await
        .expect("call");
    assert!(refused.is_error(), "a null for a required field is refused");
    assert!(
        refused
            .text_content()
            .contains("`items[0].name`: expected string, received null"),
        "{}",
        refused.text_content()
    );
}
