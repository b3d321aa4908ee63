//! Cutting a result down to a byte budget at clean boundaries: whole
//! content blocks first, then the text of the first block that does not
//! fit, at a line boundary (else a character boundary; UTF-8 is never
//! split). `structuredContent` is kept whole or left out: a cut JSON value
//! would no longer match the tool's output schema.

use super::measure::{escaped_len, json_len};
use crate::protocol::{CallToolResult, Content};

/// The longest prefix of `text` whose JSON-escaped form takes at most
/// `room` bytes, as a byte index: the end of its last whole line when that
/// keeps at least half of what fits, else the last whole character.
pub(super) fn text_end(text: &str, room: usize, lines: bool) -> usize {
    let mut used = 0usize;
    let mut end = 0usize;
    for (i, c) in text.char_indices() {
        used += escaped_len(c);
        if used > room {
            break;
        }
        end = i + c.len_utf8();
    }
    if end == text.len() || !lines {
        return end;
    }
    match text[..end].rfind('\n') {
        Some(nl) if (nl + 1) * 2 >= end => nl + 1,
        _ => end,
    }
}

/// What [`cut`] left out.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Cut {
    /// `structuredContent` was dropped: its size.
    pub(super) dropped_structured: Option<usize>,
}

/// Cuts `result` so that its `content` and `structuredContent` take at
/// most `budget` bytes as JSON.
pub(super) fn cut(result: &mut CallToolResult, budget: usize) -> Cut {
    let mut out = Cut::default();
    // `{"content":[]}`
    let mut used = 14usize;
    if let Some(structured) = &result.structured_content {
        // `,"structuredContent":` and the object.
        let size = 21 + json_len(structured);
        if used + size > budget {
            out.dropped_structured = Some(size - 21);
            result.structured_content = None;
        } else {
            used += size;
        }
    }
    let mut keep = result.content.len();
    for (i, block) in result.content.iter_mut().enumerate() {
        let comma = usize::from(i > 0);
        let size = json_len(block) + comma;
        if used + size <= budget {
            used += size;
            continue;
        }
        keep = i;
        if let Content::Text { text, .. } = block {
            // The block's size with no text, then as much text as fits.
            let mut whole = std::mem::take(text);
            let shell = json_len(block) + comma;
            let room = budget.saturating_sub(used + shell);
            let end = text_end(&whole, room, true);
            whole.truncate(end);
            if let Content::Text { text, .. } = block {
                *text = whole;
            }
            keep = if end > 0 { i + 1 } else { i };
        }
        break;
    }
    result.content.truncate(keep);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::result_guard::measure::Measured;

    #[test]
    fn text_ends_on_a_line_else_a_character() {
        assert_eq!(text_end("ab\ncd\nef", 8, true), 6);
        assert_eq!(text_end("ab\ncd\nef", 7, true), 3);
        assert_eq!(text_end("abcdefgh", 5, true), 5);
        // "é" is two bytes: never split.
        assert_eq!(text_end("aéé", 4, true), 3);
        // Escapes count: `\"` takes two bytes.
        assert_eq!(text_end("\"\"\"", 5, false), 2);
        // A newline too early to be worth it.
        assert_eq!(text_end("a\nbcdefghij", 9, true), 8);
    }

    #[test]
    fn a_cut_result_fits_its_budget() {
        let mut result = CallToolResult::text("x".repeat(50));
        result.content.push(Content::text("line\n".repeat(100)));
        cut(&mut result, 200);
        let size = json_len(&Measured::of(&result));
        assert!(size <= 200, "{size}");
        assert_eq!(result.content.len(), 2);
        assert!(result.content[1]
            .as_text()
            .is_some_and(|t| t.ends_with('\n')));
    }
}
