//! Bytes as a client's stdin through `serve_io` over an in-memory
//! `tokio::io::duplex` pipe (small buffers, so lines arrive in pieces), with
//! a 4 KiB line limit so oversized lines are exercised. All output is read;
//! the server must stop by itself once input ends (bounded by its drain
//! timeout), and every line it writes must be a JSON-RPC message in valid
//! JSON, newline-terminated.
//!
//! The server and runtime are built once per process (building them per
//! input halved the rate); each input is a new `serve_io` connection, so
//! its session state is fresh.

#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcp_core::{transport::stdio::serve_io, StdioOptions};
use mcp_core_fuzz::{assert_json, assert_jsonrpc, shared};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The line limit under test.
const MAX_LINE: usize = 4 * 1024;
/// Bound (in paused, so free, time) on the whole exchange: far above the
/// drain timeout, so only a server that never stops reaches it.
const BOUND: Duration = Duration::from_secs(120);

fuzz_target!(|data: &[u8]| {
    let (rt, server) = shared();
    let output = rt.block_on(async {
        let server = server.clone();
        // Client side writes `data` to `to_server` and reads `from_server`.
        let (server_in, mut to_server) = tokio::io::duplex(512);
        let (mut from_server, server_out) = tokio::io::duplex(1024);
        let mut options = StdioOptions::default()
            .max_line_length(MAX_LINE)
            .max_concurrent_requests(4)
            .drain_timeout(Duration::from_secs(1));
        options.output_queue = 8;
        let handle = serve_io(server, server_in, server_out, options);
        let input = data.to_vec();
        let writer = tokio::spawn(async move {
            // The server may stop reading (it never should before EOF, but
            // a write error here is not the finding: the output check is).
            let _ = to_server.write_all(&input).await;
            let _ = to_server.shutdown().await;
        });
        let reader = tokio::spawn(async move {
            let mut out = Vec::new();
            let _ = from_server.read_to_end(&mut out).await;
            out
        });
        let finished = tokio::time::timeout(BOUND, handle.wait()).await;
        let served = match finished {
            Ok(result) => result,
            Err(_) => panic!(
                "serve_io did not stop within {BOUND:?} after end of input\n  input: {}",
                String::from_utf8_lossy(data)
            ),
        };
        if let Err(e) = served {
            panic!(
                "serve_io failed: {e}\n  input: {}",
                String::from_utf8_lossy(data)
            );
        }
        let _ = writer.await;
        match tokio::time::timeout(BOUND, reader).await {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => panic!("reader task: {e}"),
            Err(_) => panic!("output not closed after serve_io stopped"),
        }
    });
    if output.is_empty() {
        return;
    }
    assert!(
        output.ends_with(b"\n"),
        "stdio: output ends in a partial line\n  input: {}\n  output: {}",
        String::from_utf8_lossy(data),
        String::from_utf8_lossy(&output)
    );
    for line in output[..output.len() - 1].split(|&b| b == b'\n') {
        let value = assert_json("stdio line", data, line);
        assert_jsonrpc("stdio line", data, &value);
    }
});
