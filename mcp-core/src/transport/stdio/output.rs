//! The output side: serialized lines queued for the writer task.

use std::io;

use async_trait::async_trait;
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::context::Outbound;
use crate::server::Response;

/// Queues serialized lines for the writer task.
#[derive(Clone)]
pub(super) struct LineSender(pub(super) mpsc::Sender<Vec<u8>>);

impl LineSender {
    async fn send_value(&self, message: &Value) -> bool {
        let mut line = match serde_json::to_vec(message) {
            Ok(bytes) => bytes,
            Err(_) => return false,
        };
        line.push(b'\n');
        self.send_bytes(line).await
    }

    pub(super) async fn send_response(&self, response: &Response) -> bool {
        let mut line = Vec::new();
        response.write_to(&mut line);
        line.push(b'\n');
        self.send_bytes(line).await
    }

    /// Queues whole lines (one or more, each ending in `\n`).
    pub(super) async fn send_bytes(&self, lines: Vec<u8>) -> bool {
        self.0.send(lines).await.is_ok()
    }
}

#[async_trait]
impl Outbound for LineSender {
    async fn send(&self, message: Value) -> bool {
        self.send_value(&message).await
    }
}

pub(super) async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::Receiver<Vec<u8>>,
) -> io::Result<()> {
    const BATCH: usize = 64 * 1024;
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH);
    while let Some(first) = rx.recv().await {
        if rx.is_empty() {
            writer.write_all(&first).await?;
        } else {
            buf.clear();
            buf.extend_from_slice(&first);
            while buf.len() < BATCH {
                match rx.try_recv() {
                    Ok(more) => buf.extend_from_slice(&more),
                    Err(_) => break,
                }
            }
            writer.write_all(&buf).await?;
        }
        writer.flush().await?;
    }
    writer.flush().await
}
