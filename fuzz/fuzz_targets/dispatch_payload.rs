//! Bytes that parse as JSON (others are skipped: `handle_frame` covers the
//! parse errors) through `McpServer::dispatch_payload`: never a panic, and
//! the reply, when there is one, serializes to valid JSON-RPC.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_core::transport::CallContext;
use mcp_core_fuzz::{assert_json, assert_jsonrpc, shared};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(payload) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let (rt, server) = shared();
    let ctx = CallContext::new();
    let reply = rt.block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_secs(60),
            server.dispatch_payload(payload, &ctx),
        )
        .await
    });
    if let Ok(Some(value)) = reply {
        // The reply must survive the trip a transport gives it.
        let bytes = serde_json::to_vec(&value)
            .unwrap_or_else(|e| panic!("dispatch_payload: reply does not serialize: {e}"));
        let back = assert_json("dispatch_payload", data, &bytes);
        assert_jsonrpc("dispatch_payload", data, &back);
    }
});
