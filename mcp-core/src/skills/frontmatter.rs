//! The YAML frontmatter of a `SKILL.md`, read into JSON. A subset of YAML,
//! the one skill files use: `key: value` lines of scalars (plain, `"..."`
//! or `'...'` strings, booleans, numbers, `null`), and one level of nesting
//! (a key followed by indented `key: value` lines, or by `- item` lines).
//! Anything else (block scalars, flow collections, anchors, deeper nesting)
//! is refused with the line that has it, rather than read differently from
//! a YAML parser.

use serde_json::{Map, Number, Value};

/// Splits `text` into its frontmatter block (without the `---` lines) and
/// parses it.
///
/// # Errors
/// Why the file has no frontmatter, or which line is not supported.
pub(crate) fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("SKILL.md must begin with a `---` line (YAML frontmatter)".into());
    }
    let mut block = Vec::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        block.push(line);
    }
    if !closed {
        return Err("the frontmatter has no closing `---` line".into());
    }
    parse_block(&block)
}

fn parse_block(lines: &[&str]) -> Result<Map<String, Value>, String> {
    let mut map = Map::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let n = i + 1;
        i += 1;
        if is_blank(line) {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            return Err(format!("frontmatter line {n}: unexpected indentation"));
        }
        let (key, rest) = split_key(line)
            .ok_or_else(|| format!("frontmatter line {n}: expected `key: value`"))?;
        if map.contains_key(&key) {
            return Err(format!("frontmatter line {n}: duplicate key `{key}`"));
        }
        if !rest.is_empty() {
            map.insert(
                key,
                scalar(rest).map_err(|e| format!("frontmatter line {n}: {e}"))?,
            );
            continue;
        }
        // A nested map or list: the following indented lines.
        let start = i;
        while i < lines.len() && (is_blank(lines[i]) || lines[i].starts_with([' ', '\t'])) {
            i += 1;
        }
        let nested: Vec<(usize, &str)> = (start..i)
            .filter(|&j| !is_blank(lines[j]))
            .map(|j| (j + 1, lines[j].trim()))
            .collect();
        map.insert(key, nested_value(&nested)?);
    }
    Ok(map)
}

fn nested_value(lines: &[(usize, &str)]) -> Result<Value, String> {
    if lines.is_empty() {
        return Ok(Value::Null);
    }
    if lines[0].1.starts_with("- ") || lines[0].1 == "-" {
        let mut items = Vec::new();
        for &(n, line) in lines {
            let item = line
                .strip_prefix('-')
                .ok_or_else(|| format!("frontmatter line {n}: expected `- item`"))?;
            items.push(scalar(item.trim()).map_err(|e| format!("frontmatter line {n}: {e}"))?);
        }
        return Ok(Value::Array(items));
    }
    let mut map = Map::new();
    for &(n, line) in lines {
        let (key, rest) = split_key(line)
            .ok_or_else(|| format!("frontmatter line {n}: expected `key: value`"))?;
        if rest.is_empty() {
            return Err(format!(
                "frontmatter line {n}: nesting deeper than one level is not supported"
            ));
        }
        map.insert(
            key,
            scalar(rest).map_err(|e| format!("frontmatter line {n}: {e}"))?,
        );
    }
    Ok(Value::Object(map))
}

fn is_blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// `key: rest` (the key plain or quoted; `rest` trimmed, comments removed).
fn split_key(line: &str) -> Option<(String, &str)> {
    let line = line.trim();
    let (key, rest) = if let Some(quoted) = line.strip_prefix('"') {
        let end = quoted.find('"')?;
        (
            quoted[..end].to_owned(),
            quoted[end + 1..].strip_prefix(':')?,
        )
    } else {
        let colon = line
            .find(": ")
            .or_else(|| line.strip_suffix(':').map(str::len))?;
        (line[..colon].trim().to_owned(), &line[colon + 1..])
    };
    if key.is_empty() {
        return None;
    }
    Some((key, strip_comment(rest.trim())))
}

/// A plain scalar ends at ` #`; quoted ones are left whole.
fn strip_comment(value: &str) -> &str {
    if value.starts_with(['"', '\'']) {
        return value;
    }
    value.find(" #").map_or(value, |at| value[..at].trim_end())
}

fn scalar(value: &str) -> Result<Value, String> {
    if let Some(inner) = value.strip_prefix('"') {
        return double_quoted(inner).map(Value::String);
    }
    if let Some(inner) = value.strip_prefix('\'') {
        return single_quoted(inner).map(Value::String);
    }
    if value.starts_with(['|', '>', '[', '{', '&', '*', '!', '%', '@', '`']) {
        return Err(format!(
            "`{}` values are not supported; quote the value",
            &value[..1]
        ));
    }
    if value.contains(": ") || value.ends_with(':') {
        return Err("a plain value cannot hold `: ` (YAML reads a mapping); quote it".into());
    }
    Ok(match value {
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        "null" | "Null" | "NULL" | "~" | "" => Value::Null,
        _ => number(value).unwrap_or_else(|| Value::String(value.to_owned())),
    })
}

fn number(value: &str) -> Option<Value> {
    let numeric = value
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        && value.bytes().any(|b| b.is_ascii_digit());
    if !numeric {
        return None;
    }
    if let Ok(i) = value.parse::<i64>() {
        return Some(Value::Number(i.into()));
    }
    value
        .parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map(Value::Number)
}

/// What may follow a closing quote: nothing, or a comment.
fn after_quote(rest: &str) -> Result<(), String> {
    let rest = rest.trim();
    if rest.is_empty() || rest.starts_with('#') {
        Ok(())
    } else {
        Err("text after a closing quote".into())
    }
}

fn single_quoted(inner: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\'' {
            out.push(c);
        } else if chars.peek() == Some(&'\'') {
            chars.next();
            out.push('\'');
        } else {
            return after_quote(&chars.collect::<String>()).map(|()| out);
        }
    }
    Err("unterminated '...' string".into())
}

fn double_quoted(inner: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return after_quote(chars.as_str()).map(|()| out),
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('/') => out.push('/'),
                other => return Err(format!("unsupported escape `\\{}`", other.unwrap_or(' '))),
            },
            c => out.push(c),
        }
    }
    Err("unterminated \"...\" string".into())
}

#[cfg(test)]
mod tests {
    use super::parse;
    use serde_json::json;

    #[test]
    fn reads_the_supported_subset() {
        let text = "---\nname: pdf-processing\ndescription: \"Fill: forms\" # c\nversion: 2\nbeta: true\nnote: it's # not a comment? yes\nmetadata:\n  author: 'O''Neil'\n  tier: gold\ntags:\n  - a\n  - \"b\"\n---\nBody\n";
        let map = parse(text).expect("parses");
        assert_eq!(
            serde_json::Value::Object(map),
            json!({
                "name": "pdf-processing",
                "description": "Fill: forms",
                "version": 2,
                "beta": true,
                "note": "it's",
                "metadata": {"author": "O'Neil", "tier": "gold"},
                "tags": ["a", "b"],
            })
        );
    }

    #[test]
    fn refuses_what_it_does_not_read() {
        assert!(parse("name: x\n").is_err());
        assert!(parse("---\nname: x\n").is_err());
        assert!(parse("---\ndescription: |\n  multi\n---\n").is_err());
        assert!(parse("---\nname: x\nname: y\n---\n").is_err());
        assert!(parse("---\na:\n  b:\n    c: d\n---\n").is_err());
        assert!(parse("---\ndescription: Use when: x\n---\n").is_err());
    }
}
