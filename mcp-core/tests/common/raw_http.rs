//! A raw HTTP/1.1 client for the transport tests: one request per
//! connection, the whole response read and parsed (chunked bodies decoded).
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A complete response.
#[derive(Debug)]
pub struct Resp {
    /// The status code.
    pub status: u16,
    /// Headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The (de-chunked) body.
    pub body: Vec<u8>,
}

impl Resp {
    /// A header by name (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (panics when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The JSON-RPC error code of the body (panics when there is none).
    pub fn error_code(&self) -> i64 {
        self.json()
            .pointer("/error/code")
            .and_then(Value::as_i64)
            .expect("a JSON-RPC error")
    }
}

async fn guard<F: std::future::Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), fut)
        .await
        .unwrap_or_else(|_| panic!("hung for 10 s: {what}"))
}

/// Sends raw bytes on a fresh connection and reads the whole response (the
/// request should ask for `Connection: close`).
pub async fn raw(addr: SocketAddr, bytes: &[u8]) -> Resp {
    let mut stream = guard("connect", TcpStream::connect(addr))
        .await
        .expect("connect");
    stream.write_all(bytes).await.expect("write request");
    let mut buf = Vec::new();
    guard("response", stream.read_to_end(&mut buf))
        .await
        .expect("read response");
    parse_response(&buf)
}

/// Parses a whole response.
pub fn parse_response(buf: &[u8]) -> Resp {
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(buf)));
    let head = String::from_utf8_lossy(&buf[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = buf[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Resp {
        status,
        headers,
        body,
    }
}

/// Decodes a chunked body.
pub fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = data.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&data[..eol]).trim(), 16)
            .expect("chunk size");
        data = &data[eol + 2..];
        if size == 0 {
            break;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
    out
}

pub struct Stream {
    reader: BufReader<TcpStream>,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    chunked: bool,
    pending: String,
    done: bool,
}

impl Stream {
    /// Sends the request and reads the status line and headers.
    pub async fn open(addr: SocketAddr, bytes: &[u8]) -> Self {
        let mut tcp = guard("connect", TcpStream::connect(addr))
            .await
            .expect("connect");
        tcp.write_all(bytes).await.expect("write request");
        let mut reader = BufReader::new(tcp);
        let mut status_line = String::new();
        guard("status line", reader.read_line(&mut status_line))
            .await
            .expect("read status line");
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            guard("header line", reader.read_line(&mut line))
                .await
                .expect("read header");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let chunked = headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        Self {
            reader,
            status,
            headers,
            chunked,
            pending: String::new(),
            done: false,
        }
    }

    /// A header by lower-case name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// True for an event stream.
    pub fn is_sse(&self) -> bool {
        self.header("content-type") == Some("text/event-stream")
    }

    /// Reads more of the body into `pending`; false at its end.
    pub async fn fill(&mut self) -> bool {
        if self.done {
            return false;
        }
        if self.chunked {
            let mut size_line = String::new();
            let n = guard("chunk size", self.reader.read_line(&mut size_line))
                .await
                .unwrap_or(0);
            let size = usize::from_str_radix(size_line.trim(), 16).unwrap_or(0);
            if n == 0 || size == 0 {
                self.done = true;
                return false;
            }
            let mut chunk = vec![0u8; size + 2];
            guard("chunk", self.reader.read_exact(&mut chunk))
                .await
                .expect("read chunk");
            self.pending
                .push_str(&String::from_utf8_lossy(&chunk[..size]));
            true
        } else {
            let mut buf = Vec::new();
            guard("body", self.reader.read_to_end(&mut buf))
                .await
                .expect("read body");
            self.done = true;
            self.pending.push_str(&String::from_utf8_lossy(&buf));
            !buf.is_empty()
        }
    }

    /// The next SSE `data` message, skipping comments; `None` at the end.
    pub async fn next_event(&mut self) -> Option<Value> {
        loop {
            if let Some(pos) = self.pending.find("\n\n") {
                let event: String = self.pending.drain(..pos + 2).collect();
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                return Some(serde_json::from_str(&data.join("\n")).expect("event data is JSON"));
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    /// The rest of the body (a JSON response).
    pub async fn body_json(&mut self) -> Value {
        while self.fill().await {}
        serde_json::from_str(&self.pending).expect("JSON body")
    }
}
