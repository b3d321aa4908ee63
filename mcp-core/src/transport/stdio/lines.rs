//! Line framing: splitting the input stream into lines, each parsed in place.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::server::Frame;

// Not boxed: a line is matched once, right after it is read, and a box
// would cost an allocation per message.
#[allow(clippy::large_enum_variant)]
pub(super) enum Line {
    /// A non-blank line, parsed: the message or the ready `-32700` reply.
    Parsed(Result<Frame, crate::server::ParseError>),
    Blank,
    TooLong,
}

fn parse_line(line: &[u8]) -> Line {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        Line::Blank
    } else {
        Line::Parsed(Frame::parse(line))
    }
}

/// How much is read at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Splits a byte stream into lines without ever holding more than `max`
/// bytes of one line (plus one read), and parses each in place.
pub(super) struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Start of the unconsumed bytes in `buf`.
    start: usize,
    /// Where to resume looking for `\n` (everything before has none).
    scan: usize,
    max: usize,
    /// Inside a line that is over the limit: its bytes are dropped as they come.
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(super) fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            buf: Vec::with_capacity(READ_CHUNK),
            start: 0,
            scan: 0,
            max,
            discarding: false,
        }
    }

    /// The next complete line already read, if any (no I/O).
    pub(super) fn next_buffered(&mut self) -> Option<Line> {
        match memchr::memchr(b'\n', &self.buf[self.scan..]) {
            Some(i) => {
                let end = self.scan + i;
                let line = if self.discarding || end - self.start > self.max {
                    self.discarding = false;
                    Line::TooLong
                } else {
                    parse_line(&self.buf[self.start..end])
                };
                self.start = end + 1;
                self.scan = self.start;
                Some(line)
            }
            None => {
                if !self.discarding && self.buf.len() - self.start > self.max {
                    self.discarding = true;
                }
                if self.discarding {
                    // Never keep the bytes of an over-long line.
                    self.buf.truncate(self.start);
                }
                self.scan = self.buf.len();
                None
            }
        }
    }

    /// Reads more input. `false` at end of input. Cancel-safe: nothing is
    /// lost when the future is dropped before it completes.
    pub(super) async fn fill(&mut self) -> io::Result<bool> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scan -= self.start;
            self.start = 0;
            if self.buf.is_empty() && self.buf.capacity() > 4 * READ_CHUNK {
                // A long line came and went: give its memory back.
                self.buf = Vec::with_capacity(READ_CHUNK);
            }
        }
        if self.buf.capacity() - self.buf.len() < READ_CHUNK / 4 {
            self.buf.reserve(READ_CHUNK);
        }
        Ok(self.inner.read_buf(&mut self.buf).await? > 0)
    }

    /// At end of input: the final unterminated line, if any.
    pub(super) fn finish(&mut self) -> Option<Line> {
        if self.discarding {
            self.discarding = false;
            return Some(Line::TooLong);
        }
        let rest = &self.buf[self.start..];
        let line = (!rest.is_empty()).then(|| {
            if rest.len() > self.max {
                Line::TooLong
            } else {
                parse_line(rest)
            }
        });
        self.start = self.buf.len();
        self.scan = self.start;
        line
    }
}
