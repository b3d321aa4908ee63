//! The header-read limit against a client reading a large response slowly:
//! the response is delivered whole, however long past the limit that takes
//! (the limit bounds a request head, not a response's reading).

use std::net::SocketAddr;
use std::time::Duration;

use mcp_core::{serve_http, HttpOptions};

use mcp_core::transport::http::HttpHandle;
use mcp_core::{mcp_tool, McpServer};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Larger than the kernel's socket buffers on both sides together.
const BIG: usize = 8 << 20;

/// A text of `len` bytes.
#[mcp_tool]
async fn big(len: usize) -> String {
    "x".repeat(len)
}

async fn start() -> HttpHandle {
    let server = McpServer::builder()
        // The response must outlast the header read limit: sent whole.
        .no_result_limit()
        .tool(big::tool())
        .build()
        .expect("a valid server");
    // Only the header-read limit can end these connections.
    let options = HttpOptions::stateless()
        .port(0)
        .keep_alive_timeout(Duration::from_secs(600))
        .header_read_timeout(Duration::from_millis(400));
    serve_http(server, options).await.expect("serve_http")
}

/// A connection with a small receive buffer, the request for `BIG` bytes sent.
async fn ask_big(addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(16 * 1024).expect("SO_RCVBUF");
    let mut tcp = socket.connect(addr).await.expect("connect");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "big", "arguments": {"len": BIG}}})
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).await.expect("head");
    tcp.write_all(body.as_bytes()).await.expect("body");
    tcp
}

/// Reads until the peer closes or `limit` bytes came, `chunk` bytes at a
/// time with `pause` between reads. Ends early on an error (a reset).
async fn read_slowly(tcp: &mut TcpStream, limit: usize, chunk: usize, pause: Duration) -> usize {
    let mut buf = vec![0u8; chunk];
    let mut total = 0;
    while total < limit {
        match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
        tokio::time::sleep(pause).await;
    }
    total
}

#[tokio::test]
async fn a_slow_reader_gets_a_whole_response_that_outlasts_the_header_read_limit() {
    let handle = start().await;
    let mut tcp = ask_big(handle.local_addr()).await;
    // At most 16 KiB (the receive buffer) every 2 ms: the 8 MiB reply takes
    // about a second, well past the 400 ms limit, the server's socket
    // buffer full all along.
    let read = tokio::time::timeout(
        Duration::from_secs(30),
        read_slowly(
            &mut tcp,
            BIG + 64 * 1024,
            16 * 1024,
            Duration::from_millis(2),
        ),
    )
    .await
    .expect("the reply arrives");
    assert!(read > BIG, "only {read} of the {BIG}-byte reply arrived");
    handle.close().await;
}
