// The imports, constants and helpers shared by the stateless test files
// (stateless.rs, stateless_round_trips.rs, stateless_write_once.rs), brought
// into each with `include!`: they were one file, split by what the tests
// exercise.

use common::{ask, guard, req, HANG_GUARD};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_core::protocol::base64::{decode_url, encode_url};
use mcp_core::protocol::LATEST_PROTOCOL_VERSION;
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_core::protocol::CacheScope;
use mcp_core::{InvokeContext, McpPromptDef, McpResourceDef, McpServer, McpServerBuilder, McpToolDef, StdioOptions, transport::stdio::{serve_io, StdioHandle}, transport::CallContext, context::ElicitResponse, protocol::{ErrorObject, PromptMessage, RequestId}, handler::{PromptArgs, ResourceRequest}};
use mcp_core::{transport::{StateKey, StateKeys}};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const MODERN: &str = "2026-07-28";
const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn elicit_caps() -> Value {
    json!({"elicitation": {}})
}

fn no_caps() -> Value {
    json!({})
}

/// The required 2026-07-28 `_meta` with the given client capabilities.
fn meta(caps: Value) -> Value {
    json!({
        PV: MODERN,
        CAPS: caps,
        CLIENT_INFO: {"name": "modern-client", "version": "0.1"},
    })
}

/// `params` (an object) plus the modern `_meta`.
fn modern(params: Value, caps: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta(caps);
    params
}

/// A modern request.
fn mreq(id: impl Into<Value>, method: &str, params: Value, caps: Value) -> Value {
    req(id, method, modern(params, caps))
}

/// The `result` of a successful response (panics on an error response).
fn result(reply: &Value) -> &Value {
    assert_eq!(reply["jsonrpc"], "2.0", "not a JSON-RPC response: {reply}");
    assert!(reply.get("error").is_none(), "unexpected error: {reply}");
    reply.get("result").expect("response has a result")
}

/// The `error` object of an error response (panics on a success).
fn error_obj(reply: &Value) -> &Value {
    assert_eq!(reply["jsonrpc"], "2.0", "not a JSON-RPC response: {reply}");
    assert!(reply.get("result").is_none(), "expected an error: {reply}");
    reply.get("error").expect("response has an error")
}

/// `(code, message)` of an error response.
fn error(reply: &Value) -> (i64, String) {
    let err = error_obj(reply);
    (
        err["code"].as_i64().expect("numeric code"),
        err["message"].as_str().expect("string message").to_owned(),
    )
}

/// The concatenated text blocks of a `tools/call` result.
fn tool_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content array: {result}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

fn server_info_json() -> Value {
    json!({"name": "stateless-test", "version": "1.2.3"})
}

/// A final 2026-07-28 result: `resultType: "complete"` and server info in `_meta`.
fn assert_complete(result: &Value) {
    assert_eq!(result["resultType"], "complete", "not complete: {result}");
    assert_eq!(
        result["_meta"][SERVER_INFO],
        server_info_json(),
        "no serverInfo: {result}"
    );
}

/// A legacy result: none of the 2026-07-28 additions.
fn assert_legacy_shape(result: &Value) {
    assert!(result.get("resultType").is_none(), "legacy: {result}");
    assert!(result.get("ttlMs").is_none(), "legacy: {result}");
    assert!(result.get("cacheScope").is_none(), "legacy: {result}");
    assert!(
        result
            .pointer(&format!("/_meta/{}", SERVER_INFO.replace('/', "~1")))
            .is_none(),
        "legacy: {result}"
    );
}

fn assert_no_cache_hint(result: &Value) {
    assert!(result.get("ttlMs").is_none(), "unexpected ttlMs: {result}");
    assert!(
        result.get("cacheScope").is_none(),
        "unexpected cacheScope: {result}"
    );
}

/// The `(ttlMs, cacheScope)` of a result.
fn cache_hint(result: &Value) -> (u64, String) {
    (
        result["ttlMs"]
            .as_u64()
            .unwrap_or_else(|| panic!("no integer ttlMs: {result}")),
        result["cacheScope"]
            .as_str()
            .unwrap_or_else(|| panic!("no cacheScope: {result}"))
            .to_owned(),
    )
}

/// An `input_required` result: checks the shape and returns
/// `(inputRequests, requestState)`.
fn input_required(result: &Value) -> (Value, Value) {
    assert_eq!(
        result["resultType"], "input_required",
        "expected input_required: {result}"
    );
    let keys: Vec<&str> = result
        .as_object()
        .expect("object result")
        .keys()
        .map(String::as_str)
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        ["_meta", "inputRequests", "requestState", "resultType"],
        "unexpected members in {result}"
    );
    assert_eq!(result["_meta"][SERVER_INFO], server_info_json());
    assert!(result["requestState"].is_string(), "state: {result}");
    assert!(result["inputRequests"].is_object(), "requests: {result}");
    (
        result["inputRequests"].clone(),
        result["requestState"].clone(),
    )
}

/// Retry params: the original params plus `inputResponses` and `requestState`.
fn retry(first: &Value, responses: Value, state: &Value) -> Value {
    let mut params = first.clone();
    params["inputResponses"] = responses;
    params["requestState"] = state.clone();
    params
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn confirm_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "title": "Confirm"}},
        "required": ["confirm"],
    })
}

fn branch_schema() -> Value {
    let schema = Value::Object(mcp_core::handler::schema_for::<Branch>());
    // Independent of the generator: a flat object with a required string.
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["branch"]["type"], "string");
    assert_eq!(schema["required"], json!(["branch"]));
    schema
}

fn elicit_request(message: &str, schema: Value) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    })
}

/// Decodes the payload of a `v1.<kid>.<payload>.<tag>` state.
fn state_payload(state: &str) -> Value {
    let parts: Vec<&str> = state.split('.').collect();
    assert_eq!(
        parts.len(),
        4,
        "state format v1.<kid>.<payload>.<tag>: {state}"
    );
    assert_eq!(parts[0], "v1");
    serde_json::from_slice(&decode_url(parts[2]).expect("base64url payload")).expect("json")
}

/// Rewrites the payload of a state, keeping its tag.
fn forge_state(state: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut payload = state_payload(state);
    edit(&mut payload);
    let parts: Vec<&str> = state.split('.').collect();
    format!(
        "{}.{}.{}.{}",
        parts[0],
        parts[1],
        encode_url(payload.to_string().as_bytes()),
        parts[3]
    )
}

// ---------------------------------------------------------------------------
// Fixture
// ---------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
struct Branch {
    branch: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Topic {
    topic: String,
}

/// How often each handler body started.
#[derive(Default)]
struct Runs {
    deploy: AtomicUsize,
    two_step: AtomicUsize,
}

fn deploy_tool(runs: &Arc<Runs>) -> McpToolDef {
    let runs = Arc::clone(runs);
    McpToolDef::new(
        "deploy",
        "Deploys after asking for the branch",
        json!({"type": "object", "properties": {"env": {"type": "string"}}}),
        move |args: Map<String, Value>, ctx: InvokeContext| {
            let runs = Arc::clone(&runs);
            async move {
                // The "work before the elicitation".
                runs.deploy.fetch_add(1, Ordering::SeqCst);
                let env = args
                    .get("env")
                    .and_then(Value::as_str)
                    .unwrap_or("dev")
                    .to_owned();
                let elicitor = match ctx.require_elicitation().await {
                    Ok(elicitor) => elicitor,
                    Err(e) => return format!("{env}: error {e}"),
                };
                match elicitor.form::<Branch>("Which branch?").await {
                    Ok(ElicitResponse::Accept(b)) => format!("deployed {env} from {}", b.branch),
                    Ok(ElicitResponse::Decline) => format!("{env}: declined"),
                    Ok(ElicitResponse::Cancel) => format!("{env}: cancelled"),
                    Err(e) => format!("{env}: error {e}"),
                }
            }
        },
    )
}

fn two_step_tool(runs: &Arc<Runs>) -> McpToolDef {
    let runs = Arc::clone(runs);
    McpToolDef::new(
        "two_step",
        "Asks for a branch, then for confirmation",
        json!({"type": "object", "properties": {"env": {"type": "string"}}}),
        move |_args: Map<String, Value>, ctx: InvokeContext| {
            let runs = Arc::clone(&runs);
            async move {
                runs.two_step.fetch_add(1, Ordering::SeqCst);
                let elicitor = match ctx.require_elicitation().await {
                    Ok(elicitor) => elicitor,
                    Err(e) => return format!("no elicitation: {e}"),
                };
                let branch = match elicitor.form::<Branch>("Which branch?").await {
                    Ok(ElicitResponse::Accept(b)) => b.branch,
                    other => return format!("no branch: {other:?}"),
                };
                let sure = elicitor
                    .confirm(&format!("Deploy {branch}?"))
                    .await
                    .is_accepted();
                format!("branch={branch} confirmed={sure}")
            }
        },
    )
}

fn builder(runs: &Arc<Runs>) -> McpServerBuilder {
    McpServer::builder()
        .server_info("stateless-test", "1.2.3")
        .instructions("Use the tools.")
        .tool(McpToolDef::new(
            "probe",
            "Reports what the handler sees",
            json!({"type": "object"}),
            |_args, ctx: InvokeContext| async move {
                json!({
                    "stateless": ctx.is_stateless(),
                    "version": ctx.protocol_version(),
                    "elicitation": ctx.elicitation().is_some(),
                    "capabilities": ctx.client_capabilities(),
                    "client": ctx
                        .client_info()
                        .and_then(|c| c.implementation.as_ref())
                        .map(|i| i.name.clone()),
                })
                .to_string()
            },
        ))
        .tool(deploy_tool(runs))
        .tool(two_step_tool(runs))
        .tool(McpToolDef::new(
            "delete",
            "Deletes after confirmation (fails closed)",
            json!({"type": "object"}),
            |_args, ctx: InvokeContext| async move {
                if ctx.confirm("Delete everything?").await.is_accepted() {
                    "deleted"
                } else {
                    "kept"
                }
            },
        ))
        .tool(McpToolDef::new(
            "progress",
            "Reports progress twice",
            json!({"type": "object"}),
            |_args, ctx: InvokeContext| async move {
                ctx.report_progress(1.0, Some(2.0), Some("half")).await;
                ctx.report_progress(2.0, Some(2.0), None).await;
                "done"
            },
        ))
        .tool(McpToolDef::new(
            "fail",
            "Fails at tool level",
            json!({"type": "object"}),
            |_args, _ctx: InvokeContext| async move { Err::<String, String>("disk full".into()) },
        ))
        .prompt(McpPromptDef::new(
            "hello",
            |_args: PromptArgs, _ctx: InvokeContext| async move {
                vec![PromptMessage::user("Hello")]
            },
        ))
        .prompt(McpPromptDef::new(
            "brief",
            |args: PromptArgs, ctx: InvokeContext| async move {
                let audience = args.get("audience").cloned().unwrap_or_default();
                let elicitor = ctx.require_elicitation().await?;
                match elicitor.form::<Topic>("Which topic?").await? {
                    ElicitResponse::Accept(t) => Ok::<_, ErrorObject>(vec![PromptMessage::user(
                        format!("Brief {audience} on {}", t.topic),
                    )]),
                    _ => Ok(vec![PromptMessage::user(format!("Brief {audience}"))]),
                }
            },
        ))
        .resource(McpResourceDef::new(
            "demo://plain",
            "Plain",
            |_req: ResourceRequest, _ctx: InvokeContext| async move { "plain text".to_owned() },
        ))
        .resource(
            McpResourceDef::new(
                "demo://cached",
                "Cached",
                |_req: ResourceRequest, _ctx: InvokeContext| async move { "cached".to_owned() },
            )
            .with_cache(123, CacheScope::Public),
        )
        .resource(
            McpResourceDef::template(
                "demo://logs/{day}",
                "Logs",
                |req: ResourceRequest, _ctx: InvokeContext| async move {
                    format!("log of {}", req.vars["day"])
                },
            )
            .with_cache(456, CacheScope::Private),
        )
        .resource(McpResourceDef::new(
            "demo://guarded",
            "Guarded",
            |_req: ResourceRequest, ctx: InvokeContext| async move {
                if ctx.confirm("Reveal the secret?").await.is_accepted() {
                    "s3cret".to_owned()
                } else {
                    "withheld".to_owned()
                }
            },
        ))
}

fn server_with_runs() -> (McpServer, Arc<Runs>) {
    let runs = Arc::new(Runs::default());
    (builder(&runs).build().expect("server builds"), runs)
}

fn server() -> McpServer {
    server_with_runs().0
}

fn key(id: &str, byte: u8) -> StateKey {
    StateKey::new(id, [byte; 32]).expect("valid key")
}

fn server_with_keys(keys: StateKeys) -> McpServer {
    builder(&Arc::new(Runs::default()))
        .request_state_keys(keys)
        .build()
        .expect("server builds")
}

fn probe_of(result: &Value) -> Value {
    serde_json::from_str(&tool_text(result)).expect("probe output is JSON")
}

/// A raw newline-delimited stream to a `serve_io` server, for tests that
/// need the exact order of lines and a real end of input.
struct Raw {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: Option<WriteHalf<DuplexStream>>,
    handle: Option<StdioHandle>,
}

impl Raw {
    fn start(server: McpServer) -> Self {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_end);
        let handle = serve_io(server, sr, sw, StdioOptions::default());
        let (cr, cw) = tokio::io::split(client_end);
        Self {
            lines: BufReader::new(cr).lines(),
            writer: Some(cw),
            handle: Some(handle),
        }
    }

    async fn send(&mut self, message: &Value) {
        let w = self.writer.as_mut().expect("input still open");
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        guard("write", w.write_all(&line)).await.expect("write");
        guard("flush", w.flush()).await.expect("flush");
    }

    /// The next line as JSON; `None` at end of output.
    async fn next(&mut self) -> Option<Value> {
        let line = guard("read a line", self.lines.next_line())
            .await
            .expect("read")?;
        Some(serde_json::from_str(&line).expect("server writes JSON lines"))
    }

    /// Ends the input and returns every remaining output line until the
    /// server closes its output; the server must stop cleanly.
    async fn finish(&mut self) -> Vec<Value> {
        let mut w = self.writer.take().expect("input still open");
        guard("shutdown", w.shutdown()).await.expect("shutdown");
        let mut rest = Vec::new();
        while let Some(message) = self.next().await {
            rest.push(message);
        }
        let handle = self.handle.take().expect("server handle");
        guard("server stops", handle.wait())
            .await
            .expect("server stops cleanly");
        rest
    }
}

fn branch_answer() -> Value {
    json!({"elicit-0": accept(json!({"branch": "main"}))})
}

fn assert_invalid_state(reply: &Value, why: &str) {
    assert_eq!(
        error(reply),
        (-32602, format!("Invalid requestState: {why}")),
        "{reply}"
    );
}
