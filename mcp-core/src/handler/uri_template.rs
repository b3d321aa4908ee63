//! Matching URIs against RFC 6570 templates (simple `{var}` and reserved `{+var}` expressions).
//!
//! What a matched value may hold is checked on the percent-decoded value,
//! the text the read handler receives, so an encoded character (`%2F`,
//! `%2E%2E`) cannot slip past a check made on the raw URI:
//!
//! - a simple `{var}` value is one path segment: it never contains `/`, and
//!   it is never `.` or `..`;
//! - a reserved `{+var}` value may contain `/`, but none of its
//!   `/`-separated segments is `.` or `..`;
//! - neither is empty, and neither spans a raw `?` or `#` of the URI
//!   (simple values) or a percent escape that is not UTF-8.
//!
//! A URI whose values break these rules does not match the template (the
//! read answers "unknown resource"). So a handler that joins a value under
//! a base directory cannot be made to climb out of it through the URI.

use std::collections::HashMap;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A variable; `reserved` (`{+var}`) values may contain `/` (see the
    /// module docs for what a decoded value may hold).
    Var {
        name: String,
        reserved: bool,
    },
}

/// Why [`UriTemplate::parse`] refused a template.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UriTemplateError {
    /// A `{` with no `}` after it.
    Unclosed {
        /// The template.
        template: String,
    },
    /// An expression other than `{name}` or `{+name}`.
    Unsupported {
        /// The expression, without its braces.
        expression: String,
        /// The template.
        template: String,
    },
    /// Two variables with no literal between them.
    AdjacentVariables {
        /// The template.
        template: String,
    },
}

impl std::fmt::Display for UriTemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unclosed { template } => {
                write!(f, "unclosed `{{` in URI template `{template}`")
            }
            Self::Unsupported {
                expression,
                template,
            } => write!(
                f,
                "unsupported expression `{{{expression}}}` in URI template `{template}` (use {{name}} or {{+name}})"
            ),
            Self::AdjacentVariables { template } => write!(
                f,
                "two variables with no literal between them in URI template `{template}`"
            ),
        }
    }
}

impl std::error::Error for UriTemplateError {}

impl UriTemplate {
    /// A template that matches only the empty string (a placeholder for an
    /// invalid template, which the server builder reports).
    pub(crate) fn empty() -> Self {
        Self { parts: Vec::new() }
    }

    /// Parses a template. Errors name the problem (unclosed brace, empty or
    /// unsupported expression, two variables with nothing between them).
    ///
    /// # Errors
    /// A message describing why the template is not supported.
    pub fn parse(template: &str) -> Result<Self, UriTemplateError> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after.find('}').ok_or_else(|| UriTemplateError::Unclosed {
                template: template.to_owned(),
            })?;
            let expr = &after[..close];
            let (name, reserved) = match expr.strip_prefix('+') {
                Some(n) => (n, true),
                None => (expr, false),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(UriTemplateError::Unsupported {
                    expression: expr.to_owned(),
                    template: template.to_owned(),
                });
            }
            if matches!(parts.last(), Some(Part::Var { .. })) {
                return Err(UriTemplateError::AdjacentVariables {
                    template: template.to_owned(),
                });
            }
            parts.push(Part::Var {
                name: name.to_owned(),
                reserved,
            });
            rest = &after[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(Self { parts })
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Matches `uri`, returning the (percent-decoded) variable values.
    ///
    /// A variable takes the longest value that still lets the rest of the
    /// template match, so `{date}.txt` matches `v1.txt.txt` with `date = v1.txt`.
    ///
    /// Values are checked once percent-decoded (what the read handler
    /// receives), so `%2F` or `%2E%2E` cannot slip past: a simple `{var}`
    /// value never contains `/` and is never `.` or `..`; no `/`-separated
    /// segment of a reserved `{+var}` value is `.` or `..`; neither is
    /// empty. A URI breaking these rules does not match.
    pub fn match_uri(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut vars = HashMap::new();
        match_parts(&self.parts, uri, &mut vars).then_some(vars)
    }
}

fn match_parts(parts: &[Part], rest: &str, vars: &mut HashMap<String, String>) -> bool {
    let Some((first, tail)) = parts.split_first() else {
        return rest.is_empty();
    };
    match first {
        Part::Literal(lit) => rest
            .strip_prefix(lit.as_str())
            .is_some_and(|r| match_parts(tail, r, vars)),
        Part::Var { name, reserved } => {
            // Candidate ends, longest first: where the next literal occurs
            // (at most MAX_CANDIDATES, which bounds backtracking on hostile
            // URIs), or the end of the input when the variable is last.
            const MAX_CANDIDATES: usize = 32;
            let ends: Vec<usize> = match tail.first() {
                Some(Part::Literal(next)) => rest
                    .rmatch_indices(next.as_str())
                    .map(|(i, _)| i)
                    .take(MAX_CANDIDATES)
                    .collect(),
                _ => vec![rest.len()],
            };
            for end in ends {
                let raw = &rest[..end];
                if raw.is_empty() || (!reserved && raw.contains(['/', '?', '#'])) {
                    continue;
                }
                let Some(value) = percent_decode(raw) else {
                    continue;
                };
                if !value_allowed(&value, *reserved) {
                    continue;
                }
                if match_parts(tail, &rest[end..], vars) {
                    vars.insert(name.clone(), value);
                    return true;
                }
            }
            false
        }
    }
}

/// Whether a decoded value keeps the promises of the module docs: a simple
/// value is one segment other than `.` and `..`; a reserved value has no
/// `.` or `..` segment.
fn value_allowed(value: &str, reserved: bool) -> bool {
    let dot_segment = |segment: &str| segment == "." || segment == "..";
    if reserved {
        !value.split('/').any(dot_segment)
    } else {
        !value.contains('/') && !dot_segment(value)
    }
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_simple_and_reserved_variables() {
        let t = UriTemplate::parse("file:///logs/{date}.txt").expect("parse");
        let v = t.match_uri("file:///logs/2026-01-02.txt").expect("match");
        assert_eq!(v["date"], "2026-01-02");
        assert!(t.match_uri("file:///logs/a/b.txt").is_none());
        assert!(t.match_uri("file:///logs/.txt").is_none());
        let r = UriTemplate::parse("repo://{owner}/{+path}").expect("parse");
        let v = r.match_uri("repo://me/src/lib%20x.rs").expect("match");
        assert_eq!(v["owner"], "me");
        assert_eq!(v["path"], "src/lib x.rs");
        assert_eq!(r.variables().collect::<Vec<_>>(), ["owner", "path"]);
    }

    /// A client that encodes `/` or `.` (`%2F`, `%2E`) must not smuggle a
    /// separator or a dot segment into a variable: the checks apply to the
    /// decoded value the handler receives.
    #[test]
    fn encoded_separators_and_dot_segments_do_not_match() {
        let t = UriTemplate::parse("file:///logs/{name}").expect("parse");
        assert!(t.match_uri("file:///logs/a%2Fb").is_none());
        assert!(t.match_uri("file:///logs/..%2F..%2Fetc%2Fpasswd").is_none());
        assert!(t.match_uri("file:///logs/%2e%2e").is_none());
        assert!(t.match_uri("file:///logs/..").is_none());
        assert!(t.match_uri("file:///logs/.").is_none());
        assert_eq!(
            t.match_uri("file:///logs/a..b").expect("match")["name"],
            "a..b"
        );
        assert_eq!(
            t.match_uri("file:///logs/a%3Fb").expect("match")["name"],
            "a?b"
        );

        let r = UriTemplate::parse("repo://{owner}/{+path}").expect("parse");
        assert!(r.match_uri("repo://me/src/../../secret").is_none());
        assert!(r.match_uri("repo://me/src/%2E%2E/%2e%2e/secret").is_none());
        assert!(r.match_uri("repo://me/./x").is_none());
        assert!(r.match_uri("repo://me%2F..%2Fyou/x").is_none());
        let v = r.match_uri("repo://me/src/v1..2/x.rs").expect("match");
        assert_eq!(v["path"], "src/v1..2/x.rs");
    }

    #[test]
    fn rejects_bad_templates() {
        assert!(UriTemplate::parse("x://{a").is_err());
        assert!(UriTemplate::parse("x://{a}{b}").is_err());
        assert!(UriTemplate::parse("x://{?q}").is_err());
    }
}
