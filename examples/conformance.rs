//! The fixture server of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), served over stdio.
//!
//! The suite's server scenarios call fixtures by name; this example implements
//! all of them that a stdio server can serve:
//!
//! - **tools**: `test_simple_text`, `test_image_content`, `test_audio_content`,
//!   `test_embedded_resource`, `test_multiple_content_types`,
//!   `test_tool_with_logging`, `test_tool_with_progress`, `test_error_handling`,
//!   `test_sampling`, `test_elicitation`, `test_elicitation_sep1034_defaults`,
//!   `test_elicitation_sep1330_enums`, `test_reconnection`,
//!   `json_schema_2020_12_tool`; for 2026-07-28 also `test_logging_tool`,
//!   `test_streaming_elicitation`, `test_missing_capability` and the multi
//!   round-trip (SEP-2322) tools `test_input_required_result_elicitation`,
//!   `…_sampling`, `…_list_roots`, `…_multiple_inputs`, `…_capabilities`,
//!   `…_request_state`, `…_multi_round` and `…_tampered_state`; and
//!   `test_update_watched_resource`, which changes `test://watched-resource`
//!   and tells its subscribers (no scenario calls it; it makes the
//!   subscription observable by hand);
//! - **resources**: `test://static-text`, `test://static-binary`,
//!   `test://watched-resource` (subscribable) and the template
//!   `test://template/{id}/data`;
//! - **prompts**: `test_simple_prompt`, `test_prompt_with_arguments`,
//!   `test_prompt_with_embedded_resource`, `test_prompt_with_image` and
//!   `test_input_required_result_prompt`;
//! - **logging** (`logging/setLevel`, `notifications/message` through
//!   `InvokeContext::log`), **completion** (`completion/complete` for the
//!   prompt arguments and the template's `id`) and **resource
//!   subscriptions** (`resources/subscribe`, and `resourceSubscriptions` on a
//!   2026-07-28 `subscriptions/listen`).
//!
//! Questions for the client go through `InvokeContext::input` (or the
//! elicitation handle): on a 2025-era session they are real
//! `elicitation/create`, `sampling/createMessage` and `roots/list` requests,
//! on a 2026-07-28 request the framework turns them into one `input_required`
//! result (under the keys the scenarios name) and replays the handler with
//! the answers, so one function serves both revisions.
//!
//! The extension scenarios' part is in `examples/extensions`: the tasks
//! tools (`greet`, `slow_compute`, `failing_job`, `protocol_error_job`,
//! `confirm_delete`, `multi_input`, `test_tool_with_task`) and the skills
//! (the directory `examples/skills`, plus `skill://examples/greeting`).
//! Over HTTP tasks live in memory; over stdio (the interop bridge starts one
//! process per 2026-07-28 request) they live in the directory
//! `MCP_CONFORMANCE_TASK_DIR` names, which must be private to the user
//! (`MCP_CONFORMANCE_TASK_DIR=$(mktemp -d)`), and each runs in a process of
//! its own, `conformance --run-task ID`, started detached in its own process
//! group. Without it a stdio process keeps its tasks in memory.
//!
//! Not here: the list-changed triggers (`test_trigger_tool_change`,
//! `test_trigger_prompt_change`): this server's lists never change.
//!
//! `requestState` keys: see `state_keys` (`MCP_CONFORMANCE_STATE_KEY`,
//! `MCP_CONFORMANCE_STATE_KEY_FILE`).
//!
//! Run: `cargo run --example conformance --features redis` (stdio; `--stdio` is accepted and
//! ignored). Check it: run the official conformance suite (`npx @modelcontextprotocol/conformance
//! server --url …`) against `--http 127.0.0.1:PORT`.

mod common;
mod extensions;

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use mcp_core::handler::CompletionRequest;
use mcp_core::protocol::{Content, ResourceContents, Role};
use mcp_core::transport::{StateKey, StateKeys};
use mcp_core::{
    context::InputRequest,
    handler::PromptArgs,
    mcp_prompt, mcp_resource, mcp_tool,
    protocol::{CallToolResult, ErrorObject, GetPromptResult, PromptArgument, PromptMessage},
    InvokeContext, McpPromptDef, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};

/// A 1×1 red PNG.
const RED_PIXEL_PNG: [u8; 69] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xf7, 0x03, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A short silent WAV file: 8 kHz, mono, 16-bit PCM, eight samples.
fn silent_wav() -> Vec<u8> {
    const SAMPLE_RATE: u32 = 8_000;
    const SAMPLES: u32 = 8;
    let data_len = SAMPLES * 2;
    let mut wav = Vec::with_capacity(44 + data_len as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&SAMPLE_RATE.to_le_bytes());
    wav.extend_from_slice(&(SAMPLE_RATE * 2).to_le_bytes()); // byte rate
    wav.extend_from_slice(&2u16.to_le_bytes()); // block align
    wav.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_len.to_le_bytes());
    wav.resize(44 + data_len as usize, 0);
    wav
}

/// The server, for `test_update_watched_resource` (set once in `main`).
static SERVER: OnceLock<McpServer> = OnceLock::new();

/// How often `test://watched-resource` changed.
static WATCHED_REVISION: AtomicU64 = AtomicU64::new(0);

// ===== Tools =====

/// Tests simple text content response.
#[mcp_tool(read_only)]
async fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Tests image content response.
#[mcp_tool(read_only)]
async fn test_image_content() -> Content {
    Content::image(&RED_PIXEL_PNG, "image/png")
}

/// Tests audio content response.
#[mcp_tool(read_only)]
async fn test_audio_content() -> Content {
    Content::audio(&silent_wav(), "audio/wav")
}

/// Tests embedded resource content response.
#[mcp_tool(read_only)]
async fn test_embedded_resource() -> Content {
    Content::embedded(
        ResourceContents::text(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )
        .with_mime_type("text/plain"),
    )
}

/// Tests response with multiple content types (text, image, resource).
#[mcp_tool(read_only)]
async fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Content::image(&RED_PIXEL_PNG, "image/png"),
        Content::embedded(
            ResourceContents::text(
                "test://mixed-content-resource",
                json!({"test": "data", "value": 123}).to_string(),
            )
            .with_mime_type("application/json"),
        ),
    ]
}

/// Sends three `info` log messages 50 ms apart. The framework filters them:
/// on a 2025-era session by the level `logging/setLevel` chose, on a
/// 2026-07-28 request by its `_meta` log level (none without one).
async fn emit_logs(ctx: &InvokeContext) {
    let steps = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (i, data) in steps.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.log(
            mcp_core::protocol::LoggingLevel::Info,
            Some("conformance"),
            json!(data),
        )
        .await;
    }
}

/// Tests a tool that emits log messages during execution.
#[mcp_tool(read_only)]
async fn test_tool_with_logging(ctx: InvokeContext) -> &'static str {
    emit_logs(&ctx).await;
    "Tool with logging executed successfully"
}

/// Emits log messages (2026-07-28 diagnostic: none without a requested `logLevel`).
#[mcp_tool(read_only)]
async fn test_logging_tool(ctx: InvokeContext) -> &'static str {
    emit_logs(&ctx).await;
    "Logging tool executed"
}

/// Tests a tool that reports progress notifications (0, 50 and 100 of 100).
#[mcp_tool(read_only)]
async fn test_tool_with_progress(ctx: InvokeContext) -> String {
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let message = format!("Completed step {step} of 100");
        ctx.report_progress(step, Some(100.0), Some(&message)).await;
    }
    match ctx.progress() {
        Some(_) => "Progress reported: 0, 50, 100 of 100".to_owned(),
        None => "Done (no progressToken, so no progress was reported)".to_owned(),
    }
}

/// Tests error response handling: always fails.
#[mcp_tool]
async fn test_error_handling() -> Result<&'static str, &'static str> {
    Err("This tool intentionally returns an error for testing")
}

/// `sampling/createMessage` params: one user message.
fn sampling_params(prompt: &str, max_tokens: u32) -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens,
    })
}

/// The text of a `CreateMessageResult` (its `content` is one block or, since
/// 2025-11-25, possibly several).
fn sampled_text(result: &Value) -> String {
    let blocks = match result.get("content") {
        Some(Value::Array(blocks)) => blocks.iter().collect(),
        Some(block) => vec![block],
        None => Vec::new(),
    };
    blocks
        .into_iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("")
}

/// The root URIs of a `ListRootsResult`, comma-separated.
fn root_uris(result: &Value) -> String {
    result
        .get("roots")
        .and_then(Value::as_array)
        .map(|roots| {
            roots
                .iter()
                .filter_map(|r| r.get("uri").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// Tests server-initiated sampling (LLM completion request).
#[mcp_tool]
async fn test_sampling(
    #[arg(description = "The prompt to send to the LLM")] prompt: String,
    ctx: InvokeContext,
) -> Result<String, String> {
    let result = ctx
        .sample(sampling_params(&prompt, 100))
        .await
        .map_err(|e| format!("Sampling failed: {}", e.message))?;
    Ok(format!("LLM response: {}", sampled_text(&result)))
}

/// Sends `elicitation/create` with `params` and returns the client's raw answer.
async fn request_input(ctx: &InvokeContext, params: Value) -> Result<Value, String> {
    let elicitor = ctx
        .elicitation()
        .ok_or("Elicitation not supported: the client did not announce the capability")?;
    elicitor
        .raw(params)
        .await
        .map_err(|e| format!("Elicitation failed: {}", e.message))
}

/// Asks and renders the client's answer, whatever it was, as one line.
async fn elicit(ctx: &InvokeContext, params: Value, label: &str) -> Result<String, String> {
    let result = request_input(ctx, params).await?;
    let action = result
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let content = result.get("content").cloned().unwrap_or_else(|| json!({}));
    Ok(format!("{label}: action={action}, content={content}"))
}

/// Tests server-initiated elicitation (user input request).
#[mcp_tool]
async fn test_elicitation(
    #[arg(description = "The message to show the user")] message: String,
    ctx: InvokeContext,
) -> Result<String, String> {
    let params = json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    });
    elicit(&ctx, params, "User response").await
}

/// Tests elicitation with default values for every primitive type (SEP-1034).
#[mcp_tool]
async fn test_elicitation_sep1034_defaults(ctx: InvokeContext) -> Result<String, String> {
    let params = json!({
        "message": "Please review and update the form fields with defaults",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": true},
            },
            "required": [],
        },
    });
    elicit(&ctx, params, "Elicitation completed").await
}

/// Tests elicitation with the five enum schema variants (SEP-1330).
#[mcp_tool]
async fn test_elicitation_sep1330_enums(ctx: InvokeContext) -> Result<String, String> {
    let params = json!({
        "message": "Please select options from the enum fields",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ],
                    },
                },
            },
            "required": [],
        },
    });
    elicit(&ctx, params, "Elicitation completed").await
}

/// Asks for input mid-call (2026-07-28 diagnostic: as an `input_required` result, never a request).
#[mcp_tool]
async fn test_streaming_elicitation(ctx: InvokeContext) -> Result<String, String> {
    let params = json!({
        "message": "Please provide a value",
        "requestedSchema": {
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"],
        },
    });
    elicit(&ctx, params, "Elicitation completed").await
}

/// `elicitation/create` params for a form with one required field.
fn one_field_form(message: &str, field: &str, kind: &str) -> Value {
    json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {field: {"type": kind}},
            "required": [field],
        },
    })
}

/// Asks the client every request in `requests` and returns the answers by
/// key. When the client cannot be asked (a capability it did not declare:
/// `-32021` on 2026-07-28) or answered with an error, the call fails with
/// that JSON-RPC error rather than a tool result.
async fn input(ctx: &InvokeContext, requests: Vec<InputRequest>) -> Map<String, Value> {
    match ctx.input(requests).await {
        Ok(answers) => answers,
        Err(e) => {
            // A served call ends here; a detached context gets no answers.
            ctx.fail(e).await;
            Map::new()
        }
    }
}

/// One answer of [`input`], `null` when missing.
fn answer(answers: &mut Map<String, Value>, key: &str) -> Value {
    answers.remove(key).unwrap_or(Value::Null)
}

/// The accepted `content` of an `ElicitResult`, or why there is none.
fn accepted(result: &Value) -> Result<Value, String> {
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => Ok(result.get("content").cloned().unwrap_or_else(|| json!({}))),
        other => Err(format!(
            "Elicitation not accepted: action={}",
            other.unwrap_or("missing")
        )),
    }
}

/// Asks one form under `key` and returns the accepted `content`, or why there is none.
async fn ask(ctx: &InvokeContext, key: &str, params: Value) -> Result<Value, String> {
    let mut answers = input(ctx, vec![InputRequest::elicit(key, params)]).await;
    accepted(&answer(&mut answers, key))
}

/// One field of accepted elicitation content, as text.
fn field(content: &Value, name: &str) -> String {
    content
        .get(name)
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
        .unwrap_or_default()
}

/// A `roots/list` request under `key` (with empty params, as the scenarios show it).
fn roots_request(key: &str) -> InputRequest {
    InputRequest {
        params: json!({}),
        ..InputRequest::list_roots(key)
    }
}

/// Asks for the user's name and greets them (SEP-2322, one input request).
#[mcp_tool]
async fn test_input_required_result_elicitation(ctx: InvokeContext) -> Result<String, String> {
    let form = one_field_form("What is your name?", "name", "string");
    let answer = ask(&ctx, "user_name", form).await?;
    Ok(format!("Hello, {}!", field(&answer, "name")))
}

/// Asks the client's model a question (SEP-2322, one sampling request).
#[mcp_tool]
async fn test_input_required_result_sampling(ctx: InvokeContext) -> String {
    let params = sampling_params("What is the capital of France?", 100);
    let mut answers = input(&ctx, vec![InputRequest::sample("capital_question", params)]).await;
    let reply = answer(&mut answers, "capital_question");
    format!("The model answered: {}", sampled_text(&reply))
}

/// Asks for the client's roots (SEP-2322, one `roots/list` request).
#[mcp_tool]
async fn test_input_required_result_list_roots(ctx: InvokeContext) -> String {
    let mut answers = input(&ctx, vec![roots_request("client_roots")]).await;
    let roots = answer(&mut answers, "client_roots");
    format!("Client roots: {}", root_uris(&roots))
}

/// Asks three questions at once: a form, the model and the roots (SEP-2322).
#[mcp_tool]
async fn test_input_required_result_multiple_inputs(ctx: InvokeContext) -> Result<String, String> {
    let mut answers = input(
        &ctx,
        vec![
            InputRequest::elicit(
                "user_name",
                one_field_form("What is your name?", "name", "string"),
            ),
            InputRequest::sample("greeting", sampling_params("Generate a greeting", 50)),
            roots_request("client_roots"),
        ],
    )
    .await;
    let name = accepted(&answer(&mut answers, "user_name"))?;
    let greeting = answer(&mut answers, "greeting");
    let roots = answer(&mut answers, "client_roots");
    Ok(format!(
        "Name: {}; greeting: {}; roots: {}",
        field(&name, "name"),
        sampled_text(&greeting),
        root_uris(&roots)
    ))
}

/// Asks only what the client declared it can answer (SEP-2322): sampling,
/// a form and/or its roots, as its capabilities allow.
#[mcp_tool]
async fn test_input_required_result_capabilities(ctx: InvokeContext) -> String {
    let caps = ctx.client_capabilities().cloned().unwrap_or_default();
    let mut requests = Vec::new();
    if caps.sampling.is_some() {
        let params = sampling_params("What is the capital of France?", 100);
        requests.push(InputRequest::sample("capital_question", params));
    }
    if caps.supports_form_elicitation() {
        let form = one_field_form("What is your name?", "name", "string");
        requests.push(InputRequest::elicit("user_name", form));
    }
    if caps.roots.is_some() {
        requests.push(roots_request("client_roots"));
    }
    if requests.is_empty() {
        return "The client declared none of sampling, elicitation and roots: nothing to ask."
            .to_owned();
    }
    let answers = input(&ctx, requests).await;
    let mut parts = Vec::new();
    for (key, value) in &answers {
        let text = match key.as_str() {
            "capital_question" => sampled_text(value),
            "user_name" => accepted(value).map_or_else(|e| e, |c| field(&c, "name")),
            _ => root_uris(value),
        };
        parts.push(format!("{key}: {text}"));
    }
    format!("Asked only what the client supports; {}", parts.join("; "))
}

/// Needs sampling and says so (2026-07-28 diagnostic): without the client's
/// `sampling` capability the call fails with `-32021` naming it.
#[mcp_tool]
async fn test_missing_capability(ctx: InvokeContext) -> String {
    if let Err(e) = ctx.require_capability(json!({"sampling": {}})).await {
        // Only on a detached context: a served call ends in the line above.
        return e.to_string();
    }
    let params = sampling_params("Say hello", 20);
    let mut answers = input(&ctx, vec![InputRequest::sample("hello", params)]).await;
    format!("Sampled: {}", sampled_text(&answer(&mut answers, "hello")))
}

/// Asks for a confirmation; answering proves the request state came back intact (SEP-2322).
#[mcp_tool]
async fn test_input_required_result_request_state(ctx: InvokeContext) -> Result<String, String> {
    let form = one_field_form("Please confirm", "ok", "boolean");
    let answer = ask(&ctx, "confirm", form).await?;
    Ok(format!("state-ok: confirmed={}", field(&answer, "ok")))
}

/// Asks two questions in two rounds (SEP-2322, evolving request state).
#[mcp_tool]
async fn test_input_required_result_multi_round(ctx: InvokeContext) -> Result<String, String> {
    let form = one_field_form("Step 1: What is your name?", "name", "string");
    let name = ask(&ctx, "step1", form).await?;
    let form = one_field_form("Step 2: What is your favorite color?", "color", "string");
    let color = ask(&ctx, "step2", form).await?;
    Ok(format!(
        "Hello, {}! Your favorite color is {}.",
        field(&name, "name"),
        field(&color, "color")
    ))
}

/// Asks for a confirmation; its request state must be integrity-protected (SEP-2322).
#[mcp_tool]
async fn test_input_required_result_tampered_state(ctx: InvokeContext) -> Result<String, String> {
    let form = one_field_form("Please confirm", "ok", "boolean");
    let answer = ask(&ctx, "confirm", form).await?;
    Ok(format!("Confirmed: {}", field(&answer, "ok")))
}

/// Changes `test://watched-resource` and notifies its subscribers.
#[mcp_tool]
async fn test_update_watched_resource() -> String {
    let revision = WATCHED_REVISION.fetch_add(1, Ordering::Relaxed) + 1;
    let notified = match SERVER.get() {
        Some(server) => {
            server
                .notify_resource_updated("test://watched-resource")
                .await
        }
        None => 0,
    };
    format!(
        "test://watched-resource is now at revision {revision}; {notified} subscriber(s) notified"
    )
}

/// Tests SSE stream reconnection (SEP-1699).
#[mcp_tool(read_only)]
async fn test_reconnection() -> &'static str {
    // Over HTTP the reference closes the response stream mid-call; over stdio
    // there is no stream to close, so this only waits briefly and answers.
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully."
}

/// `json_schema_2020_12_tool`: an input schema using JSON Schema 2020-12
/// keywords (`$schema`, `$defs` with `$anchor`, `allOf`/`anyOf`,
/// `if`/`then`/`else`, `additionalProperties`), listed verbatim (SEP-1613, SEP-2106).
fn json_schema_2020_12_tool() -> McpToolDef {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            },
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
    });
    McpToolDef::new(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        schema,
        |args, _ctx: InvokeContext| async move {
            CallToolResult::text(format!(
                "JSON Schema 2020-12 tool called with: {}",
                Value::Object(args)
            ))
        },
    )
}

// ===== Resources =====

/// A static text resource for testing.
#[mcp_resource(
    uri = "test://static-text",
    name = "static-text",
    title = "Static Text Resource",
    mime_type = "text/plain"
)]
async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (a PNG image) for testing.
#[mcp_resource(
    uri = "test://static-binary",
    name = "static-binary",
    title = "Static Binary Resource",
    mime_type = "image/png"
)]
async fn static_binary() -> Vec<u8> {
    RED_PIXEL_PNG.to_vec()
}

/// A resource clients may subscribe to.
#[mcp_resource(
    uri = "test://watched-resource",
    name = "watched-resource",
    title = "Watched Resource",
    mime_type = "text/plain"
)]
async fn watched_resource() -> String {
    match WATCHED_REVISION.load(Ordering::Relaxed) {
        0 => "Watched resource content".to_owned(),
        n => format!("Watched resource content (revision {n})"),
    }
}

/// A resource template with parameter substitution.
#[mcp_resource(
    uri = "test://template/{id}/data",
    name = "template",
    title = "Resource Template",
    mime_type = "application/json"
)]
async fn template_data(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

// ===== Prompts =====

/// A simple prompt without arguments.
#[mcp_prompt(title = "Simple Test Prompt")]
async fn test_simple_prompt() -> PromptMessage {
    PromptMessage::user("This is a simple prompt for testing.")
}

/// A prompt with required arguments.
#[mcp_prompt(title = "Prompt With Arguments")]
async fn test_prompt_with_arguments(
    #[arg(description = "First test argument")] arg1: String,
    #[arg(description = "Second test argument")] arg2: String,
) -> PromptMessage {
    PromptMessage::user(format!(
        "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
    ))
}

/// A prompt with an image.
#[mcp_prompt(title = "Prompt With Image")]
async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage {
            role: Role::User,
            content: Content::image(&RED_PIXEL_PNG, "image/png"),
        },
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// A prompt that asks the user for its context first (SEP-2322 on `prompts/get`).
#[mcp_prompt]
async fn test_input_required_result_prompt(
    ctx: InvokeContext,
) -> Result<PromptMessage, ErrorObject> {
    let form = one_field_form("What context should the prompt use?", "context", "string");
    let answer = ask(&ctx, "user_context", form)
        .await
        .map_err(ErrorObject::internal)?;
    Ok(PromptMessage::user(format!(
        "Use this context: {}",
        field(&answer, "context")
    )))
}

/// `test_prompt_with_embedded_resource`: its argument is the camel-case
/// `resourceUri`, so it is written by hand rather than with `#[mcp_prompt]`.
fn test_prompt_with_embedded_resource() -> McpPromptDef {
    McpPromptDef::new(
        "test_prompt_with_embedded_resource",
        |args: PromptArgs, _ctx: InvokeContext| async move {
            let uri = args.get("resourceUri").cloned().unwrap_or_default();
            GetPromptResult::new(vec![
                PromptMessage {
                    role: Role::User,
                    content: Content::embedded(
                        ResourceContents::text(uri, "Embedded resource content for testing.")
                            .with_mime_type("text/plain"),
                    ),
                },
                PromptMessage::user("Please process the embedded resource above."),
            ])
        },
    )
    .with_title("Prompt With Embedded Resource")
    .with_description("A prompt that includes an embedded resource")
    .with_arguments(vec![PromptArgument::required(
        "resourceUri",
        "URI of the resource to embed",
    )])
}

// ===== Completion =====

/// Values `completion/complete` offers for `test_prompt_with_arguments`.
const ARG1_VALUES: &[&str] = &["paris", "park", "party", "test", "test-value", "testing"];
const ARG2_VALUES: &[&str] = &["alpha", "beta", "gamma", "test", "test-other"];

/// `completion/complete`: candidates for the prompt arguments and the
/// template's `id`, those starting with what was typed (case-insensitive).
/// An unknown prompt or resource is `-32602`; an argument without
/// suggestions gets none.
async fn complete(req: CompletionRequest, _ctx: InvokeContext) -> Result<Vec<String>, ErrorObject> {
    const PROMPTS: &[&str] = &[
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "test_input_required_result_prompt",
    ];
    const RESOURCES: &[&str] = &[
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
        "test://template/{id}/data",
    ];
    let candidates: &[&str] = match (req.ref_type.as_str(), req.ref_name.as_str()) {
        ("ref/prompt", "test_prompt_with_arguments") => match req.argument.as_str() {
            "arg1" => ARG1_VALUES,
            "arg2" => ARG2_VALUES,
            _ => &[],
        },
        ("ref/prompt", "test_prompt_with_embedded_resource") if req.argument == "resourceUri" => {
            &RESOURCES[..3]
        }
        ("ref/resource", "test://template/{id}/data") if req.argument == "id" => {
            &["1", "2", "3", "42", "123"]
        }
        ("ref/prompt", name) if PROMPTS.contains(&name) => &[],
        ("ref/resource", uri) if RESOURCES.contains(&uri) => &[],
        (kind, name) => {
            let what = if kind == "ref/prompt" {
                "prompt"
            } else {
                "resource"
            };
            return Err(ErrorObject::invalid_params(format!(
                "Unknown {what}: {name}"
            )));
        }
    };
    let typed = req.value.to_lowercase();
    Ok(candidates
        .iter()
        .filter(|c| c.to_lowercase().starts_with(&typed))
        .map(|c| (*c).to_owned())
        .collect())
}

/// The keys that seal `requestState` (2026-07-28 multi round-trip requests).
///
/// The interop bridge starts a fresh server process for every stateless
/// request, so a retry usually reaches another process than the one that
/// sealed its state, and every process must hold the same key. It is
/// `MCP_CONFORMANCE_STATE_KEY` (at least 32 bytes) when set; otherwise a
/// random key shared through a file created once, `MCP_CONFORMANCE_STATE_KEY_FILE`
/// or `mcp-conformance-fixture.key` in `$XDG_RUNTIME_DIR` (else the temp
/// directory), readable by its owner only. `None` (with a warning) leaves the
/// framework's per-process key.
///
/// # Errors
/// A `MCP_CONFORMANCE_STATE_KEY` shorter than 32 bytes.
fn state_keys() -> io::Result<Option<StateKeys>> {
    let secret = match std::env::var_os("MCP_CONFORMANCE_STATE_KEY") {
        Some(secret) => secret.into_encoded_bytes(),
        None => {
            let path = std::env::var_os("MCP_CONFORMANCE_STATE_KEY_FILE").map_or_else(
                || {
                    std::env::var_os("XDG_RUNTIME_DIR")
                        .map_or_else(std::env::temp_dir, PathBuf::from)
                        .join("mcp-conformance-fixture.key")
                },
                PathBuf::from,
            );
            match shared_secret(&path) {
                Ok(secret) => secret,
                Err(e) => {
                    eprintln!(
                        "conformance: no shared requestState key ({}: {e}); \
                         using a per-process key",
                        path.display()
                    );
                    return Ok(None);
                }
            }
        }
    };
    let key = StateKey::new("fixture", secret).map_err(io::Error::other)?;
    Ok(Some(StateKeys::new(key, Vec::new())))
}

/// Reads the secret in `path`, creating it (32 random bytes) when missing.
///
/// Creation is race-free: the secret is written to a private temporary file
/// that is then hard-linked into place, which fails if another process got
/// there first (then its secret is read instead).
fn shared_secret(path: &Path) -> io::Result<Vec<u8>> {
    match read_secret(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        other => return other,
    }
    let mut secret = vec![0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut secret)?;
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&tmp)
        .and_then(|mut file| file.write_all(&secret));
    let linked = written.and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(secret),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => read_secret(path),
        Err(e) => Err(e),
    }
}

/// Reads an existing key file; refuses a symbolic link, a file owned by
/// another user or that others could read or write (whoever can plant or
/// read the key can forge `requestState`), and one holding fewer than 32
/// bytes. On other platforms than Unix only the length is checked.
fn read_secret(path: &Path) -> io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        rustix::fs::OFlags::NOFOLLOW.bits() as i32,
    );
    let mut file = options.open(path)?;
    #[cfg(unix)]
    check_key_file(&file.metadata()?, rustix::process::geteuid().as_raw())?;
    let mut secret = Vec::new();
    file.read_to_end(&mut secret)?;
    if secret.len() < 32 {
        return Err(io::Error::other("the key file holds fewer than 32 bytes"));
    }
    Ok(secret)
}

/// A key file must be a regular file owned by `uid` (the effective user)
/// that grants nothing to its group or to others.
#[cfg(unix)]
fn check_key_file(meta: &std::fs::Metadata, uid: u32) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if !meta.is_file() {
        return Err(io::Error::other("the key file is not a regular file"));
    }
    if meta.uid() != uid {
        return Err(io::Error::other(format!(
            "the key file is owned by uid {}, not by this process's user (uid {uid})",
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(io::Error::other(
            "the key file is open to its group or to others",
        ));
    }
    Ok(())
}

/// Arguments that clients also send as `Mcp-Param-*` headers (2026-07-28 HTTP).
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct HeaderArgs {
    /// Deployment region, mirrored in the `Mcp-Param-Region` header.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
    /// Priority, mirrored in the `Mcp-Param-Priority` header.
    #[schemars(extend("x-mcp-header" = "Priority"))]
    priority: Option<i64>,
}

/// Echoes arguments that are routed through `x-mcp-header` headers.
#[mcp_tool]
async fn test_custom_headers(#[args] args: HeaderArgs) -> String {
    format!("region={} priority={:?}", args.region, args.priority)
}

/// Builds the fixture server; `shared_tasks` for one process per request
/// (stdio), where tasks live in a shared directory and run in processes of
/// their own.
fn server(shared_tasks: bool, redis: Option<&extensions::Replicated>) -> io::Result<McpServer> {
    let mut builder = McpServer::builder();
    if let Some(redis) = redis {
        builder = redis.server(builder);
    } else if shared_tasks {
        builder = extensions::shared_tasks(builder)?;
    }
    if let Some(keys) = state_keys()? {
        builder = builder.request_state_keys(keys);
    }
    extensions::skills(builder)
        .server_info("mcp-conformance-fixture", env!("CARGO_PKG_VERSION"))
        .logging()
        .completion(complete)
        .resource_subscriptions()
        .tool(test_simple_text::tool())
        .tool(test_custom_headers::tool())
        .tool(test_image_content::tool())
        .tool(test_audio_content::tool())
        .tool(test_embedded_resource::tool())
        .tool(test_multiple_content_types::tool())
        .tool(test_tool_with_logging::tool())
        .tool(test_logging_tool::tool())
        .tool(test_tool_with_progress::tool())
        .tool(test_error_handling::tool())
        .tool(test_sampling::tool())
        .tool(test_elicitation::tool())
        .tool(test_elicitation_sep1034_defaults::tool())
        .tool(test_elicitation_sep1330_enums::tool())
        .tool(test_reconnection::tool())
        .tool(test_streaming_elicitation::tool())
        .tool(test_input_required_result_elicitation::tool())
        .tool(test_input_required_result_sampling::tool())
        .tool(test_input_required_result_list_roots::tool())
        .tool(test_input_required_result_multiple_inputs::tool())
        .tool(test_input_required_result_capabilities::tool())
        .tool(test_missing_capability::tool())
        .tool(test_input_required_result_request_state::tool())
        .tool(test_input_required_result_multi_round::tool())
        .tool(test_input_required_result_tampered_state::tool())
        .tool(json_schema_2020_12_tool())
        .tool(test_update_watched_resource::tool())
        .tools(extensions::tools())
        .resource(static_text::resource())
        .resource(static_binary::resource())
        .resource(watched_resource::resource())
        .resource(template_data::resource())
        .prompt(test_simple_prompt::prompt())
        .prompt(test_prompt_with_arguments::prompt())
        .prompt(test_prompt_with_embedded_resource())
        .prompt(test_prompt_with_image::prompt())
        .prompt(test_input_required_result_prompt::prompt())
        .build()
        .map_err(io::Error::other)
}

#[tokio::main]
async fn main() -> io::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let run_task = args
        .iter()
        .position(|a| a == "--run-task")
        .and_then(|i| args.get(i + 1))
        .cloned();
    // `--redis URL`: a replica sharing tasks, notices and legacy sessions.
    let redis = extensions::Replicated::from_args(&mut args).await?;
    let shared_tasks = run_task.is_some() || !args.iter().any(|a| a == "--http");
    let server = server(shared_tasks, redis.as_ref())?;
    if let Some(task_id) = run_task {
        if extensions::task_dir().is_none() {
            return Err(io::Error::other(
                "--run-task needs MCP_CONFORMANCE_TASK_DIR (the tasks' directory)",
            ));
        }
        return server
            .run_task(&task_id)
            .await
            .map_err(|e| io::Error::other(e.to_string()));
    }
    let _ = SERVER.set(server.clone());
    common::serve_args(server, mcp_core::StdioOptions::default(), args, |options| {
        options
    })
    .await
}
