//! The 2026-07-28 HTTP binding: which era a POST belongs to, and the check
//! of the routing headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-{Name}`) against the body of a modern request.
//!
//! Rules (header *names* are case-insensitive, *values* case-sensitive):
//!
//! - `MCP-Protocol-Version` equals `_meta["io.modelcontextprotocol/protocolVersion"]`;
//! - `Mcp-Method` equals the JSON-RPC `method`;
//! - `Mcp-Name` equals `params.taskId` on `tasks/*` when sent;
//! - `Mcp-Name` equals `params.name` (`tools/call`, `prompts/get`) or
//!   `params.uri` (`resources/read`);
//! - `Mcp-Param-{Name}` mirrors a `tools/call` argument whose input-schema
//!   property carries `"x-mcp-header": "Name"`, when the argument is present
//!   and not `null` (a `null` or absent argument expects no header);
//! - optional whitespace (SP, HTAB) around a value is trimmed; a value of
//!   the form `=?base64?<base64 of UTF-8>?=` is decoded first (padded
//!   standard base64; anything else is refused); a header repeated, or a
//!   value with bytes outside visible ASCII, SP and HTAB, is refused;
//! - a body number compares numerically (`42` equals `42.0`), a boolean as
//!   `true` / `false`.
//!
//! Under tool search (`crate::tool_search`) a `call_tool` request is
//! checked as what its body says, a `tools/call` of `call_tool`:
//! `Mcp-Name: call_tool`, and no `Mcp-Param-*` of the tool it names.

use std::borrow::Cow;

use hyper::header::{HeaderMap, HeaderName};
use serde_json::Value;

use crate::protocol::base64;
use crate::protocol::meta::meta_keys;
use crate::protocol::MODERN_PROTOCOL_VERSIONS;
use crate::{transport::Frame, McpServer};

use super::names::PROTOCOL_VERSION_NAME;

/// The `Mcp-Method` header.
pub(crate) static METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
/// The `Mcp-Name` header.
pub(crate) static NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

const BASE64_PREFIX: &str = "=?base64?";
const BASE64_SUFFIX: &str = "?=";

/// The modern claim of a message: its
/// `params._meta["io.modelcontextprotocol/protocolVersion"]`, if present.
pub(crate) fn claim(message: &Value) -> Option<&Value> {
    message
        .get("params")?
        .get("_meta")?
        .get(meta_keys::PROTOCOL_VERSION)
}

/// True when `MCP-Protocol-Version` names a stateless revision.
pub(crate) fn header_is_modern(headers: &HeaderMap) -> bool {
    headers.get(&PROTOCOL_VERSION_NAME).is_some_and(|v| {
        let v = trim_ows(v.as_bytes());
        MODERN_PROTOCOL_VERSIONS.iter().any(|m| m.as_bytes() == v)
    })
}

/// Checks the routing headers of a modern request whose claimed version
/// is `version`; the error says what is wrong (answered `-32020`, HTTP 400).
pub(crate) fn check(
    headers: &HeaderMap,
    payload: &Frame,
    version: &str,
    server: &McpServer,
) -> Result<(), String> {
    let method = payload.method();
    // MCP-Protocol-Version: never base64-wrapped.
    match raw_value(headers, &PROTOCOL_VERSION_NAME, "MCP-Protocol-Version")? {
        None => return Err("missing MCP-Protocol-Version header".into()),
        Some(v) if v != version => {
            return Err(format!(
                "MCP-Protocol-Version header {v:?} does not match _meta protocolVersion {version:?}"
            ))
        }
        Some(_) => {}
    }

    let method = method.unwrap_or_default();
    expect_text(headers, &METHOD_HEADER, "Mcp-Method", Some(method))?;

    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        expect_text(headers, &NAME_HEADER, "Mcp-Name", payload.param_str(field))?;
    }
    // The tasks extension: `Mcp-Name` carries `params.taskId`; checked
    // when sent (a mismatch is refused), tolerated when absent.
    if matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel")
        && headers.contains_key(&NAME_HEADER)
    {
        expect_text(
            headers,
            &NAME_HEADER,
            "Mcp-Name",
            payload.param_str("taskId"),
        )?;
    }

    if method == "tools/call" {
        let tool = payload.param_str("name").unwrap_or_default();
        // The tools as they are now: a tool added to a live catalog
        // mirrors its arguments like one built in.
        let tools = server.tools().snapshot();
        let declared = tools.param_headers.of(tool);
        // Read only for a tool that mirrors arguments into headers.
        let args = if declared.is_empty() {
            None
        } else {
            payload.arguments()
        };
        for param in declared {
            let Some(value) = lookup(args.as_deref(), &param.path) else {
                continue;
            };
            let Some(header) = value_of(headers, param.name.as_str(), &param.display)? else {
                return Err(format!(
                    "missing {} header for argument `{}`",
                    param.display,
                    param.path.join(".")
                ));
            };
            if !matches_body(&header, value) {
                return Err(format!(
                    "{} header does not match argument `{}`",
                    param.display,
                    param.path.join(".")
                ));
            }
        }
    }
    Ok(())
}

/// The argument at `path`, unless absent or `null`.
fn lookup<'a>(args: Option<&'a Value>, path: &[String]) -> Option<&'a Value> {
    let mut at = args?;
    for key in path {
        at = at.as_object()?.get(key)?;
    }
    (!at.is_null()).then_some(at)
}

/// A header that must equal `body` (or be absent when `body` is).
fn expect_text(
    headers: &HeaderMap,
    name: &HeaderName,
    display: &str,
    body: Option<&str>,
) -> Result<(), String> {
    match (value_of(headers, name, display)?, body) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err(format!("missing {display} header")),
        (Some(_), None) => Err(format!("{display} header has no counterpart in the body")),
        (Some(h), Some(b)) if h == b => Ok(()),
        (Some(h), Some(b)) => Err(format!(
            "{display} header {:?} does not match the body's {b:?}",
            h.chars().take(128).collect::<String>()
        )),
    }
}

/// A header's value, trimmed and base64-decoded; `None` when absent.
fn value_of<'a>(
    headers: &'a HeaderMap,
    name: impl hyper::header::AsHeaderName + Copy,
    display: &str,
) -> Result<Option<Cow<'a, str>>, String> {
    let Some(raw) = raw_value(headers, name, display)? else {
        return Ok(None);
    };
    decode(raw)
        .map(Some)
        .ok_or_else(|| format!("{display} header is not valid =?base64?…?= (UTF-8) encoding"))
}

/// A header's value, trimmed; refused when repeated or holding bytes
/// outside visible ASCII, SP and HTAB.
fn raw_value<'a>(
    headers: &'a HeaderMap,
    name: impl hyper::header::AsHeaderName + Copy,
    display: &str,
) -> Result<Option<&'a str>, String> {
    let mut all = headers.get_all(name).iter();
    let Some(value) = all.next() else {
        return Ok(None);
    };
    if all.next().is_some() {
        return Err(format!("{display} header appears more than once"));
    }
    // Tabs and visible ASCII only (what `to_str` accepts).
    let text = value
        .to_str()
        .map_err(|_| format!("{display} header has invalid characters"))?;
    // What is cut off is ASCII: the rest starts and ends on character
    // boundaries.
    let (start, end) = ows_bounds(text.as_bytes());
    Ok(Some(&text[start..end]))
}

/// `bytes` without the spaces and tabs around it (HTTP's optional white
/// space).
fn trim_ows(bytes: &[u8]) -> &[u8] {
    let (start, end) = ows_bounds(bytes);
    &bytes[start..end]
}

/// Where `bytes` starts and ends once the spaces and tabs around it are
/// cut off; byte-wise, as a header is read on every request.
fn ows_bounds(bytes: &[u8]) -> (usize, usize) {
    let ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = bytes.iter().position(|b| !ows(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !ows(b)).map_or(start, |i| i + 1);
    (start, end)
}

/// Decodes a `=?base64?…?=` value (strict padded standard base64 of UTF-8);
/// any other value is literal. `None` for a wrapped value that does not decode.
pub(crate) fn decode(value: &str) -> Option<Cow<'_, str>> {
    let Some(inner) = value
        .strip_prefix(BASE64_PREFIX)
        .and_then(|rest| rest.strip_suffix(BASE64_SUFFIX))
    else {
        return Some(Cow::Borrowed(value));
    };
    String::from_utf8(strict_base64(inner)?)
        .ok()
        .map(Cow::Owned)
}

/// Padded standard base64, canonical only (what an encoder emits).
fn strict_base64(s: &str) -> Option<Vec<u8>> {
    base64::decode_canonical(s)
}

/// Whether a (decoded) header value mirrors a body argument.
fn matches_body(header: &str, body: &Value) -> bool {
    match body {
        Value::String(s) => header == s,
        Value::Bool(true) => header == "true",
        Value::Bool(false) => header == "false",
        Value::Number(n) => same_number(header, n),
        _ => false,
    }
}

/// Numeric equality: `42`, `42.0` and `4.2e1` all equal the body's 42.
fn same_number(header: &str, body: &serde_json::Number) -> bool {
    let numeric = !header.is_empty()
        && header
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
    if !numeric {
        return false;
    }
    if let Ok(h) = header.parse::<i128>() {
        if let Some(b) = body.as_i64() {
            return h == i128::from(b);
        }
        if let Some(b) = body.as_u64() {
            return h == i128::from(b);
        }
    }
    match (header.parse::<f64>(), body.as_f64()) {
        (Ok(h), Some(b)) => h.is_finite() && h == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;
    use serde_json::json;

    #[test]
    fn base64_values_decode_strictly() {
        assert_eq!(decode("=?base64?SGVsbG8=?=").as_deref(), Some("Hello"));
        assert_eq!(decode("=?base64??=").as_deref(), Some(""));
        // Unpadded, bad characters, misplaced padding, non-canonical bits.
        assert_eq!(decode("=?base64?SGVsbG8?="), None);
        assert_eq!(decode("=?base64?SGVs!!!bG8=?="), None);
        assert_eq!(decode("=?base64?SG=sbG8=?="), None);
        assert_eq!(decode("=?base64?SGVsbG9=?="), None);
        // Not UTF-8.
        assert_eq!(decode("=?base64?/w==?="), None);
        // Without both markers (or with other case) the value is literal.
        assert_eq!(decode("SGVsbG8=").as_deref(), Some("SGVsbG8="));
        assert_eq!(
            decode("=?base64?SGVsbG8=").as_deref(),
            Some("=?base64?SGVsbG8=")
        );
        assert_eq!(
            decode("=?BASE64?SGVsbG8=?=").as_deref(),
            Some("=?BASE64?SGVsbG8=?=")
        );
    }

    #[test]
    fn numbers_compare_numerically() {
        let n = |v: Value| match v {
            Value::Number(n) => n,
            _ => unreachable!(),
        };
        assert!(same_number("42", &n(json!(42))));
        assert!(same_number("42.0", &n(json!(42))));
        assert!(same_number("42", &n(json!(42.0))));
        assert!(same_number("4.2e1", &n(json!(42))));
        assert!(same_number("-7", &n(json!(-7))));
        assert!(same_number("18446744073709551615", &n(json!(u64::MAX))));
        assert!(!same_number("43", &n(json!(42))));
        assert!(!same_number("", &n(json!(0))));
        assert!(!same_number("inf", &n(json!(1))));
        assert!(!same_number("0x2a", &n(json!(42))));
    }

    #[test]
    fn header_values_are_trimmed_and_checked() {
        let mut h = HeaderMap::new();
        h.insert("mcp-name", HeaderValue::from_static(" \tx \t"));
        assert_eq!(raw_value(&h, "mcp-name", "Mcp-Name"), Ok(Some("x")));
        h.append("mcp-name", HeaderValue::from_static("y"));
        assert!(raw_value(&h, "mcp-name", "Mcp-Name").is_err());
        let mut h = HeaderMap::new();
        h.insert(
            "mcp-name",
            HeaderValue::from_bytes("café".as_bytes()).expect("obs-text is a valid value"),
        );
        assert!(raw_value(&h, "mcp-name", "Mcp-Name").is_err());
    }
}
