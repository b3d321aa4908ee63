//! The future hyper boxes for every request stays within a KiB: glibc's
//! malloc serves blocks up to 1,032 bytes from a per-thread cache, and a
//! larger box takes its slow path (and a larger copy) on every request
//! (BENCHMARKS.md, "Futures the allocator keeps in its per-thread cache").

use bytes::Bytes;
use http_body_util::Full;
use mcp_core::{CallToolResult, HttpOptions, InvokeContext, McpHttpService, McpServer, McpToolDef};
use serde_json::{json, Map, Value};

/// The largest box the per-request paths may allocate.
const MAX_BOXED: usize = 1024;

#[test]
fn the_future_of_each_http_request_fits_the_allocators_thread_cache() {
    let server = McpServer::builder()
        .tool(McpToolDef::new(
            "echo",
            "Echo the text",
            json!({"type":"object","properties":{"text":{"type":"string"}}}),
            |_args: Map<String, Value>, _ctx: InvokeContext| async { CallToolResult::text("ok") },
        ))
        .build()
        .expect("a valid server");
    let service = McpHttpService::new(server, HttpOptions::new());
    let request = hyper::Request::post("/mcp")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(b"{}")))
        .expect("a valid request");
    let future = hyper::service::Service::call(&service, request);
    let size = std::mem::size_of_val(&*future);
    assert!(
        size <= MAX_BOXED,
        "the boxed future of a request is {size} bytes (at most {MAX_BOXED})"
    );
}

/// A handler's context is moved by value through every layer between the
/// pipeline and the handler's own future (and into that future): it stays
/// two words, its parts boxed (BENCHMARKS.md, "The invoke context boxed").
#[test]
fn the_invoke_context_a_handler_receives_is_two_words() {
    let size = std::mem::size_of::<InvokeContext>();
    assert!(
        size <= 2 * std::mem::size_of::<usize>(),
        "InvokeContext is {size} bytes"
    );
}
