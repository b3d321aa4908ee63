//! How large a result is as JSON: a quick upper bound that settles small
//! results with no serialization, the exact size (serialized into a
//! counter, nothing allocated), and the size of text inside a JSON string.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::{CallToolResult, Content};

/// What the limit measures: a result's `content` and `structuredContent`
/// (not `isError` nor `_meta`, which a client does not hand its model).
#[derive(Serialize)]
pub(super) struct Measured<'a> {
    pub(super) content: &'a [Content],
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    pub(super) structured: Option<&'a Map<String, Value>>,
}

impl<'a> Measured<'a> {
    pub(super) fn of(result: &'a CallToolResult) -> Self {
        Self {
            content: &result.content,
            structured: result.structured_content.as_ref(),
        }
    }
}

/// Counts the bytes written to it.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The exact length of `value` as compact JSON (`usize::MAX` if it cannot
/// be serialized, which the protocol types never fail to be).
pub(super) fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

/// Bytes `c` takes inside a JSON string as serde_json writes it.
#[inline]
pub(super) fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if u32::from(c) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The most bytes a string of `len` bytes takes in JSON (every byte
/// escaped as `\u00XX`, and its quotes).
#[inline]
fn string_bound(len: usize) -> usize {
    len.saturating_mul(6).saturating_add(2)
}

/// An upper bound of the measured size, from the lengths of the result's
/// strings alone; `None` for a block whose bound is not worth working out
/// (annotations, metadata, links, embedded resources).
#[inline]
pub(super) fn quick_bound(result: &CallToolResult) -> Option<usize> {
    // `{"content":[` … `]}` and a comma per block.
    let mut total: usize = 16;
    for block in &result.content {
        let size = match block {
            Content::Text {
                text,
                annotations: None,
                meta: None,
            } => string_bound(text.len()) + 24,
            Content::Image {
                data,
                mime_type,
                annotations: None,
                meta: None,
            }
            | Content::Audio {
                data,
                mime_type,
                annotations: None,
                meta: None,
            } => string_bound(data.len()) + string_bound(mime_type.len()) + 40,
            Content::Raw(raw) => raw.get().len() + 1,
            _ => return None,
        };
        total = total.saturating_add(size);
    }
    if let Some(structured) = &result.structured_content {
        total = total
            .saturating_add(24)
            .saturating_add(object_bound(structured));
    }
    Some(total)
}

/// An upper bound of `map`'s length as JSON.
fn object_bound(map: &Map<String, Value>) -> usize {
    map.iter().fold(2, |sum, (key, value)| {
        sum.saturating_add(string_bound(key.len()) + 2)
            .saturating_add(value_bound(value))
    })
}

fn value_bound(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        // The longest number serde_json writes (an f64 such as
        // -1.7976931348623157e308) is 24 bytes.
        Value::Number(_) => 24,
        Value::String(s) => string_bound(s.len()),
        Value::Array(items) => items.iter().fold(2, |sum, item| {
            sum.saturating_add(value_bound(item)).saturating_add(1)
        }),
        Value::Object(map) => object_bound(map),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_never_below_the_exact_size() {
        let mut result = CallToolResult::text("a\"b\\c\n\u{1}é€😀");
        result
            .content
            .push(Content::image(b"\x00\x01", "image/png"));
        result.structured_content =
            serde_json::json!({"k\n": [1.5e300, -3, "x\"y", null, true, {"z": []}]})
                .as_object()
                .cloned();
        let exact = json_len(&Measured::of(&result));
        let bound = quick_bound(&result).unwrap_or(0);
        assert!(bound >= exact, "bound {bound} < exact {exact}");
        let text = "a\"b\\c\n\u{1}é€😀";
        let escaped: usize = text.chars().map(escaped_len).sum();
        assert_eq!(escaped + 2, json_len(text));
    }
}
