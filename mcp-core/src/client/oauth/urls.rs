//! The little URL work OAuth needs, on `hyper::Uri`: form and query
//! encoding (`application/x-www-form-urlencoded`), query parsing, the
//! well-known metadata locations, and whether a protected resource
//! covers the server's URL.

use hyper::Uri;

use crate::client::ClientError;

/// Percent-encodes `value` for a query or form body: unreserved
/// characters as they are, everything else `%XX`.
pub(crate) fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `name=value&...`, each part encoded.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (name, value) in pairs {
        if !out.is_empty() {
            out.push('&');
        }
        out.push_str(&encode(name));
        out.push('=');
        out.push_str(&encode(value));
    }
    out
}

/// Decodes one form component (`+` is a space); `None` when the escapes
/// are broken or the result is not UTF-8.
pub(crate) fn decode(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = value.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The query parameters of `url` (after `?`, before `#`), decoded.
pub(crate) fn query_pairs(url: &str) -> Result<Vec<(String, String)>, ClientError> {
    let Some((_, query)) = url.split_once('?') else {
        return Ok(Vec::new());
    };
    let query = query.split('#').next().unwrap_or_default();
    let mut pairs = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        match (decode(name), decode(value)) {
            (Some(n), Some(v)) => pairs.push((n, v)),
            _ => {
                return Err(ClientError::Authorization(format!(
                    "a malformed query in {url:?}"
                )))
            }
        }
    }
    Ok(pairs)
}

/// `url` with `pairs` appended to its query.
pub(crate) fn with_query(url: &str, pairs: &[(&str, &str)]) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{}", form(pairs))
}

/// Parses an absolute `http(s)` URL.
pub(crate) fn parse(url: &str) -> Result<Uri, ClientError> {
    let uri: Uri = url
        .parse()
        .map_err(|e| ClientError::Authorization(format!("invalid URL {url:?}: {e}")))?;
    match (uri.scheme_str(), uri.authority()) {
        (Some("http" | "https"), Some(_)) => Ok(uri),
        _ => Err(ClientError::Authorization(format!(
            "{url:?} is not an absolute http(s) URL"
        ))),
    }
}

/// `scheme://authority` of `uri`, and its path without a trailing `/`.
fn origin_and_path(uri: &Uri) -> (String, String) {
    let origin = format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("http"),
        uri.authority().map(|a| a.as_str()).unwrap_or_default()
    );
    let path = uri.path().trim_end_matches('/').to_owned();
    (origin, path)
}

/// Where Protected Resource Metadata may be for the server at `server`
/// (RFC 9728 §3.1): the path-suffixed location first, then the root.
pub(crate) fn resource_metadata_urls(server: &Uri) -> Vec<String> {
    let (origin, path) = origin_and_path(server);
    let base = format!("{origin}/.well-known/oauth-protected-resource");
    if path.is_empty() {
        vec![base]
    } else {
        vec![format!("{base}{path}"), base]
    }
}

/// Where an authorization server's metadata may be, in the order the MCP
/// spec gives: RFC 8414 with the issuer's path inserted, OpenID Connect
/// discovery inserted, then OpenID Connect discovery appended (without a
/// path: RFC 8414, then OpenID Connect).
pub(crate) fn server_metadata_urls(issuer: &Uri) -> Vec<String> {
    let (origin, path) = origin_and_path(issuer);
    let oauth = format!("{origin}/.well-known/oauth-authorization-server");
    let oidc = format!("{origin}/.well-known/openid-configuration");
    if path.is_empty() {
        vec![oauth, oidc]
    } else {
        vec![
            format!("{oauth}{path}"),
            format!("{oidc}{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// True when the protected resource `resource` covers the server at
/// `server`: same scheme and authority (case-insensitive), and the
/// server's path is the resource's path or below it.
pub(crate) fn resource_covers(resource: &Uri, server: &Uri) -> bool {
    let same = |a: Option<&str>, b: Option<&str>| match (a, b) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => false,
    };
    if !same(resource.scheme_str(), server.scheme_str())
        || !same(
            resource.authority().map(|a| a.as_str()),
            server.authority().map(|a| a.as_str()),
        )
    {
        return false;
    }
    let prefix = resource.path().trim_end_matches('/');
    let path = server.path();
    prefix.is_empty()
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(s: &str) -> Uri {
        s.parse().unwrap_or_default()
    }

    #[test]
    fn encoding_round_trips() {
        assert_eq!(encode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
        assert_eq!(decode("a%20b+c%C3%A9").as_deref(), Some("a b cé"));
        assert_eq!(decode("%zz"), None);
        assert_eq!(decode("%4"), None);
    }

    #[test]
    fn queries_parse_and_refuse_broken_escapes() {
        let pairs = query_pairs("http://x/cb?code=a%2Fb&state=s#frag").unwrap_or_default();
        assert_eq!(
            pairs,
            vec![("code".into(), "a/b".into()), ("state".into(), "s".into())]
        );
        assert!(query_pairs("http://x/cb?code=%").is_err());
        assert_eq!(
            with_query("http://a/auth?x=1", &[("y", "2 3")]),
            "http://a/auth?x=1&y=2%203"
        );
    }

    #[test]
    fn well_known_locations_follow_the_spec_order() {
        assert_eq!(
            resource_metadata_urls(&uri("http://h:1/mcp")),
            vec![
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            server_metadata_urls(&uri("http://h/tenant1")),
            vec![
                "http://h/.well-known/oauth-authorization-server/tenant1",
                "http://h/.well-known/openid-configuration/tenant1",
                "http://h/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(server_metadata_urls(&uri("http://h")).len(), 2);
    }

    #[test]
    fn a_resource_covers_its_own_paths_only() {
        let server = uri("http://localhost:3000/mcp");
        assert!(resource_covers(&uri("http://localhost:3000/mcp"), &server));
        assert!(resource_covers(&uri("http://LOCALHOST:3000"), &server));
        assert!(!resource_covers(
            &uri("https://evil.example.com/mcp"),
            &server
        ));
        assert!(!resource_covers(&uri("http://localhost:3000/mc"), &server));
        assert!(!resource_covers(&uri("http://localhost:3001/mcp"), &server));
    }
}
