//! Newline-delimited JSON-RPC over a byte stream: a child process's stdin
//! and stdout, or any `AsyncRead`/`AsyncWrite` pair.

#[cfg(feature = "client")]
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
#[cfg(feature = "client")]
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use super::{Inbound, Inbox, Link, Outgoing};
use crate::client::error::ClientError;

/// The link over a byte stream: a writer task fed by a bounded queue, a
/// reader task that parses each line into the inbox.
pub(crate) struct Lines {
    /// Taken on close, which ends the writer and closes the stream.
    out: std::sync::Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    /// The server process, when the link started it (feature `client`:
    /// `testing::TestClient` starts none).
    #[cfg(feature = "client")]
    child: tokio::sync::Mutex<Option<Child>>,
}

/// How long a closed server process has to exit before it is killed.
#[cfg(feature = "client")]
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

impl Lines {
    /// Starts the reader and writer tasks over `reader` and `writer`.
    pub(crate) fn over<R, W>(reader: R, writer: W, inbox: Inbox, max_line: usize) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (out, rx) = mpsc::channel::<Vec<u8>>(64);
        tokio::spawn(write_lines(writer, rx));
        tokio::spawn(read_lines(reader, inbox, max_line));
        Self {
            out: std::sync::Mutex::new(Some(out)),
            #[cfg(feature = "client")]
            child: tokio::sync::Mutex::new(None),
        }
    }

    /// Spawns `command` with piped stdin and stdout (its stderr goes to
    /// ours) and links to it. The process is killed when the link is
    /// dropped or closed.
    #[cfg(feature = "client")]
    pub(crate) fn spawn(
        mut command: Command,
        inbox: Inbox,
        max_line: usize,
    ) -> Result<Self, ClientError> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| ClientError::transport(format!("cannot start the server process: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::transport(
                "the server process has no stdio pipes",
            ));
        };
        let mut link = Self::over(stdout, stdin, inbox, max_line);
        *link.child.get_mut() = Some(child);
        Ok(link)
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::Receiver<Vec<u8>>) {
    let mut batch = Vec::new();
    while let Some(line) = rx.recv().await {
        // Every message already queued goes out in the same write.
        batch.clear();
        batch.extend_from_slice(&line);
        batch.push(b'\n');
        while batch.len() < 64 * 1024 {
            match rx.try_recv() {
                Ok(more) => {
                    batch.extend_from_slice(&more);
                    batch.push(b'\n');
                }
                Err(_) => break,
            }
        }
        if writer.write_all(&batch).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
    let _ = writer.shutdown().await;
}

async fn read_lines<R: AsyncRead + Unpin>(reader: R, inbox: Inbox, max_line: usize) {
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_line(&mut reader, &mut line, max_line).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                tracing::warn!(target: "mcp_core::client", "closing the connection: {e}");
                break;
            }
        }
        if line.trim_ascii().is_empty() {
            continue;
        }
        // Handed over whole: the dispatcher parses it.
        let message = std::mem::take(&mut line);
        inbox.deliver(Inbound::Message(message, None));
    }
    inbox.closed();
}

/// Reads one line into `line` (without the newline); `false` at the end
/// of the stream. A line over `max` bytes is an error, found before it is
/// buffered past `max`.
async fn read_line<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<bool> {
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(!line.is_empty());
        }
        let (take, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        if line.len() + take > max {
            return Err(std::io::Error::other(format!(
                "the server sent a line over {max} bytes"
            )));
        }
        line.extend_from_slice(&buf[..take]);
        reader.consume(if done { take + 1 } else { take });
        if done {
            return Ok(true);
        }
    }
}

#[async_trait::async_trait]
impl Link for Lines {
    async fn send(&self, message: Outgoing) -> Result<(), ClientError> {
        let out = self
            .out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .ok_or(ClientError::Closed)?;
        out.send(message.body)
            .await
            .map_err(|_| ClientError::Closed)
    }

    async fn close(&self) {
        // Closing the server's input asks it to exit; a process that does
        // not within the grace period is killed.
        drop(
            self.out
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take(),
        );
        #[cfg(feature = "client")]
        let child = self.child.lock().await.take();
        #[cfg(feature = "client")]
        if let Some(mut child) = child {
            if tokio::time::timeout(EXIT_GRACE, child.wait())
                .await
                .is_err()
            {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
        }
    }
}
