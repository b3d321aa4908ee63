//! The sizes of the futures and values every request moves or boxes,
//! printed (not timed, not asserted): a change that grows one shows here.
//!
//! Run: `cargo bench -p mcp-core --bench future_sizes`. glibc's malloc
//! serves blocks up to 1,032 bytes from a per-thread cache, and a larger box
//! takes its slow path (and a larger copy) on every request, so the boxed
//! futures are worth keeping within a KiB. CI only builds this file.

use bytes::Bytes;
use http_body_util::Full;
use mcp_core::{
    protocol::CallToolResult,
    transport::http::McpHttpService,
    transport::{CallContext, Frame, Session},
    HttpOptions, InvokeContext, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};

/// A server with one `echo` tool.
fn server() -> McpServer {
    McpServer::builder()
        .server_info("future-sizes", "0.0.0")
        .tool(McpToolDef::new(
            "echo",
            "Echo the text",
            json!({"type":"object","properties":{"text":{"type":"string"}}}),
            |_args: Map<String, Value>, _ctx: InvokeContext| async { CallToolResult::text("ok") },
        ))
        .build()
        .expect("a valid server")
}

fn print(name: &str, size: usize) {
    println!("{name:<52} {size:>6} bytes");
}

fn main() {
    // What hyper boxes for every HTTP request.
    let service = McpHttpService::new(server(), HttpOptions::new());
    let request = hyper::Request::post("/mcp")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(b"{}")))
        .expect("a valid request");
    let future = hyper::service::Service::call(&service, request);
    print(
        "HTTP request future (McpHttpService::call)",
        std::mem::size_of_val(&*future),
    );

    // One call through the pipeline, as any transport starts it.
    let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let frame = Frame::parse(line).expect("a valid frame");
    let ctx = std::sync::Arc::new(CallContext::new().with_session(Session::new()));
    let server = server();
    let call = server.accept(frame, &ctx, None).run();
    print(
        "call future (McpServer::accept(..).run())",
        std::mem::size_of_val(&call),
    );

    // Moved by value through every layer down to a handler.
    print("InvokeContext", std::mem::size_of::<InvokeContext>());
    print("CallContext", std::mem::size_of::<CallContext>());
}
