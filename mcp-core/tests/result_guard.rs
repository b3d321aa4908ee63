//! The result size guard: results within the limit pass untouched; over
//! it, the result is cut at a clean boundary (whole blocks, then a line,
//! then a character) with a note and a `resource_link` to the whole, kept
//! for the same principal only, read back page by page (the pages
//! concatenate to the whole), expiring when idle, bounded per principal
//! apart from user state; `fail` refuses instead; per-tool and per-server
//! settings; both eras.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_core::handler::ResultLimit;
use mcp_core::protocol::{CallToolResult, Content};
use mcp_core::state::{PrincipalState, Stateful};
use mcp_core::storage::{
    InMemoryStateStore, StateKey, StateLimits, StateLookup, StateStore, StateStoreError,
    StateWrite, Storage,
};
use mcp_core::transport::CallContext;
use mcp_core::{mcp_tool, InvokeContext, Json, McpServer, McpServerBuilder, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

mod common;
use common::guard;

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

/// Returns `lines` numbered lines of text (each 32 bytes).
#[mcp_tool]
async fn lines(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("line {i:>10} of the big text\n"))
        .collect()
}

/// Returns `n` copies of `text`, with no newline.
#[mcp_tool]
async fn repeat(text: String, n: usize) -> String {
    text.repeat(n)
}

/// Returns `n` image blocks of `kb` KiB each.
#[mcp_tool]
async fn images(n: usize, kb: usize) -> CallToolResult {
    let block = Content::image(&vec![7u8; kb * 1024], "image/png");
    let mut result = CallToolResult::text("images follow");
    result.content.extend(std::iter::repeat_n(block, n));
    result
}

#[derive(Serialize, schemars::JsonSchema)]
struct Rows {
    rows: Vec<String>,
}

/// Returns `n` rows as structured content.
#[mcp_tool]
async fn rows(n: usize) -> Json<Rows> {
    Json(Rows {
        rows: (0..n).map(|i| format!("row {i:>8}")).collect(),
    })
}

#[derive(Default, Serialize, Deserialize)]
struct Visits(u32);

impl Stateful for Visits {
    const KIND: &'static str = "visits";
    const MINTED_BY: &'static str = "visit";
}

/// Counts the caller's visits (user state).
#[mcp_tool]
async fn visit(ctx: &InvokeContext) -> Result<Json<u32>, ToolError> {
    let n = PrincipalState::<Visits>::update(ctx, |v| {
        v.0 += 1;
        v.0
    })
    .await?;
    Ok(Json(n))
}

/// Refused over 2 KiB (the macro keys).
#[mcp_tool(max_result_bytes = 2048, result_over_limit = "fail")]
async fn strict(n: usize) -> String {
    "y".repeat(n)
}

/// Cut over 4 KiB (the macro key).
#[mcp_tool(max_result_bytes = 4096)]
async fn small(n: usize) -> String {
    "z\n".repeat(n)
}

/// Whole, always (the macro key).
#[mcp_tool(no_result_limit)]
async fn unlimited(n: usize) -> String {
    "w".repeat(n)
}

fn builder() -> McpServerBuilder {
    McpServer::builder()
        .server_info("guard-test", "1.0.0")
        .tool(lines::tool())
        .tool(repeat::tool())
        .tool(images::tool())
        .tool(rows::tool())
        .tool(visit::tool())
}

fn server() -> McpServer {
    builder().build().expect("server builds")
}

/// One request as `principal`, in the 2026-07-28 era (`modern`) or the
/// legacy one; the whole reply.
async fn ask(
    server: &McpServer,
    principal: &str,
    modern: bool,
    method: &str,
    mut params: Value,
) -> Value {
    static IDS: AtomicUsize = AtomicUsize::new(1);
    let id = IDS.fetch_add(1, Ordering::Relaxed);
    if modern {
        params["_meta"] = json!({PV: "2026-07-28", CAPS: {}});
    }
    let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let ctx = CallContext::new().with_principal(principal);
    let shown = format!("{method} as {principal:?}");
    guard(&shown, server.handle_message(message, &ctx))
        .await
        .unwrap_or_else(|| panic!("no reply to {shown}"))
}

async fn call(server: &McpServer, principal: &str, modern: bool, tool: &str, args: Value) -> Value {
    let reply = ask(
        server,
        principal,
        modern,
        "tools/call",
        json!({"name": tool, "arguments": args}),
    )
    .await;
    assert!(reply.get("error").is_none(), "protocol error: {reply}");
    reply["result"].clone()
}

/// The size the guard measures: `content` and `structuredContent` as JSON.
fn measured(result: &Value) -> usize {
    let mut m = serde_json::Map::new();
    m.insert("content".into(), result["content"].clone());
    if let Some(s) = result.get("structuredContent") {
        m.insert("structuredContent".into(), s.clone());
    }
    serde_json::to_string(&m).expect("json").len()
}

/// The `resource_link` of a cut result.
fn link(result: &Value) -> String {
    let blocks = result["content"].as_array().expect("content");
    let link = blocks
        .iter()
        .find(|b| b["type"] == "resource_link")
        .unwrap_or_else(|| panic!("no resource_link in {result}"));
    link["uri"].as_str().expect("uri").to_owned()
}

/// The note of a cut result (the last text block).
fn note(result: &Value) -> String {
    let blocks = result["content"].as_array().expect("content");
    let note = blocks
        .iter()
        .rev()
        .find(|b| b["type"] == "text")
        .expect("a note");
    note["text"].as_str().expect("text").to_owned()
}

/// Reads every page of a kept result as `principal`; checks each page's
/// size against `limit`; the concatenated text.
async fn read_all(
    server: &McpServer,
    principal: &str,
    modern: bool,
    uri: &str,
    limit: usize,
) -> String {
    let mut whole = String::new();
    let mut next = Some(uri.to_owned());
    let mut pages = 0;
    while let Some(uri) = next.take() {
        let reply = ask(
            server,
            principal,
            modern,
            "resources/read",
            json!({"uri": uri}),
        )
        .await;
        let result = &reply["result"];
        let page = &result["contents"][0];
        assert_eq!(page["uri"], uri.as_str(), "{reply}");
        assert_eq!(page["_meta"]["offset"], whole.len(), "{reply}");
        let size = serde_json::to_string(result).expect("json").len();
        assert!(
            size <= limit,
            "a page of {size} bytes, over the limit {limit}"
        );
        whole.push_str(page["text"].as_str().expect("page text"));
        next = page["_meta"]["nextUri"].as_str().map(str::to_owned);
        pages += 1;
        assert!(pages < 10_000, "paging does not end");
    }
    whole
}

#[tokio::test]
async fn a_result_within_the_limit_is_sent_untouched() {
    let server = server();
    let result = call(&server, "alice", true, "lines", json!({"lines": 3})).await;
    assert_eq!(
        result["content"].as_array().map(Vec::len),
        Some(1),
        "{result}"
    );
    assert_eq!(
        result["content"][0]["text"].as_str().map(str::len),
        Some(96)
    );
    // Just under the default limit: still whole.
    let result = call(&server, "alice", true, "lines", json!({"lines": 3_000})).await;
    assert_eq!(result["content"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        result["content"][0]["text"].as_str().map(str::len),
        Some(96_000)
    );
}

async fn cut_and_read_back(modern: bool) {
    let server = server();
    if !modern {
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        let reply = ask(&server, "alice", false, "initialize", init).await;
        assert_eq!(reply["result"]["protocolVersion"], "2025-06-18", "{reply}");
    }
    let full = call(&server, "alice", modern, "lines", json!({"lines": 10_000})).await;
    let blocks = full["content"].as_array().expect("content");
    assert_eq!(blocks.len(), 3, "text, note, link: {full}");
    let size = measured(&full);
    assert!(size <= 102_400, "cut result is {size} bytes");
    assert!(size > 90_000, "cut far below the limit: {size}");
    let kept_text = blocks[0]["text"].as_str().expect("text");
    let original: String = (0..10_000)
        .map(|i| format!("line {i:>10} of the big text\n"))
        .collect();
    assert!(kept_text.ends_with('\n'), "cut inside a line");
    assert!(original.starts_with(kept_text));
    let note = note(&full);
    assert!(note.contains("Result cut"), "{note}");
    let total = json!({"content": [{"type": "text", "text": original}]})
        .to_string()
        .len();
    assert!(note.contains(&format!("of its {total} bytes")), "{note}");
    assert!(note.contains("resources/read"), "{note}");
    let uri = link(&full);
    assert!(uri.starts_with("mcp-result://"), "{uri}");
    assert_eq!(uri.len(), "mcp-result://".len() + 32, "a 128-bit id: {uri}");
    assert!(note.contains(&uri), "{note}");

    let whole = read_all(&server, "alice", modern, &uri, 102_400).await;
    let parsed: Value = serde_json::from_str(&whole).expect("the pages make the result's JSON");
    assert_eq!(parsed["content"][0]["text"], original.as_str());
    assert_eq!(parsed["content"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn over_the_limit_a_result_is_cut_and_read_back_in_the_2026_era() {
    cut_and_read_back(true).await;
}

#[tokio::test]
async fn over_the_limit_a_result_is_cut_and_read_back_in_the_legacy_era() {
    cut_and_read_back(false).await;
}

/// A client of 2025-03-26 (or of no negotiated revision, which the spec
/// says to take as 2025-03-26) gets the URI in the note only.
async fn no_link_before_2025_06_18(initialize: Option<&str>) {
    let server = server();
    if let Some(version) = initialize {
        let init = json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}});
        let reply = ask(&server, "alice", false, "initialize", init).await;
        assert_eq!(reply["result"]["protocolVersion"], version, "{reply}");
    }
    let result = call(&server, "alice", false, "lines", json!({"lines": 10_000})).await;
    let types: Vec<&str> = result["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|b| b["type"].as_str())
        .collect();
    assert_eq!(types, ["text", "text"], "no resource_link block");
    let note = note(&result);
    let at = note.find("mcp-result://").expect("the URI in the note");
    let uri = &note[at..at + "mcp-result://".len() + 32];
    let whole = read_all(&server, "alice", false, uri, 102_400).await;
    assert!(serde_json::from_str::<Value>(&whole).is_ok());
}

#[tokio::test]
async fn a_client_older_than_resource_links_gets_the_uri_in_the_note_only() {
    no_link_before_2025_06_18(Some("2025-03-26")).await;
}

#[tokio::test]
async fn a_legacy_request_with_no_negotiated_revision_gets_the_uri_in_the_note_only() {
    no_link_before_2025_06_18(None).await;
}

#[tokio::test]
async fn small_pages_concatenate_exactly_to_the_original_json() {
    let server = builder()
        .result_limit(ResultLimit::bytes(4096))
        .build()
        .expect("builds");
    // Escapes, multi-byte characters and no newline at all.
    let text = "é\"€\\😀\n\tx";
    let result = call(
        &server,
        "alice",
        true,
        "repeat",
        json!({"text": text, "n": 3_000}),
    )
    .await;
    assert!(measured(&result) <= 4096, "{}", measured(&result));
    let uri = link(&result);
    let whole = read_all(&server, "alice", true, &uri, 4096).await;
    let parsed: Value = serde_json::from_str(&whole).expect("json");
    assert_eq!(parsed["content"][0]["text"], text.repeat(3_000).as_str());
    // A page offset inside a character, or past the end, is refused.
    let inside = whole.find('é').expect("a two-byte character") + 1;
    for from in [inside, whole.len(), whole.len() + 1] {
        let bad = format!("{uri}?from={from}");
        let reply = ask(
            &server,
            "alice",
            true,
            "resources/read",
            json!({"uri": bad}),
        )
        .await;
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
    }
}

#[tokio::test]
async fn a_text_with_no_newline_is_cut_at_a_character_boundary() {
    let server = builder()
        .result_limit(ResultLimit::bytes(2048))
        .build()
        .expect("builds");
    let text = "aé€😀";
    let result = call(
        &server,
        "alice",
        true,
        "repeat",
        json!({"text": text, "n": 1_000}),
    )
    .await;
    let kept = result["content"][0]["text"].as_str().expect("text");
    assert!(!kept.is_empty());
    assert!(text.repeat(1_000).starts_with(kept));
    assert!(measured(&result) <= 2048);
    // Only a whole character is dropped short of the room left.
    assert!(
        measured(&result) > 2048 - 4 - 2 * 400,
        "{}",
        measured(&result)
    );
}

#[tokio::test]
async fn blocks_are_kept_whole_before_any_is_cut() {
    let server = server();
    // The text block and one 40 KiB image (about 55 KiB in base64) fit;
    // the second image does not and is left out whole.
    let result = call(&server, "alice", true, "images", json!({"n": 3, "kb": 40})).await;
    let blocks = result["content"].as_array().expect("content");
    let types: Vec<&str> = blocks.iter().filter_map(|b| b["type"].as_str()).collect();
    assert_eq!(
        types,
        ["text", "image", "text", "resource_link"],
        "{types:?}"
    );
    assert_eq!(blocks[0]["text"], "images follow");
    assert_eq!(
        blocks[1]["data"].as_str().map(str::len),
        Some(40 * 1024 / 3 * 4 + 4)
    );
    assert!(measured(&result) <= 102_400);
}

#[tokio::test]
async fn structured_content_alone_over_the_limit_is_left_out_with_a_note() {
    let server = server();
    // 6,000 rows: about 80 KiB of structured content, the same again as
    // text: the text is cut, the structured content kept.
    let result = call(&server, "alice", true, "rows", json!({"n": 6_000})).await;
    assert!(result["structuredContent"]["rows"].is_array(), "kept");
    assert!(measured(&result) <= 102_400);
    // 10,000 rows: the structured content alone is over; it is left out.
    let result = call(&server, "alice", true, "rows", json!({"n": 10_000})).await;
    assert!(
        result.get("structuredContent").is_none(),
        "{}",
        note(&result)
    );
    assert!(
        note(&result).contains("structuredContent"),
        "{}",
        note(&result)
    );
    assert!(measured(&result) <= 102_400);
}

#[tokio::test]
async fn fail_mode_refuses_with_the_sizes() {
    let server = builder()
        .result_limit(ResultLimit::bytes(2048).fail())
        .build()
        .expect("builds");
    let result = call(&server, "alice", true, "lines", json!({"lines": 100})).await;
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().expect("text");
    let size = 100 * 32 + r#"{"content":[{"type":"text","text":""}]}"#.len() + 100;
    assert!(text.contains(&format!("was {size} bytes")), "{text}");
    assert!(text.contains("over the limit of 2048 bytes"), "{text}");
    // Within the limit: sent.
    let small = call(&server, "alice", true, "lines", json!({"lines": 10})).await;
    assert_ne!(small["isError"], true);
}

#[tokio::test]
async fn a_tool_limit_overrides_the_server_and_either_can_be_off() {
    let server = McpServer::builder()
        .no_result_limit()
        .tool(lines::tool().with_result_limit(ResultLimit::bytes(4096)))
        .tool(repeat::tool())
        .build()
        .expect("builds");
    let own = call(&server, "alice", true, "lines", json!({"lines": 1_000})).await;
    assert!(measured(&own) <= 4096);
    let off = call(
        &server,
        "alice",
        true,
        "repeat",
        json!({"text": "x", "n": 200_000}),
    )
    .await;
    assert_eq!(off["content"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        off["content"][0]["text"].as_str().map(str::len),
        Some(200_000)
    );

    let server = McpServer::builder()
        .tool(lines::tool().without_result_limit())
        .tool(repeat::tool())
        .build()
        .expect("builds");
    let off = call(&server, "alice", true, "lines", json!({"lines": 10_000})).await;
    assert_eq!(
        off["content"][0]["text"].as_str().map(str::len),
        Some(320_000)
    );
    let guarded = call(
        &server,
        "alice",
        true,
        "repeat",
        json!({"text": "x", "n": 200_000}),
    )
    .await;
    assert!(measured(&guarded) <= 102_400);
}

#[tokio::test]
async fn the_macro_keys_set_the_tool_limit() {
    let server = McpServer::builder()
        .result_limit(ResultLimit::bytes(1024))
        .tool(strict::tool())
        .tool(small::tool())
        .tool(unlimited::tool())
        .build()
        .expect("builds");
    let refused = call(&server, "alice", true, "strict", json!({"n": 3000})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("over the limit of 2048 bytes"), "{text}");
    let fits = call(&server, "alice", true, "strict", json!({"n": 1500})).await;
    assert_ne!(fits["isError"], true, "{fits}");
    let cut = call(&server, "alice", true, "small", json!({"n": 3000})).await;
    let size = measured(&cut);
    assert!(size <= 4096 && size > 3000, "{size}");
    let whole = call(&server, "alice", true, "unlimited", json!({"n": 300_000})).await;
    assert_eq!(
        whole["content"][0]["text"].as_str().map(str::len),
        Some(300_000)
    );
}

#[tokio::test]
async fn another_principal_gets_the_answer_of_an_unknown_uri() {
    let server = server();
    let result = call(&server, "alice", true, "lines", json!({"lines": 10_000})).await;
    let uri = link(&result);
    let never = format!("mcp-result://{}", "0123456789abcdef".repeat(2));
    let unknown = |reply: &Value, uri: &str| {
        assert_eq!(
            reply["error"],
            json!({"code": -32602, "message": format!("Unknown resource: {uri}"), "data": {"uri": uri}}),
            "{reply}"
        );
    };
    let made_up = ask(
        &server,
        "alice",
        true,
        "resources/read",
        json!({"uri": never}),
    )
    .await;
    unknown(&made_up, &never);
    // Bob, and a principal crafted to look like Alice's kept results' key.
    for thief in ["bob", "", "\u{0}mcp-result\u{0}alice", "alice\u{0}"] {
        for era in [true, false] {
            let page2 = format!("{uri}?from=1000");
            for target in [uri.as_str(), page2.as_str()] {
                let reply = ask(
                    &server,
                    thief,
                    era,
                    "resources/read",
                    json!({"uri": target}),
                )
                .await;
                unknown(&reply, target);
            }
        }
    }
    // Alice still reads it.
    let mine = ask(
        &server,
        "alice",
        true,
        "resources/read",
        json!({"uri": uri}),
    )
    .await;
    assert!(mine["result"]["contents"][0]["text"].is_string(), "{mine}");
}

#[tokio::test(start_paused = true)]
async fn a_kept_result_expires_when_idle() {
    let server = server();
    let result = call(&server, "alice", true, "lines", json!({"lines": 10_000})).await;
    let uri = link(&result);
    // Reads restart the idle time.
    for _ in 0..3 {
        tokio::time::advance(Duration::from_secs(9 * 60)).await;
        let reply = ask(
            &server,
            "alice",
            true,
            "resources/read",
            json!({"uri": uri}),
        )
        .await;
        assert!(reply["result"].is_object(), "{reply}");
    }
    tokio::time::advance(Duration::from_secs(11 * 60)).await;
    let reply = ask(
        &server,
        "alice",
        true,
        "resources/read",
        json!({"uri": uri}),
    )
    .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("expired"), "{message}");
}

#[tokio::test]
async fn kept_results_have_their_own_bound_apart_from_user_state() {
    // User state of 200 bytes at most: the kept results never count there.
    let server = builder().state_byte_cap(200).build().expect("builds");
    let three_mib = json!({"text": "x".repeat(1023) + "\n", "n": 3 * 1024});
    let first = call(&server, "alice", true, "repeat", three_mib.clone()).await;
    link(&first);
    let visits = call(&server, "alice", true, "visit", json!({})).await;
    assert_eq!(
        visits["content"][0]["text"], "1",
        "user state still writable: {visits}"
    );
    let second = call(&server, "alice", true, "repeat", three_mib.clone()).await;
    link(&second);
    // A third would hold more than 8 MiB: cut, not kept, and said so.
    let third = call(&server, "alice", true, "repeat", three_mib.clone()).await;
    assert!(measured(&third) <= 102_400);
    let types: Vec<&str> = third["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|b| b["type"].as_str())
        .collect();
    assert_eq!(types, ["text", "text"], "no link: {third}");
    assert!(note(&third).contains("not kept"), "{}", note(&third));
    // Another principal has its own bound.
    let bob = call(&server, "bob", true, "repeat", three_mib).await;
    link(&bob);
}

#[tokio::test]
async fn a_server_with_no_resources_still_refuses_other_resource_methods() {
    let server = server();
    let init = ask(&server, "alice", false, "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})).await;
    assert!(
        init["result"]["capabilities"].get("resources").is_none(),
        "{init}"
    );
    for modern in [true, false] {
        for (method, params) in [
            ("resources/read", json!({"uri": "file:///x"})),
            ("resources/read", json!({"uri": "mcp-result"})),
            ("resources/list", json!({})),
            ("resources/templates/list", json!({})),
        ] {
            let reply = ask(&server, "alice", modern, method, params).await;
            assert_eq!(reply["error"]["code"], -32601, "{method}: {reply}");
        }
    }
}

#[cfg(feature = "catalog")]
#[tokio::test]
async fn a_token_limit_counts_with_the_catalog_tokenizer() {
    let server = builder()
        .result_limit(ResultLimit::tokens(2_000))
        .build()
        .expect("builds");
    // 1,000 lines of about 9 tokens: over 2,000 tokens.
    let result = call(&server, "alice", true, "lines", json!({"lines": 1_000})).await;
    let json = serde_json::to_string(&json!({"content": result["content"]})).expect("json");
    let tokens = mcp_core::catalog::tokens::count(&json);
    assert!(tokens <= 2_000, "{tokens} tokens");
    assert!(tokens > 1_000, "cut far below the limit: {tokens} tokens");
    assert!(note(&result).contains("2000 tokens"), "{}", note(&result));
    // 100 lines (about 900 tokens, 3,200 bytes) pass whole.
    let small = call(&server, "alice", true, "lines", json!({"lines": 100})).await;
    assert_eq!(small["content"].as_array().map(Vec::len), Some(1));
}

/// An in-memory state store that records the largest value offered to it.
#[derive(Default)]
struct Largest {
    inner: InMemoryStateStore,
    largest: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl StateStore for Largest {
    async fn load(
        &self,
        key: &StateKey,
        limits: &StateLimits,
    ) -> Result<StateLookup, StateStoreError> {
        self.inner.load(key, limits).await
    }

    async fn write(
        &self,
        key: &StateKey,
        expected: Option<u64>,
        value: Vec<u8>,
        limits: &StateLimits,
    ) -> Result<StateWrite, StateStoreError> {
        self.largest.fetch_max(value.len(), Ordering::Relaxed);
        self.inner.write(key, expected, value, limits).await
    }

    async fn remove(&self, key: &StateKey) -> Result<bool, StateStoreError> {
        self.inner.remove(key).await
    }
}

#[tokio::test]
async fn a_result_alone_over_the_kept_bound_is_not_offered_to_the_store() {
    let store = Largest::default();
    let largest = Arc::clone(&store.largest);
    let server = builder()
        .storage(Storage::memory().with_state(store))
        .build()
        .expect("builds");
    // 9 MiB from a caller holding no kept result.
    let nine_mib = json!({"text": "x".repeat(1023) + "\n", "n": 9 * 1024});
    let result = call(&server, "alice", true, "repeat", nine_mib).await;
    assert!(measured(&result) <= 102_400);
    let types: Vec<&str> = result["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|b| b["type"].as_str())
        .collect();
    assert_eq!(types, ["text", "text"], "no link: {result}");
    let note = note(&result);
    assert!(note.contains("not kept"), "{note}");
    assert!(note.contains("larger than the most kept"), "{note}");
    assert!(!note.contains("already holds"), "{note}");
    assert_eq!(largest.load(Ordering::Relaxed), 0, "sent to the store");
    // One within the bound is still kept.
    let three_mib = json!({"text": "x".repeat(1023) + "\n", "n": 3 * 1024});
    link(&call(&server, "alice", true, "repeat", three_mib).await);
    assert!(largest.load(Ordering::Relaxed) > 3 << 20);
}
