//! The stateless 2026-07-28 revision served beside the legacy eras:
//! per-request era on one connection, the 2026-07-28 surface
//! (`server/discover`, `_meta` validation, removed methods, `resultType`,
//! caching hints, `subscriptions/listen`), multi round-trip requests
//! (`input_required` + sealed `requestState`) and write-once tools that work
//! for both eras.
//!
//! # The write-once rule
//!
//! A tool body that asks the user something (`ctx.elicitation()…form`,
//! `ctx.confirm`, `ctx.require_elicitation()`) is written once and works for
//! both eras, with one difference users must design for:
//!
//! - legacy client: the question is pushed as an `elicitation/create` request
//!   and the body continues where it stopped; it runs **once**;
//! - 2026-07-28 client: the body is stopped at the question (the client gets
//!   `input_required`) and runs **again from the start** on the retry, with
//!   the earlier answers replayed from `requestState`.
//!
//! So work done before an elicitation may run more than once: keep it
//! idempotent (or do side effects after the last question), and ask the same
//! questions in the same order every time. `write_once_tool_*` tests count
//! executions to pin this down.

mod common;
use common::{ask, guard, req, HANG_GUARD};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_core::protocol::base64::{decode_url, encode_url};
use mcp_core::protocol::LATEST_PROTOCOL_VERSION;
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_core::CacheScope;
use mcp_core::{
    serve_io, CallContext, ElicitResponse, ErrorObject, InvokeContext, McpPromptDef,
    McpResourceDef, McpServer, McpServerBuilder, McpToolDef, PromptArgs, PromptMessage, RequestId,
    ResourceRequest, StdioHandle, StdioOptions,
};
use mcp_core::{StateKey, StateKeys};
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
    let schema = Value::Object(mcp_core::schema_for::<Branch>());
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

// ---------------------------------------------------------------------------
// 1. Per-request era on one connection
// ---------------------------------------------------------------------------

#[tokio::test]
async fn per_request_era_legacy_and_modern_interleaved_on_one_stream() {
    let mut client = TestClient::start(server(), StdioOptions::default(), ClientOptions::default());
    // Legacy handshake announcing elicitation.
    let init = guard("initialize", client.initialize(LATEST_PROTOCOL_VERSION))
        .await
        .expect("initialize");
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_legacy_shape(&init);

    let legacy_probe = json!({
        "stateless": false,
        "version": "2025-11-25",
        "elicitation": true,
        "capabilities": {"elicitation": {}},
        "client": "mcp-core-test-client",
    });

    // Legacy call: the session's rules.
    let r = guard(
        "legacy probe",
        client.request("tools/call", json!({"name": "probe"})),
    )
    .await
    .expect("legacy call");
    assert_legacy_shape(&r);
    assert_eq!(probe_of(&r), legacy_probe);

    // Modern call on the same stream: its own _meta, not the session.
    let r = guard(
        "modern probe",
        client.request("tools/call", modern(json!({"name": "probe"}), no_caps())),
    )
    .await
    .expect("modern call");
    assert_complete(&r);
    assert_eq!(
        probe_of(&r),
        json!({
            "stateless": true,
            "version": MODERN,
            "elicitation": false,
            "capabilities": {},
            "client": "modern-client",
        })
    );

    // A modern request that needs elicitation does not borrow the session's
    // capability: -32021, and nothing is pushed to the client.
    let err = guard(
        "modern deploy without caps",
        client.request(
            "tools/call",
            modern(
                json!({"name": "deploy", "arguments": {"env": "prod"}}),
                no_caps(),
            ),
        ),
    )
    .await
    .expect_err("missing capability");
    assert_eq!(err.code, -32021);
    assert_eq!(
        err.data,
        Some(json!({"requiredCapabilities": {"elicitation": {}}}))
    );

    // Modern with the capability declared in its own _meta.
    let r = guard(
        "modern probe with caps",
        client.request(
            "tools/call",
            modern(json!({"name": "probe"}), elicit_caps()),
        ),
    )
    .await
    .expect("modern call");
    assert_eq!(probe_of(&r)["elicitation"], true);
    assert_eq!(probe_of(&r)["capabilities"], elicit_caps());

    // ...and not inferred by the next modern request.
    let r = guard(
        "modern probe again",
        client.request("tools/call", modern(json!({"name": "probe"}), no_caps())),
    )
    .await
    .expect("modern call");
    assert_eq!(probe_of(&r)["elicitation"], false);

    // Legacy again: the session is untouched by the modern requests.
    let r = guard(
        "legacy probe again",
        client.request("tools/call", json!({"name": "probe"})),
    )
    .await
    .expect("legacy call");
    assert_legacy_shape(&r);
    assert_eq!(probe_of(&r), legacy_probe);

    // Lists too: each by its own rules.
    let legacy_list = guard("legacy list", client.request("tools/list", json!({})))
        .await
        .expect("legacy list");
    assert_legacy_shape(&legacy_list);
    let modern_list = guard(
        "modern list",
        client.request("tools/list", modern(json!({}), no_caps())),
    )
    .await
    .expect("modern list");
    assert_complete(&modern_list);
    assert_eq!(legacy_list["tools"], modern_list["tools"]);

    // A server/discover without the modern _meta, even after initialize, is
    // refused as missing its required _meta (-32602), as the conformance
    // suite expects.
    let err = guard(
        "legacy discover",
        client.request("server/discover", json!({})),
    )
    .await
    .expect_err("legacy discover");
    assert_eq!(err.code, -32602);
}

#[tokio::test]
async fn modern_requests_do_not_set_up_a_legacy_session() {
    // A connection whose first requests are modern (one declaring
    // elicitation): a later legacy request without initialize sees no client.
    let client = TestClient::start(server(), StdioOptions::default(), ClientOptions::default());
    let r = guard(
        "modern probe",
        client.request(
            "tools/call",
            modern(json!({"name": "probe"}), elicit_caps()),
        ),
    )
    .await
    .expect("modern call");
    assert_eq!(probe_of(&r)["version"], MODERN);
    let r = guard(
        "modern initialize",
        client.request(
            "initialize",
            modern(
                json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                       "clientInfo": {"name": "x", "version": "1"}}),
                elicit_caps(),
            ),
        ),
    )
    .await
    .expect_err("removed method");
    assert_eq!(r.code, -32601);
    let r = guard(
        "legacy probe",
        client.request("tools/call", json!({"name": "probe"})),
    )
    .await
    .expect("legacy call");
    assert_legacy_shape(&r);
    assert_eq!(
        probe_of(&r),
        json!({
            "stateless": false,
            "version": null,
            "elicitation": false,
            "capabilities": null,
            "client": null,
        })
    );
}

#[tokio::test]
async fn initialize_asking_for_2026_07_28_negotiates_the_newest_legacy_version() {
    let server = server();
    let ctx = CallContext::new().with_session(mcp_core::Session::new());
    let reply = ask(
        &server,
        &ctx,
        req(
            1,
            "initialize",
            json!({"protocolVersion": MODERN, "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}),
        ),
    )
    .await;
    let init = result(&reply);
    assert_eq!(
        *init,
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": server.capabilities(),
            "serverInfo": server_info_json(),
            "instructions": "Use the tools.",
        })
    );
    // The session that follows is legacy, under 2025-11-25.
    let reply = ask(
        &server,
        &ctx,
        req(2, "tools/call", json!({"name": "probe"})),
    )
    .await;
    let probe = probe_of(result(&reply));
    assert_eq!(probe["version"], "2025-11-25");
    assert_eq!(probe["stateless"], false);

    // The same over a stream with the test client.
    let mut client = TestClient::start(server, StdioOptions::default(), ClientOptions::default());
    let init = guard("initialize", client.initialize(MODERN))
        .await
        .expect("initialize");
    assert_eq!(init["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn bare_server_discover_probe_is_invalid_params_and_the_stream_keeps_working() {
    let mut client = TestClient::start(server(), StdioOptions::default(), ClientOptions::default());
    // The dual-era client's stdio probe, without the modern _meta (as a
    // legacy-only client library would send it): with params, and without.
    let err = guard("probe", client.request("server/discover", json!({})))
        .await
        .expect_err("legacy discover");
    assert_eq!(err.code, -32602);
    assert_eq!(
        err.message,
        "server/discover requires `_meta[\"io.modelcontextprotocol/protocolVersion\"]`"
    );
    let bare = guard(
        "bare probe",
        client.start_request_with_id(RequestId::from("probe-2"), "server/discover", Value::Null),
    )
    .await;
    let reply = guard("bare probe reply", bare.response(HANG_GUARD))
        .await
        .expect("a reply to the bare probe");
    assert_eq!(reply["id"], "probe-2");
    assert_eq!(error(&reply).0, -32602);

    // The server did not exit: the fallback handshake and calls work.
    let init = guard("initialize", client.initialize(LATEST_PROTOCOL_VERSION))
        .await
        .expect("initialize after the probe");
    assert_eq!(init["protocolVersion"], "2025-11-25");
    let r = guard(
        "call",
        client.request("tools/call", json!({"name": "probe"})),
    )
    .await
    .expect("call after the probe");
    assert_eq!(probe_of(&r)["version"], "2025-11-25");
    // And a modern discover on the same stream works too.
    let d = guard(
        "modern discover",
        client.request("server/discover", modern(json!({}), no_caps())),
    )
    .await
    .expect("modern discover");
    assert_eq!(d["supportedVersions"], json!([MODERN]));
    guard("close", client.close()).await.expect("clean stop");
}

// ---------------------------------------------------------------------------
// 2. The 2026-07-28 surface
// ---------------------------------------------------------------------------

#[tokio::test]
async fn server_discover_modern_reports_versions_capabilities_instructions_and_cache_hint() {
    let server = server();
    let reply = ask(
        &server,
        &CallContext::default(),
        mreq(1, "server/discover", json!({}), no_caps()),
    )
    .await;
    assert_eq!(reply["id"], 1);
    let d = result(&reply);
    assert_eq!(
        *d,
        json!({
            "resultType": "complete",
            "supportedVersions": [MODERN],
            "capabilities": {
                "tools": {"listChanged": false},
                "resources": {"subscribe": false, "listChanged": false},
                "prompts": {"listChanged": false},
            },
            "instructions": "Use the tools.",
            "ttlMs": 3_600_000,
            "cacheScope": "public",
            "_meta": {SERVER_INFO: server_info_json()},
        })
    );
    assert!(d.get("serverInfo").is_none(), "server info only in _meta");

    // Without instructions, no instructions member; discover_cache overrides.
    let bare = McpServer::builder()
        .server_info("bare", "0.0.1")
        .discover_cache(5, CacheScope::Private)
        .build()
        .expect("server builds");
    let reply = ask(
        &bare,
        &CallContext::default(),
        mreq("d", "server/discover", json!({}), no_caps()),
    )
    .await;
    let d = result(&reply);
    assert!(d.get("instructions").is_none(), "{d}");
    assert_eq!(cache_hint(d), (5, "private".to_owned()));
    assert_eq!(d["capabilities"], json!({"tools": {"listChanged": false}}));
    assert_eq!(
        d["_meta"][SERVER_INFO],
        json!({"name": "bare", "version": "0.0.1"})
    );
    assert_eq!(d["resultType"], "complete");
}

#[tokio::test]
async fn missing_or_malformed_client_capabilities_is_invalid_params() {
    let server = server();
    let ctx = CallContext::default();
    for method in ["server/discover", "tools/list", "tools/call"] {
        let params = json!({"name": "probe", "_meta": {PV: MODERN}});
        let reply = ask(&server, &ctx, req(1, method, params)).await;
        assert_eq!(reply["id"], 1);
        assert_eq!(
            error(&reply),
            (-32602, format!("missing required `_meta[\"{CAPS}\"]`")),
            "{method}"
        );
    }
    for bad in [json!("all"), json!(["elicitation"]), json!(null), json!(1)] {
        let params = json!({"_meta": {PV: MODERN, CAPS: bad}});
        let reply = ask(&server, &ctx, req(2, "tools/list", params)).await;
        assert_eq!(
            error(&reply),
            (-32602, format!("`_meta[\"{CAPS}\"]` must be an object")),
            "caps {bad}"
        );
    }
}

/// `clientCapabilities` is an object, but a member has the wrong type: the
/// schema types `elicitation` (like `sampling` and `roots`) as an object, so
/// the required key is malformed and the spec asks for `-32602`.
#[tokio::test]
async fn malformed_member_of_client_capabilities_is_invalid_params() {
    let server = server();
    let ctx = CallContext::default();
    for bad in [
        json!({"elicitation": 5}),
        json!({"elicitation": "form"}),
        json!({"sampling": true}),
        json!({"roots": []}),
    ] {
        let params = json!({"_meta": {PV: MODERN, CAPS: bad}});
        let reply = ask(&server, &ctx, req(3, "tools/list", params)).await;
        assert_eq!(error(&reply).0, -32602, "caps {bad}: {reply}");
    }
}

#[tokio::test]
async fn non_string_protocol_version_is_invalid_params() {
    let server = server();
    for bad in [
        json!(20_260_728),
        json!(true),
        json!({"v": MODERN}),
        json!([MODERN]),
    ] {
        let params = json!({"_meta": {PV: bad, CAPS: {}}});
        let reply = ask(
            &server,
            &CallContext::default(),
            req(1, "server/discover", params),
        )
        .await;
        assert_eq!(
            error(&reply),
            (-32602, format!("`_meta[\"{PV}\"]` must be a string")),
            "version {bad}"
        );
    }
}

#[tokio::test]
async fn unsupported_protocol_version_is_32022_with_supported_and_requested() {
    let server = server();
    let params = json!({"_meta": {PV: "2099-01-01", CAPS: {}}});
    let reply = ask(
        &server,
        &CallContext::default(),
        req(9, "server/discover", params),
    )
    .await;
    assert_eq!(reply["id"], 9);
    let err = error_obj(&reply);
    assert_eq!(err["code"], -32022);
    assert_eq!(err["message"], "Unsupported protocol version: 2099-01-01");
    // The same list server/discover advertises (a _meta claim can only name
    // a stateless revision).
    let supported = vec![MODERN];
    assert_eq!(
        err["data"],
        json!({"supported": supported, "requested": "2099-01-01"})
    );
    // Checked before the method: a tools/call for an unknown tool too.
    let params = json!({"name": "nope", "_meta": {PV: "2026-01-01", CAPS: {}}});
    let reply = ask(
        &server,
        &CallContext::default(),
        req(10, "tools/call", params),
    )
    .await;
    assert_eq!(error(&reply).0, -32022);
    assert_eq!(error_obj(&reply)["data"]["requested"], "2026-01-01");
}

#[tokio::test]
async fn bad_log_level_is_invalid_params_and_a_good_one_is_accepted() {
    let server = server();
    let ctx = CallContext::default();
    for bad in [json!("verbose"), json!("DEBUG"), json!(3), json!(null)] {
        let mut params = modern(json!({}), no_caps());
        params["_meta"][LOG_LEVEL] = bad.clone();
        let reply = ask(&server, &ctx, req(1, "tools/list", params)).await;
        assert_eq!(
            error(&reply),
            (
                -32602,
                format!(
                    "invalid log level {bad}; expected one of debug, info, notice, warning, \
                     error, critical, alert, emergency"
                )
            ),
            "level {bad}"
        );
    }
    for good in ["debug", "warning", "emergency"] {
        let mut params = modern(json!({}), no_caps());
        params["_meta"][LOG_LEVEL] = json!(good);
        let reply = ask(&server, &ctx, req(2, "tools/list", params)).await;
        assert_complete(result(&reply));
    }
}

#[tokio::test]
async fn removed_methods_on_a_modern_request_are_method_not_found() {
    let server = server();
    let ctx = CallContext::new().with_session(mcp_core::Session::new());
    let cases = [
        (
            "initialize",
            json!({"protocolVersion": MODERN, "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}),
        ),
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "info"})),
        ("resources/subscribe", json!({"uri": "demo://plain"})),
        ("resources/unsubscribe", json!({"uri": "demo://plain"})),
    ];
    for (i, (method, params)) in cases.into_iter().enumerate() {
        let reply = ask(&server, &ctx, mreq(i as i64, method, params, no_caps())).await;
        assert_eq!(reply["id"], i as i64);
        assert_eq!(
            error(&reply),
            (-32601, format!("Method not found: {method}")),
            "{method}"
        );
    }
    // The modern initialize did not start a legacy session on this scope.
    let reply = ask(
        &server,
        &ctx,
        req(10, "tools/call", json!({"name": "probe"})),
    )
    .await;
    assert_eq!(probe_of(result(&reply))["version"], Value::Null);
    // Legacy ping still answers {} (no resultType).
    let reply = ask(&server, &ctx, req(11, "ping", json!({}))).await;
    assert_eq!(*result(&reply), json!({}));
}

#[tokio::test]
async fn result_type_complete_on_every_modern_result_and_never_on_legacy_ones() {
    let server = server();
    let ctx = CallContext::new().with_session(mcp_core::Session::new());
    let calls = [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("tools/call", json!({"name": "probe"})),
        ("tools/call", json!({"name": "fail"})),
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "hello"})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "demo://plain"})),
        ("resources/read", json!({"uri": "demo://logs/monday"})),
    ];
    for (i, (method, params)) in calls.iter().enumerate() {
        let reply = ask(
            &server,
            &ctx,
            mreq(i as i64, method, params.clone(), no_caps()),
        )
        .await;
        let r = result(&reply);
        assert_complete(r);
        if params["name"] == "fail" {
            assert_eq!(r["isError"], true, "{r}");
            assert_eq!(tool_text(r), "disk full");
        }
    }

    // Legacy: initialize and the same methods (except discover) carry none
    // of it.
    let reply = ask(
        &server,
        &ctx,
        req(
            100,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}),
        ),
    )
    .await;
    assert_eq!(result(&reply)["protocolVersion"], "2025-06-18");
    assert_legacy_shape(result(&reply));
    let reply = ask(&server, &ctx, req(101, "ping", json!({}))).await;
    assert_legacy_shape(result(&reply));
    for (i, (method, params)) in calls.iter().enumerate().skip(1) {
        let reply = ask(&server, &ctx, req(200 + i as i64, method, params.clone())).await;
        assert_legacy_shape(result(&reply));
    }
    // A legacy request with a _meta that makes no modern claim is legacy.
    let reply = ask(
        &server,
        &ctx,
        req(300, "tools/list", json!({"_meta": {"progressToken": 1}})),
    )
    .await;
    assert_legacy_shape(result(&reply));
}

#[tokio::test]
async fn cache_hints_defaults_on_lists_and_reads_and_none_on_calls() {
    let server = server();
    let ctx = CallContext::default();
    let expect = [
        ("tools/list", json!({}), 60_000, "public"),
        ("prompts/list", json!({}), 60_000, "public"),
        ("resources/list", json!({}), 60_000, "public"),
        ("resources/templates/list", json!({}), 60_000, "public"),
        // A resource without with_cache: immediately stale, private.
        (
            "resources/read",
            json!({"uri": "demo://plain"}),
            0,
            "private",
        ),
        // Per descriptor: a fixed resource and a template.
        (
            "resources/read",
            json!({"uri": "demo://cached"}),
            123,
            "public",
        ),
        (
            "resources/read",
            json!({"uri": "demo://logs/tuesday"}),
            456,
            "private",
        ),
        ("server/discover", json!({}), 3_600_000, "public"),
    ];
    for (i, (method, params, ttl, scope)) in expect.into_iter().enumerate() {
        let reply = ask(
            &server,
            &ctx,
            mreq(i as i64, method, params.clone(), no_caps()),
        )
        .await;
        assert_eq!(
            cache_hint(result(&reply)),
            (ttl, scope.to_owned()),
            "{method} {params}"
        );
    }
    let reply = ask(
        &server,
        &ctx,
        mreq(
            20,
            "resources/read",
            json!({"uri": "demo://logs/tuesday"}),
            no_caps(),
        ),
    )
    .await;
    assert_eq!(
        result(&reply)["contents"],
        json!([{"uri": "demo://logs/tuesday", "text": "log of tuesday"}])
    );
    // Never on tools/call (success or tool error) or prompts/get.
    for (method, params) in [
        ("tools/call", json!({"name": "probe"})),
        ("tools/call", json!({"name": "fail"})),
        ("prompts/get", json!({"name": "hello"})),
    ] {
        let reply = ask(&server, &ctx, mreq(30, method, params, no_caps())).await;
        assert_no_cache_hint(result(&reply));
    }
}

#[tokio::test]
async fn cache_hints_overridden_per_server() {
    let server = builder(&Arc::new(Runs::default()))
        .list_cache(5_000, CacheScope::Private)
        .discover_cache(7, CacheScope::Private)
        .build()
        .expect("server builds");
    let ctx = CallContext::default();
    for (i, method) in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ]
    .into_iter()
    .enumerate()
    {
        let reply = ask(&server, &ctx, mreq(i as i64, method, json!({}), no_caps())).await;
        assert_eq!(
            cache_hint(result(&reply)),
            (5_000, "private".to_owned()),
            "{method}"
        );
    }
    let reply = ask(
        &server,
        &ctx,
        mreq(9, "server/discover", json!({}), no_caps()),
    )
    .await;
    assert_eq!(cache_hint(result(&reply)), (7, "private".to_owned()));
    // Descriptor hints are not replaced by the list hint.
    let reply = ask(
        &server,
        &ctx,
        mreq(
            10,
            "resources/read",
            json!({"uri": "demo://cached"}),
            no_caps(),
        ),
    )
    .await;
    assert_eq!(cache_hint(result(&reply)), (123, "public".to_owned()));

    // A tool with a visible hook makes the default list scope private.
    let hooked = McpServer::builder()
        .tool(
            McpToolDef::new(
                "secret",
                "Only for some",
                json!({"type": "object"}),
                |_a, _c: InvokeContext| async move { "ok" },
            )
            .with_visible(|_ctx: &CallContext| true),
        )
        .build()
        .expect("server builds");
    let reply = ask(&hooked, &ctx, mreq(11, "tools/list", json!({}), no_caps())).await;
    assert_eq!(cache_hint(result(&reply)), (60_000, "private".to_owned()));
}

#[tokio::test]
async fn unknown_resource_is_invalid_params_with_the_uri() {
    let server = server();
    let reply = ask(
        &server,
        &CallContext::default(),
        mreq(
            4,
            "resources/read",
            json!({"uri": "demo://nope"}),
            no_caps(),
        ),
    )
    .await;
    assert_eq!(reply["id"], 4);
    let err = error_obj(&reply);
    assert_eq!(
        *err,
        json!({"code": -32602, "message": "Unknown resource: demo://nope",
               "data": {"uri": "demo://nope"}})
    );
}

// ---------------------------------------------------------------------------
// subscriptions/listen
// ---------------------------------------------------------------------------

fn ack(id: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUB_ID: id}, "notifications": {}},
    })
}

fn listen_params() -> Value {
    modern(
        json!({"notifications": {
            "toolsListChanged": true,
            "promptsListChanged": true,
            "resourcesListChanged": true,
            "resourceSubscriptions": ["demo://plain"],
        }}),
        no_caps(),
    )
}

#[tokio::test]
async fn listen_acknowledges_first_tagged_with_numeric_and_string_ids() {
    let client = TestClient::start(server(), StdioOptions::default(), ClientOptions::default());
    let numeric = guard(
        "listen 900",
        client.start_request_with_id(
            RequestId::Number(900),
            "subscriptions/listen",
            listen_params(),
        ),
    )
    .await;
    let first = guard("ack 900", client.next_notification(HANG_GUARD))
        .await
        .expect("an acknowledgement");
    // Nothing the server offers changes, so it honours none of the asks.
    assert_eq!(first, ack(json!(900)));

    let string = guard(
        "listen L1",
        client.start_request_with_id(
            RequestId::from("L1"),
            "subscriptions/listen",
            listen_params(),
        ),
    )
    .await;
    let second = guard("ack L1", client.next_notification(HANG_GUARD))
        .await
        .expect("an acknowledgement");
    assert_eq!(second, ack(json!("L1")));

    // Open listens do not block other requests on the stream.
    let r = guard(
        "list while listening",
        client.request("tools/list", modern(json!({}), no_caps())),
    )
    .await
    .expect("tools/list");
    assert_complete(&r);

    // The client ends both; no reply comes for a cancelled listen (checked
    // byte-exactly in listen_cancel_and_end_of_input_on_a_raw_stream).
    assert!(client.cancel(&numeric.id).await);
    assert!(client.cancel(&string.id).await);
}

#[tokio::test]
async fn listen_cancel_and_end_of_input_on_a_raw_stream() {
    let mut raw = Raw::start(server());
    raw.send(&req("A", "subscriptions/listen", listen_params()))
        .await;
    assert_eq!(raw.next().await, Some(ack(json!("A"))), "ack comes first");
    raw.send(&req(2, "subscriptions/listen", listen_params()))
        .await;
    assert_eq!(raw.next().await, Some(ack(json!(2))));

    // The client cancels "A".
    raw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": "A", "reason": "done"}}),
    )
    .await;
    // The stream still serves requests.
    raw.send(&mreq(3, "tools/list", json!({}), no_caps())).await;
    let r = raw.next().await.expect("a reply to tools/list");
    assert_eq!(r["id"], 3);
    assert_complete(result(&r));

    // End of input ends listen 2 gracefully with its tagged result; "A"
    // gets nothing.
    let rest = raw.finish().await;
    let responses: Vec<&Value> = rest.iter().filter(|m| m.get("id").is_some()).collect();
    assert_eq!(
        responses,
        [&json!({
            "jsonrpc": "2.0",
            "id": 2,
            "result": {
                "resultType": "complete",
                "_meta": {SUB_ID: 2, SERVER_INFO: server_info_json()},
            },
        })],
        "remaining output: {rest:?}"
    );
    assert!(
        !rest.iter().any(|m| m.to_string().contains("\"A\"")),
        "nothing more for the cancelled listen: {rest:?}"
    );
}

#[tokio::test]
async fn listen_requires_a_notifications_object() {
    let server = server();
    for params in [
        json!({}),
        json!({"notifications": true}),
        json!({"notifications": []}),
    ] {
        let reply = ask(
            &server,
            &CallContext::default(),
            mreq(5, "subscriptions/listen", params.clone(), no_caps()),
        )
        .await;
        assert_eq!(
            error(&reply),
            (
                -32602,
                "subscriptions/listen requires a `notifications` object".to_owned()
            ),
            "{params}"
        );
    }
    // Over a stream: the error is the reply and no acknowledgement precedes it.
    let mut raw = Raw::start(server);
    raw.send(&mreq(6, "subscriptions/listen", json!({}), no_caps()))
        .await;
    let first = raw.next().await.expect("a reply");
    assert_eq!(first["id"], 6);
    assert_eq!(error(&first).0, -32602);
    assert!(raw.finish().await.is_empty());
}

#[tokio::test]
async fn legacy_listen_is_method_not_found() {
    let reply = ask(
        &server(),
        &CallContext::default(),
        req(1, "subscriptions/listen", json!({"notifications": {}})),
    )
    .await;
    assert_eq!(
        error(&reply),
        (-32601, "Method not found: subscriptions/listen".to_owned())
    );
}

// ---------------------------------------------------------------------------
// 3. Multi round-trip requests
// ---------------------------------------------------------------------------

#[tokio::test]
async fn mrtr_form_elicitation_round_trip() {
    let (server, runs) = server_with_runs();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    assert_eq!(reply["id"], 1);
    let (requests, state) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Which branch?", branch_schema())})
    );
    assert_eq!(runs.deploy.load(Ordering::SeqCst), 1);

    // The retry: a new id, the same params plus the answer and the state.
    let reply = ask(
        &server,
        &ctx,
        req(
            2,
            "tools/call",
            retry(
                &first,
                json!({"elicit-0": accept(json!({"branch": "main"}))}),
                &state,
            ),
        ),
    )
    .await;
    assert_eq!(reply["id"], 2);
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(tool_text(r), "deployed prod from main");
    assert_no_cache_hint(r);

    // Decline and cancel are delivered as such.
    for (answer, text) in [
        (json!({"action": "decline"}), "prod: declined"),
        (json!({"action": "cancel"}), "prod: cancelled"),
    ] {
        let reply = ask(
            &server,
            &ctx,
            req(
                3,
                "tools/call",
                retry(&first, json!({"elicit-0": answer}), &state),
            ),
        )
        .await;
        assert_eq!(tool_text(result(&reply)), text);
    }
}

#[tokio::test]
async fn mrtr_retry_without_the_answer_asks_again() {
    let server = server();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (requests, state) = input_required(result(&reply));
    // Same state, no inputResponses (or an unknown key only): asked again,
    // not an error.
    for responses in [json!({}), json!({"other": accept(json!({"branch": "x"}))})] {
        let reply = ask(
            &server,
            &ctx,
            req(2, "tools/call", retry(&first, responses, &state)),
        )
        .await;
        let (again, _) = input_required(result(&reply));
        assert_eq!(again, requests);
    }
}

/// Answers count only for questions the server issued, as recorded in its
/// sealed state: `inputResponses` without a `requestState` are not trusted,
/// and the question is asked again.
#[tokio::test]
async fn mrtr_first_round_answers_without_state_are_used_and_validated() {
    // Answers sent without a requestState carry no earlier round; they are
    // the client's own and are used as given (the conformance suite's
    // "ignore extra params" case). Extra keys are ignored; an answer that is
    // not an object is dropped and the question asked again.
    let (server, runs) = server_with_runs();
    let ctx = CallContext::default();
    let mut params = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let mut answers = branch_answer();
    answers["unrelated"] = json!({"action": "accept", "content": {"x": 1}});
    params["inputResponses"] = answers;
    let reply = ask(&server, &ctx, req(1, "tools/call", params.clone())).await;
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(tool_text(r), "deployed prod from main");
    assert_eq!(runs.deploy.load(Ordering::SeqCst), 1);

    params["inputResponses"] = json!({"elicit-0": 12345});
    let reply = ask(&server, &ctx, req(2, "tools/call", params)).await;
    let (requests, _) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Which branch?", branch_schema())})
    );
}

#[tokio::test]
async fn mrtr_confirm_round_trip() {
    let server = server();
    let ctx = CallContext::default();
    let first = modern(json!({"name": "delete"}), elicit_caps());
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (requests, state) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Delete everything?", confirm_schema())})
    );
    for (answer, text) in [
        (accept(json!({"confirm": true})), "deleted"),
        (accept(json!({"confirm": false})), "kept"),
        (json!({"action": "decline"}), "kept"),
    ] {
        let reply = ask(
            &server,
            &ctx,
            req(
                2,
                "tools/call",
                retry(&first, json!({"elicit-0": answer}), &state),
            ),
        )
        .await;
        let r = result(&reply);
        assert_complete(r);
        assert_eq!(tool_text(r), text);
    }
}

#[tokio::test]
async fn mrtr_two_sequential_elicitations_take_two_rounds() {
    let (server, runs) = server_with_runs();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "two_step", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );

    // Round 1: the branch.
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (requests, state1) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Which branch?", branch_schema())})
    );

    // Round 2: the confirmation, which already knows the branch.
    let reply = ask(
        &server,
        &ctx,
        req(
            2,
            "tools/call",
            retry(
                &first,
                json!({"elicit-0": accept(json!({"branch": "main"}))}),
                &state1,
            ),
        ),
    )
    .await;
    let (requests, state2) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-1": elicit_request("Deploy main?", confirm_schema())})
    );
    assert_ne!(state1, state2);

    // Round 3 answers only the second question: the first answer travels in
    // the state, and the tool sees both.
    let reply = ask(
        &server,
        &ctx,
        req(
            3,
            "tools/call",
            retry(
                &first,
                json!({"elicit-1": accept(json!({"confirm": true}))}),
                &state2,
            ),
        ),
    )
    .await;
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(tool_text(r), "branch=main confirmed=true");
    assert_eq!(runs.two_step.load(Ordering::SeqCst), 3, "one run per round");

    // A re-sent earlier answer cannot override the sealed one.
    let reply = ask(
        &server,
        &ctx,
        req(
            4,
            "tools/call",
            retry(
                &first,
                json!({
                    "elicit-0": accept(json!({"branch": "evil"})),
                    "elicit-1": accept(json!({"confirm": true})),
                }),
                &state2,
            ),
        ),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "branch=main confirmed=true");

    // Answers to questions not asked yet are ignored: the first state only
    // takes elicit-0, so the tool still asks elicit-1.
    let reply = ask(
        &server,
        &ctx,
        req(
            5,
            "tools/call",
            retry(
                &first,
                json!({
                    "elicit-0": accept(json!({"branch": "main"})),
                    "elicit-1": accept(json!({"confirm": true})),
                }),
                &state1,
            ),
        ),
    )
    .await;
    let (requests, _) = input_required(result(&reply));
    assert_eq!(
        requests
            .as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["elicit-1".to_owned()])
    );
}

/// Runs the first round of `deploy {env: prod}` on `server` and returns
/// `(first params, state)`.
async fn first_round(server: &McpServer, ctx: &CallContext) -> (Value, Value) {
    let first = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(server, ctx, req(1, "tools/call", first.clone())).await;
    let (_, state) = input_required(result(&reply));
    (first, state)
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

#[tokio::test]
async fn mrtr_tampered_state_is_rejected() {
    let server = server();
    let ctx = CallContext::default();
    let (first, state) = first_round(&server, &ctx).await;
    let s = state.as_str().expect("string state");

    // A flipped character in the payload.
    let parts: Vec<&str> = s.split('.').collect();
    let mut payload = parts[2].to_owned().into_bytes();
    let i = payload.len() / 2;
    payload[i] = if payload[i] == b'A' { b'B' } else { b'A' };
    let flipped = format!(
        "{}.{}.{}.{}",
        parts[0],
        parts[1],
        String::from_utf8(payload).expect("ascii"),
        parts[3]
    );
    let reply = ask(
        &server,
        &ctx,
        req(
            2,
            "tools/call",
            retry(&first, branch_answer(), &json!(flipped)),
        ),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");

    // A well-formed forgery: the expiry pushed out, the tag kept.
    let forged = forge_state(s, |p| p["e"] = json!(u64::MAX / 2));
    let reply = ask(
        &server,
        &ctx,
        req(
            3,
            "tools/call",
            retry(&first, branch_answer(), &json!(forged)),
        ),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");

    // A state answering the question itself, without the client's retry.
    let forged = forge_state(s, |p| p["a"] = branch_answer());
    let reply = ask(
        &server,
        &ctx,
        req(4, "tools/call", retry(&first, json!({}), &json!(forged))),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");

    // A tampered tag; garbage; a non-string state.
    let bad_tag = format!("{}.{}.{}.{}", parts[0], parts[1], parts[2], "AAAA");
    let reply = ask(
        &server,
        &ctx,
        req(
            5,
            "tools/call",
            retry(&first, branch_answer(), &json!(bad_tag)),
        ),
    )
    .await;
    assert_eq!(error(&reply).0, -32602);
    assert!(
        error(&reply).1.starts_with("Invalid requestState: "),
        "{reply}"
    );
    let reply = ask(
        &server,
        &ctx,
        req(
            6,
            "tools/call",
            retry(&first, branch_answer(), &json!("garbage")),
        ),
    )
    .await;
    assert_invalid_state(&reply, "requestState is malformed");
    let reply = ask(
        &server,
        &ctx,
        req(7, "tools/call", retry(&first, branch_answer(), &json!(42))),
    )
    .await;
    assert_eq!(
        error(&reply),
        (-32602, "`requestState` must be a string".to_owned())
    );

    // The untouched state still works.
    let reply = ask(
        &server,
        &ctx,
        req(8, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "deployed prod from main");
}

#[tokio::test]
async fn mrtr_sealed_answers_cannot_be_rewritten() {
    let server = server();
    let ctx = CallContext::default();
    let first = modern(json!({"name": "two_step", "arguments": {}}), elicit_caps());
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (_, state1) = input_required(result(&reply));
    let reply = ask(
        &server,
        &ctx,
        req(2, "tools/call", retry(&first, branch_answer(), &state1)),
    )
    .await;
    let (_, state2) = input_required(result(&reply));
    let s = state2.as_str().expect("string");
    // The payload carries the first answer (readable, not writable).
    assert_eq!(
        state_payload(s)["a"]["elicit-0"],
        accept(json!({"branch": "main"}))
    );
    let forged = forge_state(s, |p| {
        p["a"]["elicit-0"] = accept(json!({"branch": "evil"}));
    });
    let reply = ask(
        &server,
        &ctx,
        req(
            3,
            "tools/call",
            retry(
                &first,
                json!({"elicit-1": accept(json!({"confirm": true}))}),
                &json!(forged),
            ),
        ),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");
}

#[tokio::test]
async fn mrtr_state_replayed_for_other_arguments_or_another_tool_is_rejected() {
    // One configured key, and a prompt sharing the tool's name, so that only
    // the binding can tell the requests apart.
    let server = builder(&Arc::new(Runs::default()))
        .request_state_keys(StateKeys::new(key("k", 8), vec![]))
        .prompt(McpPromptDef::new(
            "deploy",
            |_a: PromptArgs, _c: InvokeContext| async move { "a prompt".to_owned() },
        ))
        .build()
        .expect("server builds");
    let ctx = CallContext::default();
    let (first, state) = first_round(&server, &ctx).await;

    let other_args = modern(
        json!({"name": "deploy", "arguments": {"env": "dev"}}),
        elicit_caps(),
    );
    let reply = ask(
        &server,
        &ctx,
        req(2, "tools/call", retry(&other_args, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");

    let no_args = modern(json!({"name": "deploy"}), elicit_caps());
    let reply = ask(
        &server,
        &ctx,
        req(3, "tools/call", retry(&no_args, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");

    let other_tool = modern(
        json!({"name": "two_step", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(
        &server,
        &ctx,
        req(4, "tools/call", retry(&other_tool, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");

    // Another method with the same name and arguments.
    let prompt = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(
        &server,
        &ctx,
        req(5, "prompts/get", retry(&prompt, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");

    // The genuine retry still works.
    let reply = ask(
        &server,
        &ctx,
        req(6, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "deployed prod from main");
}

#[tokio::test]
async fn mrtr_state_sealed_by_another_server_is_rejected() {
    // Two servers with default keys: each a random per-process key.
    let a = server();
    let b = server();
    let ctx = CallContext::default();
    let (first, state) = first_round(&a, &ctx).await;
    let reply = ask(
        &b,
        &ctx,
        req(2, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");

    // Configured keys with different ids.
    let c = server_with_keys(StateKeys::new(key("c-key", 3), vec![]));
    let reply = ask(
        &c,
        &ctx,
        req(3, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState was sealed with an unknown key");

    // The same key id with a different secret.
    let d1 = server_with_keys(StateKeys::new(key("shared", 4), vec![]));
    let d2 = server_with_keys(StateKeys::new(key("shared", 5), vec![]));
    let (first, state) = first_round(&d1, &ctx).await;
    let reply = ask(
        &d2,
        &ctx,
        req(4, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");

    // Same configured key: another instance completes the call (scale-out).
    let d3 = server_with_keys(StateKeys::new(key("shared", 4), vec![]));
    let reply = ask(
        &d3,
        &ctx,
        req(5, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "deployed prod from main");
}

#[tokio::test]
async fn mrtr_expired_state_is_rejected() {
    let server = server_with_keys(StateKeys::new(key("k", 6), vec![]).with_ttl(Duration::ZERO));
    let ctx = CallContext::default();
    let (first, state) = first_round(&server, &ctx).await;
    // Let the millisecond clock move past the zero-length validity.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let reply = ask(
        &server,
        &ctx,
        req(2, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState has expired");
}

#[tokio::test]
async fn mrtr_key_rotation_opens_state_sealed_with_a_previous_key() {
    let old = key("old", 1);
    let new = key("new", 2);
    let a = server_with_keys(StateKeys::new(old.clone(), vec![]));
    let b = server_with_keys(StateKeys::new(new.clone(), vec![old]));
    let only_new = server_with_keys(StateKeys::new(new, vec![]));
    let ctx = CallContext::default();

    let (first, state) = first_round(&a, &ctx).await;
    assert!(
        state.as_str().expect("string").starts_with("v1.old."),
        "{state}"
    );
    let reply = ask(
        &b,
        &ctx,
        req(2, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(tool_text(r), "deployed prod from main");

    // Once the old key is dropped, its state is refused.
    let reply = ask(
        &only_new,
        &ctx,
        req(3, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState was sealed with an unknown key");

    // B seals with its current key, which A does not know.
    let two = modern(json!({"name": "two_step", "arguments": {}}), elicit_caps());
    let reply = ask(&a, &ctx, req(4, "tools/call", two.clone())).await;
    let (_, s1) = input_required(result(&reply));
    let reply = ask(
        &b,
        &ctx,
        req(5, "tools/call", retry(&two, branch_answer(), &s1)),
    )
    .await;
    let (_, s2) = input_required(result(&reply));
    assert!(s2.as_str().expect("string").starts_with("v1.new."), "{s2}");
    let answer = json!({"elicit-1": accept(json!({"confirm": true}))});
    let reply = ask(
        &a,
        &ctx,
        req(6, "tools/call", retry(&two, answer.clone(), &s2)),
    )
    .await;
    assert_invalid_state(&reply, "requestState was sealed with an unknown key");
    let reply = ask(
        &only_new,
        &ctx,
        req(7, "tools/call", retry(&two, answer, &s2)),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "branch=main confirmed=true");
}

#[tokio::test]
async fn mrtr_state_is_bound_to_the_principal() {
    let server = server();
    let alice = CallContext::new().with_principal("alice");
    let bob = CallContext::new().with_principal("bob");
    let anonymous = CallContext::default();
    let (first, state) = first_round(&server, &alice).await;

    for (i, ctx) in [&bob, &anonymous].into_iter().enumerate() {
        let reply = ask(
            &server,
            ctx,
            req(
                10 + i as i64,
                "tools/call",
                retry(&first, branch_answer(), &state),
            ),
        )
        .await;
        assert_invalid_state(&reply, "requestState belongs to a different principal");
    }
    // Anonymous state is not usable by a principal either.
    let (first_anon, anon_state) = first_round(&server, &anonymous).await;
    let reply = ask(
        &server,
        &alice,
        req(
            20,
            "tools/call",
            retry(&first_anon, branch_answer(), &anon_state),
        ),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different principal");

    let reply = ask(
        &server,
        &alice,
        req(21, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "deployed prod from main");
}

// ---------------------------------------------------------------------------
// 4. Write-once tools across eras
// ---------------------------------------------------------------------------

#[tokio::test]
async fn write_once_tool_serves_a_legacy_and_a_modern_client_on_one_stream() {
    let (server, runs) = server_with_runs();
    let pushed: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = Arc::clone(&pushed);
    let options = ClientOptions::default().elicit(move |params: &Value| {
        seen.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(params.clone());
        Ok(json!({"action": "accept", "content": {"branch": "main"}}))
    });
    let mut client = TestClient::start(server, StdioOptions::default(), options);
    guard("initialize", client.initialize(LATEST_PROTOCOL_VERSION))
        .await
        .expect("initialize");

    // Legacy: elicitation/create is pushed over the stream and answered by
    // the client's handler; the body runs once.
    let r = guard(
        "legacy deploy",
        client.request(
            "tools/call",
            json!({"name": "deploy", "arguments": {"env": "prod"}}),
        ),
    )
    .await
    .expect("legacy call");
    assert_legacy_shape(&r);
    assert_eq!(tool_text(&r), "deployed prod from main");
    assert_eq!(
        runs.deploy.load(Ordering::SeqCst),
        1,
        "legacy runs the prefix once"
    );
    {
        let pushed = pushed.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(pushed.len(), 1);
        assert_eq!(pushed[0]["message"], "Which branch?");
        assert_eq!(pushed[0]["requestedSchema"], branch_schema());
    }

    // Modern on the same stream: no request is pushed; input_required, then
    // the retry. The body runs twice.
    let first = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let r = guard(
        "modern round 1",
        client.request("tools/call", first.clone()),
    )
    .await
    .expect("modern round 1");
    let (requests, state) = input_required(&r);
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Which branch?", branch_schema())})
    );
    let r = guard(
        "modern round 2",
        client.request(
            "tools/call",
            retry(
                &first,
                json!({"elicit-0": accept(json!({"branch": "main"}))}),
                &state,
            ),
        ),
    )
    .await
    .expect("modern round 2");
    assert_complete(&r);
    assert_eq!(tool_text(&r), "deployed prod from main");
    assert_eq!(
        runs.deploy.load(Ordering::SeqCst),
        3,
        "modern runs the prefix twice (1 legacy + 2 modern)"
    );
    assert_eq!(
        pushed.lock().unwrap_or_else(PoisonError::into_inner).len(),
        1,
        "a modern request never pushes elicitation/create"
    );
}

#[tokio::test]
async fn write_once_rule_prefix_runs_once_per_round() {
    // A fresh count per era, each on its own connection.
    let (server, runs) = server_with_runs();
    let options = ClientOptions::default()
        .elicit(|_| Ok(json!({"action": "accept", "content": {"branch": "main"}})));
    let client = TestClient::connect_with(server, StdioOptions::default(), options)
        .await
        .expect("connect");
    let r = guard("legacy", client.call_tool("two_step", json!({})))
        .await
        .expect("legacy call");
    // This handler answers the confirm form with {branch} only: not confirmed.
    assert_eq!(r.text_content(), "branch=main confirmed=false");
    assert_eq!(
        runs.two_step.load(Ordering::SeqCst),
        1,
        "legacy: once for two questions"
    );

    let (server, runs) = server_with_runs();
    let client = TestClient::start(server, StdioOptions::default(), ClientOptions::default());
    let first = modern(json!({"name": "two_step", "arguments": {}}), elicit_caps());
    let r = guard("round 1", client.request("tools/call", first.clone()))
        .await
        .expect("round 1");
    let (_, s1) = input_required(&r);
    let r = guard(
        "round 2",
        client.request("tools/call", retry(&first, branch_answer(), &s1)),
    )
    .await
    .expect("round 2");
    let (_, s2) = input_required(&r);
    let r = guard(
        "round 3",
        client.request(
            "tools/call",
            retry(
                &first,
                json!({"elicit-1": accept(json!({"confirm": true}))}),
                &s2,
            ),
        ),
    )
    .await
    .expect("round 3");
    assert_eq!(tool_text(&r), "branch=main confirmed=true");
    assert_eq!(
        runs.two_step.load(Ordering::SeqCst),
        3,
        "modern: once per round for two questions"
    );
}

#[tokio::test]
async fn modern_request_without_elicitation_capability() {
    let (server, runs) = server_with_runs();
    let ctx = CallContext::default();
    // ctx.elicitation() is None, also for a URL-only elicitation capability.
    for caps in [
        no_caps(),
        json!({"elicitation": {"url": {}}}),
        json!({"sampling": {}}),
    ] {
        let reply = ask(
            &server,
            &ctx,
            mreq(1, "tools/call", json!({"name": "probe"}), caps.clone()),
        )
        .await;
        let probe = probe_of(result(&reply));
        assert_eq!(probe["elicitation"], false, "caps {caps}");
        assert_eq!(probe["capabilities"], caps);

        // require_elicitation: -32021 naming the capability.
        let reply = ask(
            &server,
            &ctx,
            mreq(
                2,
                "tools/call",
                json!({"name": "deploy", "arguments": {"env": "prod"}}),
                caps.clone(),
            ),
        )
        .await;
        assert_eq!(reply["id"], 2);
        assert_eq!(
            *error_obj(&reply),
            json!({
                "code": -32021,
                "message": "Missing required client capability",
                "data": {"requiredCapabilities": {"elicitation": {}}},
            }),
            "caps {caps}"
        );

        // confirm fails closed: no question, a complete "kept".
        let reply = ask(
            &server,
            &ctx,
            mreq(3, "tools/call", json!({"name": "delete"}), caps.clone()),
        )
        .await;
        let r = result(&reply);
        assert_complete(r);
        assert_eq!(tool_text(r), "kept");
    }
    assert_eq!(runs.deploy.load(Ordering::SeqCst), 3);

    // The same for prompts/get.
    let reply = ask(
        &server,
        &ctx,
        mreq(
            4,
            "prompts/get",
            json!({"name": "brief", "arguments": {"audience": "ops"}}),
            no_caps(),
        ),
    )
    .await;
    assert_eq!(error(&reply).0, -32021);
    assert_eq!(
        error_obj(&reply)["data"],
        json!({"requiredCapabilities": {"elicitation": {}}})
    );

    // With {"elicitation": {"form": {}}} the handle is there.
    let reply = ask(
        &server,
        &ctx,
        mreq(
            5,
            "tools/call",
            json!({"name": "probe"}),
            json!({"elicitation": {"form": {}}}),
        ),
    )
    .await;
    assert_eq!(probe_of(result(&reply))["elicitation"], true);
}

#[tokio::test]
async fn legacy_require_elicitation_without_capability_is_internal_error() {
    let server = server();
    let client = TestClient::connect_with(
        server,
        StdioOptions::default(),
        ClientOptions::default().without_elicitation(),
    )
    .await
    .expect("connect");
    let err = guard("deploy", client.call_tool("deploy", json!({"env": "prod"})))
        .await
        .expect_err("no elicitation");
    assert_eq!(err.code, -32603);
}

#[tokio::test]
async fn mrtr_prompts_get_input_required_and_retry() {
    let server = server();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "brief", "arguments": {"audience": "ops"}}),
        elicit_caps(),
    );
    let reply = ask(&server, &ctx, req(1, "prompts/get", first.clone())).await;
    let (requests, state) = input_required(result(&reply));
    let topic_schema = Value::Object(mcp_core::schema_for::<Topic>());
    assert_eq!(topic_schema["properties"]["topic"]["type"], "string");
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Which topic?", topic_schema)})
    );
    let answer = json!({"elicit-0": accept(json!({"topic": "billing"}))});
    let reply = ask(
        &server,
        &ctx,
        req(2, "prompts/get", retry(&first, answer.clone(), &state)),
    )
    .await;
    let r = result(&reply);
    assert_complete(r);
    assert_no_cache_hint(r);
    assert_eq!(
        r["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Brief ops on billing"}}])
    );
    // Bound to the prompt arguments.
    let other = modern(
        json!({"name": "brief", "arguments": {"audience": "dev"}}),
        elicit_caps(),
    );
    let reply = ask(
        &server,
        &ctx,
        req(3, "prompts/get", retry(&other, answer, &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");
}

#[tokio::test]
async fn mrtr_resources_read_input_required_and_retry() {
    let server = server();
    let ctx = CallContext::default();
    let first = modern(json!({"uri": "demo://guarded"}), elicit_caps());
    let reply = ask(&server, &ctx, req(1, "resources/read", first.clone())).await;
    let (requests, state) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Reveal the secret?", confirm_schema())})
    );
    let answer = json!({"elicit-0": accept(json!({"confirm": true}))});
    let reply = ask(
        &server,
        &ctx,
        req(2, "resources/read", retry(&first, answer.clone(), &state)),
    )
    .await;
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(
        r["contents"],
        json!([{"uri": "demo://guarded", "text": "s3cret"}])
    );
    // A final resources/read result carries its (required) cache hint.
    assert_eq!(cache_hint(r), (0, "private".to_owned()));

    // Bound to the URI: replayed on another resource, rejected.
    let other = modern(json!({"uri": "demo://plain"}), elicit_caps());
    let reply = ask(
        &server,
        &ctx,
        req(3, "resources/read", retry(&other, answer, &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");

    // Without the capability: fails closed, complete.
    let reply = ask(
        &server,
        &ctx,
        mreq(
            4,
            "resources/read",
            json!({"uri": "demo://guarded"}),
            no_caps(),
        ),
    )
    .await;
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(r["contents"][0]["text"], "withheld");
}

// ---------------------------------------------------------------------------
// Progress over stdio
// ---------------------------------------------------------------------------

#[tokio::test]
async fn modern_progress_over_stdio_carries_the_token() {
    let client = TestClient::start(server(), StdioOptions::default(), ClientOptions::default());
    for token in [json!("tok-7"), json!(42)] {
        let mut params = modern(json!({"name": "progress"}), no_caps());
        params["_meta"]["progressToken"] = token.clone();
        let r = guard("progress call", client.request("tools/call", params))
            .await
            .expect("call");
        assert_complete(&r);
        assert_eq!(tool_text(&r), "done");
        let progress: Vec<Value> = client
            .drain_notifications()
            .await
            .into_iter()
            .filter(|n| n["method"] == "notifications/progress")
            .map(|n| n["params"].clone())
            .collect();
        assert_eq!(
            progress,
            [
                json!({"progressToken": token, "progress": 1.0, "total": 2.0, "message": "half"}),
                json!({"progressToken": token, "progress": 2.0, "total": 2.0}),
            ],
            "token {token}"
        );
    }
    // Without a token: no progress notifications.
    let r = guard(
        "no token",
        client.request("tools/call", modern(json!({"name": "progress"}), no_caps())),
    )
    .await
    .expect("call");
    assert_eq!(tool_text(&r), "done");
    assert!(client
        .drain_notifications()
        .await
        .iter()
        .all(|n| n["method"] != "notifications/progress"));
}

// ---------------------------------------------------------------------------
// Hardening of requestState (issue 16)
// ---------------------------------------------------------------------------

/// Only the answers the handler asked for are sealed into the next round's
/// state: keys the server never asked (however large) are not carried.
#[tokio::test]
async fn mrtr_answers_nobody_asked_for_are_not_sealed() {
    let (server, _runs) = server_with_runs();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "two_step", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (_, state) = input_required(result(&reply));
    let state = state.as_str().expect("a string state").to_owned();
    let mut answers = branch_answer();
    let junk = "x".repeat(64 * 1024);
    answers["junk"] = json!({"action": "accept", "content": {"pad": junk}});
    let reply = ask(
        &server,
        &ctx,
        req(2, "tools/call", retry(&first, answers, &json!(state))),
    )
    .await;
    let (requests, next) = input_required(result(&reply));
    assert!(requests.get("elicit-1").is_some(), "{requests}");
    let next = next.as_str().expect("a string state");
    let payload = state_payload(next);
    assert!(payload["a"].get("elicit-0").is_some(), "{payload}");
    assert!(payload["a"].get("junk").is_none(), "{payload}");
    assert!(next.len() < 4096, "state grew to {} bytes", next.len());
}

/// A tag spelled with non-zero unused bits in its last base64url character
/// (another spelling of the same bytes) does not verify.
#[tokio::test]
async fn mrtr_state_tags_must_be_canonical_base64url() {
    let (server, _runs) = server_with_runs();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (_, state) = input_required(result(&reply));
    let state = state.as_str().expect("a string state");
    let (head, tag) = state.rsplit_once('.').expect("a tag");
    // A 32-byte tag is 43 characters: the last one carries 2 unused bits.
    assert_eq!(tag.len(), 43);
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let last = tag.as_bytes()[42];
    let index = alphabet
        .iter()
        .position(|&c| c == last)
        .expect("a base64url character");
    for unused in 1..4 {
        let other = char::from(alphabet[(index & !3) | unused]);
        let forged = format!("{head}.{}{other}", &tag[..42]);
        let reply = ask(
            &server,
            &ctx,
            req(
                2,
                "tools/call",
                retry(&first, branch_answer(), &json!(forged)),
            ),
        )
        .await;
        assert_invalid_state(&reply, "requestState is malformed");
    }
    // The canonical spelling still opens.
    let reply = ask(
        &server,
        &ctx,
        req(
            3,
            "tools/call",
            retry(&first, branch_answer(), &json!(state)),
        ),
    )
    .await;
    assert_complete(result(&reply));
}
