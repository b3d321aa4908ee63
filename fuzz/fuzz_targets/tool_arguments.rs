//! A macro tool's arguments, checked against its schema and deserialized
//! into its typed arguments (`handler/args.rs`), fed arbitrary text in a
//! `tools/call` frame. Any input must be answered with JSON-RPC, without a
//! panic. For every input that is a JSON object: the answer is a tool
//! result (these tools never fail on their own, so an `isError` result is
//! the checker's, and its text says `Invalid arguments`), and it is the
//! answer the same arguments get as a JSON tree through
//! `McpServer::call_tool` (decoding a frame changes nothing in them).
//!
//! The first byte picks the tool, the rest is the `arguments` text. The
//! tools cover what schemars derives from argument types: strings, integer
//! widths and ranges, floats, booleans, string enums, tagged and untagged
//! enums, nested and closed structs, arrays, tuples, maps, options, renamed,
//! aliased and flattened fields, free JSON values.

#![no_main]
// The argument types are read only through `Debug` (the tools format what
// they were given), which dead-code analysis does not count.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_core::{mcp_tool, transport::CallContext, McpServer};
use mcp_core_fuzz::{assert_json, assert_jsonrpc, runtime};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// Echoes its text.
#[mcp_tool]
async fn echo(text: String) -> String {
    text
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Fast,
    Slow,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Filter {
    /// Only this language.
    language: String,
    /// Lowest score.
    min_score: Option<f32>,
}

/// Optional arguments of every simple kind.
#[mcp_tool]
async fn search(
    query: String,
    limit: Option<u8>,
    #[arg(description = "How")] mode: Option<Mode>,
    tags: Option<Vec<String>>,
    filter: Option<Filter>,
    ratio: Option<f64>,
    exact: Option<bool>,
) -> String {
    format!("{query} {limit:?} {mode:?} {tags:?} {filter:?} {ratio:?} {exact:?}")
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Strict {
    id: u32,
    #[schemars(range(min = 1, max = 9))]
    level: i64,
    #[serde(default)]
    note: String,
}

/// A closed arguments struct with a range its type does not enforce.
#[mcp_tool]
async fn strict(#[args] args: Strict) -> String {
    format!("{args:?}")
}

/// Integers of every width and sign, and a float.
#[mcp_tool]
async fn numbers(a: i8, b: u64, c: i128, d: Option<u16>, e: f32, f: usize) -> String {
    format!("{a} {b} {c} {d:?} {e} {f}")
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Item {
    name: String,
    #[serde(default)]
    count: u16,
    #[serde(default)]
    modes: Vec<Mode>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Shape {
    Circle { radius: f64 },
    Square { side: u32 },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum IdOrName {
    Id(u64),
    Name(String),
}

/// Nested arrays and objects, tuples, maps, tagged and untagged enums.
#[mcp_tool]
async fn nested(
    items: Vec<Item>,
    pair: Option<(i32, String)>,
    labels: Option<BTreeMap<String, i32>>,
    shape: Option<Shape>,
    who: Option<IdOrName>,
    grid: Option<Vec<Vec<u8>>>,
) -> String {
    format!("{items:?} {pair:?} {labels:?} {shape:?} {who:?} {grid:?}")
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Extra {
    #[serde(rename = "Level", alias = "lvl")]
    level: Option<u8>,
    #[serde(flatten)]
    rest: BTreeMap<String, Value>,
}

/// What the other tools leave out: wide unsigned integers, characters,
/// free JSON values, renamed and aliased fields, flattened maps.
#[mcp_tool]
async fn misc(
    big: Option<u128>,
    letter: Option<char>,
    any: Option<Value>,
    extra: Option<Extra>,
    small: Option<i16>,
) -> String {
    format!("{big:?} {letter:?} {any:?} {extra:?} {small:?}")
}

const TOOLS: [&str; 6] = ["echo", "search", "strict", "numbers", "nested", "misc"];

fn shared() -> &'static (tokio::runtime::Runtime, McpServer) {
    static SHARED: OnceLock<(tokio::runtime::Runtime, McpServer)> = OnceLock::new();
    SHARED.get_or_init(|| {
        let rt = runtime();
        let server = rt.block_on(async {
            McpServer::builder()
                .server_info("fuzz-arguments", "0.0.0")
                // Results are compared with `call_tool`'s: sent whole, never
                // cut with a link of their own random id.
                .no_result_limit()
                .tool(echo::tool())
                .tool(search::tool())
                .tool(strict::tool())
                .tool(numbers::tool())
                .tool(nested::tool())
                .tool(misc::tool())
                .build()
                .unwrap_or_else(|e| panic!("fixture: {e}"))
        });
        (rt, server)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, args)) = data.split_first() else {
        return;
    };
    let tool = TOOLS[usize::from(pick) % TOOLS.len()];
    let (rt, server) = shared();
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":"#
    )
    .into_bytes();
    line.extend_from_slice(args);
    line.extend_from_slice(b"}}");
    // Only arguments that are one JSON object on their own are compared:
    // anything else may change what the whole line means (even make it a
    // notification, which has no reply).
    let tree = match serde_json::from_slice::<Value>(args) {
        Ok(tree @ Value::Object(_)) => Some(tree),
        _ => None,
    };
    let out = rt.block_on(server.handle_frame(&line, &CallContext::new()));
    let Some(out) = out else {
        assert!(
            tree.is_none(),
            "no reply to a request: {}",
            String::from_utf8_lossy(&line)
        );
        return;
    };
    let reply = assert_json("tools/call", &line, &out);
    assert_jsonrpc("tools/call", &line, &reply);
    let Some(tree) = tree else {
        return;
    };
    let result = reply.get("result").unwrap_or_else(|| {
        panic!(
            "{tool}: an arguments object got no tool result\n  arguments: {}\n  reply: {}",
            String::from_utf8_lossy(args),
            String::from_utf8_lossy(&out)
        )
    });
    if result.get("isError") == Some(&Value::Bool(true)) {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("Invalid arguments"),
            "{tool}: an error that is not the checker's\n  arguments: {}\n  reply: {}",
            String::from_utf8_lossy(args),
            String::from_utf8_lossy(&out)
        );
    }
    let from_tree = match rt.block_on(server.call_tool(tool, tree)) {
        Ok(result) => json!({"result": result}),
        Err(error) => json!({"error": error}),
    };
    assert_eq!(
        Some(result),
        from_tree.get("result"),
        "{tool}: arguments in a frame and as a tree disagree\n  arguments: {}\n  reply: {}",
        String::from_utf8_lossy(args),
        String::from_utf8_lossy(&out)
    );
});
