//! The `Bearer` challenge of a `WWW-Authenticate` header (RFC 6750 §3,
//! RFC 9728 §5.1): `resource_metadata`, `scope`, `error`.

/// What a `401` or `403` asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// Where the Protected Resource Metadata is.
    pub(crate) resource_metadata: Option<String>,
    /// The scopes the request needs, space-separated.
    pub(crate) scope: Option<String>,
    /// `invalid_token`, `insufficient_scope`, ...
    pub(crate) error: Option<String>,
}

impl Challenge {
    /// The `Bearer` (else `DPoP`) challenge among `header`'s (an absent or other-scheme
    /// header gives an empty challenge). Quoted strings may hold commas and
    /// `\"` escapes; unknown parameters are ignored.
    pub(crate) fn parse(header: Option<&str>) -> Self {
        let mut out = Self::default();
        let Some(header) = header else {
            return out;
        };
        let Some(start) = find_scheme(header, "bearer").or_else(|| find_scheme(header, "dpop"))
        else {
            return out;
        };
        let mut rest = &header[start..];
        loop {
            rest = rest.trim_start_matches([' ', '\t', ',']);
            let Some(eq) = rest.find('=') else {
                break;
            };
            let name = rest[..eq].trim();
            if name.contains(' ') {
                // The next challenge's scheme: this one is over.
                break;
            }
            rest = rest[eq + 1..].trim_start();
            let value;
            if let Some(quoted) = rest.strip_prefix('"') {
                let (v, after) = unquote(quoted);
                value = v;
                rest = after;
            } else {
                let end = rest.find(',').unwrap_or(rest.len());
                value = rest[..end].trim().to_owned();
                rest = &rest[end..];
            }
            match name.to_ascii_lowercase().as_str() {
                "resource_metadata" => out.resource_metadata = Some(value),
                "scope" => out.scope = Some(value),
                "error" => out.error = Some(value),
                _ => {}
            }
        }
        out
    }

    /// The challenged scopes, one by one.
    pub(crate) fn scopes(&self) -> Vec<String> {
        split_scopes(self.scope.as_deref())
    }

    /// True for `error="insufficient_scope"`.
    pub(crate) fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Space-separated scopes as a list, without empties.
pub(crate) fn split_scopes(scope: Option<&str>) -> Vec<String> {
    scope
        .unwrap_or_default()
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Where the parameters of the `scheme` challenge start.
fn find_scheme(header: &str, scheme: &str) -> Option<usize> {
    let lower = header.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find(scheme) {
        let at = from + at;
        let before_ok = at == 0 || matches!(lower.as_bytes()[at - 1], b' ' | b',');
        let end = at + scheme.len();
        let after_ok = end == lower.len() || lower.as_bytes()[end] == b' ';
        if before_ok && after_ok {
            return Some(end);
        }
        from = end;
    }
    None
}

/// The quoted string starting after its opening quote, and what follows it.
fn unquote(s: &str) -> (String, &str) {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
            }
            '"' => return (out, &s[i + 1..]),
            c => out.push(c),
        }
    }
    (out, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_bearer_parameters() {
        let c = Challenge::parse(Some(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", error_description="no, \"really\"""#,
        ));
        assert!(c.insufficient_scope());
        assert_eq!(c.scopes(), vec!["a", "b"]);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn other_schemes_and_garbage_give_nothing() {
        assert_eq!(
            Challenge::parse(Some("Basic realm=\"x\"")),
            Challenge::default()
        );
        assert_eq!(Challenge::parse(Some("Bearer")), Challenge::default());
        assert_eq!(
            Challenge::parse(Some("Bearer scope=\"unterminated"))
                .scope
                .as_deref(),
            Some("unterminated")
        );
        let c = Challenge::parse(Some("Basic realm=\"a\", Bearer scope=x"));
        assert_eq!(c.scope.as_deref(), Some("x"));
        assert_eq!(Challenge::parse(None), Challenge::default());
    }

    #[test]
    fn odd_headers_never_panic() {
        for h in [
            "",
            " ",
            ",",
            "=",
            "Bearer=",
            "Bearer ,,,",
            "Bearer a",
            "Bearer a=",
            "Bearer =x",
            "Bearer a=\"",
            "Bearer a=\"\\",
            "bearerx scope=a",
            "xbearer scope=a",
            "DPoP error=use_dpop_nonce",
            "Bearer scope=\"é\", error=é",
            "Bearer,Bearer scope=a",
            "Bearer a b c=d",
        ] {
            let _ = Challenge::parse(Some(h));
        }
        assert_eq!(
            Challenge::parse(Some("DPoP error=\"use_dpop_nonce\""))
                .error
                .as_deref(),
            Some("use_dpop_nonce")
        );
        assert_eq!(Challenge::parse(Some("xbearer scope=a")).scope, None);
    }
}
