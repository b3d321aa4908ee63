//! Helpers shared by the dispatcher-level integration tests.
#![allow(dead_code)]

pub mod tasks;

use std::future::Future;
use std::time::Duration;

use mcp_core::{transport::CallContext, McpServer};
use serde_json::{json, Value};

/// Generous guard against hangs; never a timing assertion.
pub const HANG_GUARD: Duration = Duration::from_secs(10);

/// Awaits `fut`, failing the test if it hangs for [`HANG_GUARD`].
pub async fn guard<F: Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(HANG_GUARD, fut)
        .await
        .unwrap_or_else(|_| panic!("hung for 10 s: {what}"))
}

/// A JSON-RPC request.
pub fn req(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// Sends `message` through `handle_message` and returns the reply (which
/// must exist). The exchange is traced for schema validation when
/// `MCP_TRACE_DIR` is set (legacy requests under 2025-11-25).
pub async fn ask(server: &McpServer, ctx: &CallContext, message: Value) -> Value {
    let shown = message.to_string();
    let reply = guard(&shown, server.handle_message(message.clone(), ctx))
        .await
        .unwrap_or_else(|| panic!("expected a reply to {shown}"));
    mcp_core::testing::trace::trace_exchange(
        &message,
        &reply,
        mcp_core::protocol::LATEST_PROTOCOL_VERSION,
    );
    reply
}

/// Asserts `error` (a JSON-RPC error object) answers a handler's panic as
/// the server must: `-32603`, a generic message naming an error id that
/// `data.errorId` repeats, and nothing of the panic's own text (`secret`).
#[track_caller]
#[allow(dead_code)] // not every test file has panicking handlers
pub fn assert_panic_error(error: &Value, secret: &str) {
    assert_eq!(error["code"], -32603, "{error}");
    let id = error["data"]["errorId"]
        .as_str()
        .unwrap_or_else(|| panic!("no data.errorId in {error}"));
    assert_eq!(id.len(), 16, "{error}");
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{error}");
    assert_eq!(
        error["message"],
        format!("Internal error (error id {id})"),
        "{error}"
    );
    assert!(
        !error.to_string().contains(secret),
        "the panic message leaked to the client: {error}"
    );
}
