//! An incremental `text/event-stream` parser for the client: bytes in,
//! complete events out, each bounded in size.

/// One complete event.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Event {
    /// The `id` field, if the event had one.
    pub(crate) id: Option<String>,
    /// The `data` lines, joined by newlines.
    pub(crate) data: String,
    /// A `retry` field (milliseconds), if the event had one.
    pub(crate) retry: Option<u64>,
}

/// Parses a stream fed in arbitrary chunks.
#[derive(Debug)]
pub(crate) struct Parser {
    buf: Vec<u8>,
    event: Event,
    has_data: bool,
    max: usize,
}

impl Parser {
    /// A parser refusing events (or lines) over `max` bytes.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            buf: Vec::new(),
            event: Event::default(),
            has_data: false,
            max,
        }
    }

    /// Feeds `chunk`; appends each event it completes to `out`.
    ///
    /// # Errors
    /// An event or line over the size bound.
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> Result<(), String> {
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(i) = memchr::memchr(b'\n', &self.buf[start..]) {
            let end = start + i;
            let mut line = &self.buf[start..end];
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            start = end + 1;
            // Borrowed when it is UTF-8 (always, from a conforming server):
            // no copy of each line before its field is read.
            match std::str::from_utf8(line) {
                Ok(text) => Self::line(&mut self.event, &mut self.has_data, self.max, text, out)?,
                Err(_) => {
                    let text = String::from_utf8_lossy(line).into_owned();
                    Self::line(&mut self.event, &mut self.has_data, self.max, &text, out)?;
                }
            }
        }
        self.buf.drain(..start);
        if self.buf.len() > self.max {
            return Err(format!("an event-stream line over {} bytes", self.max));
        }
        Ok(())
    }

    /// One line of the event in progress (`event`, `has_data`), split
    /// from the parser's buffer so the line can borrow that buffer.
    fn line(
        event: &mut Event,
        has_data: &mut bool,
        max: usize,
        line: &str,
        out: &mut Vec<Event>,
    ) -> Result<(), String> {
        if line.is_empty() {
            let event = std::mem::take(event);
            if std::mem::take(has_data) || event.retry.is_some() || event.id.is_some() {
                out.push(event);
            }
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "data" => {
                if *has_data {
                    event.data.push('\n');
                }
                event.data.push_str(value);
                *has_data = true;
                if event.data.len() > max {
                    return Err(format!("an event over {max} bytes"));
                }
            }
            "id" if !value.contains('\0') => event.id = Some(value.to_owned()),
            "retry" => event.retry = value.parse().ok(),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_lines_ending_in_crlf() {
        let mut p = Parser::new(1024);
        let mut out = Vec::new();
        let stream =
            b": keep-alive\r\nid: 7\r\nretry: 500\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nid: 8\n\n";
        for chunk in stream.chunks(3) {
            p.feed(chunk, &mut out).expect("within bounds");
        }
        assert_eq!(
            out,
            vec![
                Event {
                    id: Some("7".into()),
                    data: "{\"a\":\n1}".into(),
                    retry: Some(500)
                },
                Event {
                    id: Some("8".into()),
                    data: String::new(),
                    retry: None
                },
            ]
        );
    }

    #[test]
    fn a_line_that_is_not_utf8_is_read_lossily() {
        let mut p = Parser::new(1024);
        let mut out = Vec::new();
        p.feed(b"data: a\xffb\n\n", &mut out)
            .expect("within bounds");
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data, "a\u{fffd}b");
    }

    #[test]
    fn an_event_over_the_bound_is_refused() {
        let mut p = Parser::new(8);
        let mut out = Vec::new();
        assert!(p.feed(b"data: 0123456789\n", &mut out).is_err());
        let mut p = Parser::new(8);
        assert!(
            p.feed(b"data: 0123456789", &mut out).is_err(),
            "no newline yet"
        );
    }
}
