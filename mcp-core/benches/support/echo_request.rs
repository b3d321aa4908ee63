//! The echo `tools/call` POST the HTTP micro-benchmark and the growth
//! example both send through `McpHttpService::handle`, built in memory.

use bytes::Bytes;
use http_body_util::Full;
use serde_json::{json, Value};

/// The `_meta` envelope of a 2026-07-28 request as a desktop client sends it
/// on every call (the official SDK clients declare their `clientInfo` and
/// capabilities each time): what the driver of `bench/compare.sh` sends.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-bench", "version": "0.1.0"},
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {"form": {}}, "roots": {}, "sampling": {}}})
}

/// The JSON-RPC body: legacy, or 2026-07-28 with its `_meta` envelope.
pub fn echo_body(modern: bool) -> Bytes {
    let mut body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"hello world"}}});
    if modern {
        body["params"]["_meta"] = modern_meta();
    }
    Bytes::from(body.to_string())
}

/// The POST carrying `body`, with the routing headers a 2026-07-28 client sends.
pub fn echo_post(body: &Bytes, modern: bool) -> hyper::Request<Full<Bytes>> {
    let mut req = hyper::Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", "127.0.0.1:40000")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if modern {
        req = req
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "echo");
    }
    req.body(Full::new(body.clone()))
        .unwrap_or_else(|e| panic!("request: {e}"))
}
