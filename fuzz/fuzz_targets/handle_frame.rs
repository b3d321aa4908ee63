//! Arbitrary bytes as one transport frame (a stdio line, an HTTP body)
//! through `McpServer::handle_frame`: never a panic, and the reply, when
//! there is one, is a JSON-RPC message (or batch) in valid JSON.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_core::transport::CallContext;
use mcp_core_fuzz::{assert_json, assert_jsonrpc, shared};

fuzz_target!(|data: &[u8]| {
    let (rt, server) = shared();
    let ctx = CallContext::new();
    // A bound in (paused, so free) time: a call left waiting, e.g. for an
    // elicitation no one can answer here, is abandoned rather than hung.
    let reply = rt.block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_secs(60),
            server.handle_frame(data, &ctx),
        )
        .await
    });
    if let Ok(Some(bytes)) = reply {
        let value = assert_json("handle_frame", data, &bytes);
        assert_jsonrpc("handle_frame", data, &value);
    }
});
