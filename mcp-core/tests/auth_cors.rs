//! Protected Resource Metadata for browser-based clients: both well-known
//! paths answer any origin (`Access-Control-Allow-Origin: *`) and the CORS
//! preflight, while the MCP endpoint keeps its Origin guard.

#[path = "common/raw_http.rs"]
mod raw_http;

use std::net::SocketAddr;

use mcp_core::auth::{JwtVerifier, ResourceServer};
use mcp_core::transport::http::HttpHandle;
use mcp_core::McpServer;
use mcp_core::{serve_http, HttpOptions};
use raw_http::raw;
use serde_json::json;

const RESOURCE: &str = "https://mcp.example.test/mcp";
const PATHS: [&str; 2] = [
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
];

async fn start() -> HttpHandle {
    let server = McpServer::builder()
        .server_info("cors-test", "1.0.0")
        .build()
        .expect("server");
    let verifier =
        JwtVerifier::new("https://as.example.test", RESOURCE).fixed_keys(&json!({"keys": []}));
    let rs =
        ResourceServer::new(RESOURCE, verifier).authorization_server("https://as.example.test");
    serve_http(server, HttpOptions::stateless().resource_server(rs))
        .await
        .expect("serve")
}

async fn send(addr: SocketAddr, method: &str, path: &str, extra: &str) -> raw_http::Resp {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nOrigin: https://app.example.org\r\n\
         {extra}Connection: close\r\n\r\n"
    );
    raw(addr, request.as_bytes()).await
}

#[tokio::test]
async fn the_metadata_is_readable_from_any_origin() {
    let http = start().await;
    for path in PATHS {
        let r = send(http.local_addr(), "GET", path, "").await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{path}");
        assert_eq!(r.json()["resource"], RESOURCE, "{path}");
    }
}

#[tokio::test]
async fn the_preflight_is_answered_on_both_paths() {
    let http = start().await;
    for path in PATHS {
        let r = send(
            http.local_addr(),
            "OPTIONS",
            path,
            "Access-Control-Request-Method: GET\r\n\
             Access-Control-Request-Headers: mcp-protocol-version\r\n",
        )
        .await;
        assert_eq!(r.status, 204, "{path}: {}", r.text());
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{path}");
        let methods = r.header("access-control-allow-methods").unwrap_or_default();
        assert!(methods.contains("GET"), "{path}: {methods}");
        assert_eq!(
            r.header("access-control-allow-headers"),
            Some("*"),
            "{path}"
        );
        assert!(r.body.is_empty(), "{path}");
    }
}

#[tokio::test]
async fn other_methods_are_refused_and_the_endpoint_keeps_its_origin_guard() {
    let http = start().await;
    let r = send(http.local_addr(), "POST", PATHS[1], "Content-Length: 0\r\n").await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD, OPTIONS"));
    // A foreign origin still cannot reach the MCP endpoint itself.
    let r = send(http.local_addr(), "POST", "/mcp", "Content-Length: 0\r\n").await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(r.header("access-control-allow-origin"), None);
}
