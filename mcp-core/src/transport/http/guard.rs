//! The `Host`/`Origin` guard (anti-DNS-rebinding, anti-CSRF), checked before routing.

use std::borrow::Cow;
use std::net::IpAddr;

use hyper::header::{HOST, ORIGIN};
use hyper::http::request::Parts;

use super::options::HttpOptions;

/// True when the request may go on to authorization and routing.
pub(crate) fn allowed(options: &HttpOptions, parts: &Parts) -> bool {
    // The first value of a header, and whether it was repeated.
    let first = |name| {
        let mut values = parts
            .headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap_or("\u{fffd}"));
        (values.next(), values.next().is_some())
    };
    let (origin, many_origins) = first(ORIGIN);
    let (host, many_hosts) = first(HOST);
    if let Some(check) = &options.allow_request {
        return check(origin, host, parts);
    }
    // Exactly one Host header (HTTP/1.1 requires it), naming an accepted host.
    let (Some(host), false) = (host, many_hosts) else {
        return false;
    };
    if !host_allowed(options, host) {
        return false;
    }
    // An absolute-form request target carries its own authority; it must pass too.
    if let Some(authority) = parts.uri.authority() {
        if !host_allowed(options, authority.as_str()) {
            return false;
        }
    }
    match (origin, many_origins) {
        (None, _) => true,
        (Some(origin), false) => origin_allowed(options, origin),
        (Some(_), true) => false,
    }
}

fn host_allowed(options: &HttpOptions, host: &str) -> bool {
    // What a local client sends on every request, read without the
    // general parse; any other value takes it (which accepts these too).
    if is_plain_loopback(host) {
        return true;
    }
    let Some(name) = hostname_of(host) else {
        return false;
    };
    is_loopback_name(&name)
        || options
            .allowed_hosts
            .iter()
            .any(|allowed| hostname_of(allowed).is_some_and(|a| a == name))
}

/// `localhost` or `127.0.0.1`, exactly as written, with an optional valid port.
fn is_plain_loopback(host: &str) -> bool {
    let rest = host
        .strip_prefix("127.0.0.1")
        .or_else(|| host.strip_prefix("localhost"));
    match rest {
        Some("") => true,
        Some(rest) => rest.strip_prefix(':').is_some_and(valid_port),
        None => false,
    }
}

fn origin_allowed(options: &HttpOptions, origin: &str) -> bool {
    let normalized = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    if options.allowed_origins.iter().any(|o| {
        o.trim()
            .trim_end_matches('/')
            .eq_ignore_ascii_case(&normalized)
    }) {
        return true;
    }
    let Some((scheme, rest)) = normalized.split_once("://") else {
        return false; // "null", garbage
    };
    if scheme != "http" && scheme != "https" {
        return false;
    }
    if rest.contains(['/', '@', '?', '#']) {
        return false;
    }
    hostname_of(rest).is_some_and(|name| is_loopback_name(&name))
}

/// The lower-cased host name of a `Host` value or authority, without port
/// or brackets; `None` when malformed.
pub(crate) fn hostname_of(value: &str) -> Option<Cow<'_, str>> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    let name = if let Some(rest) = value.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        if !(after.is_empty() || (after.starts_with(':') && valid_port(&after[1..]))) {
            return None;
        }
        inside
    } else {
        match value.bytes().filter(|&b| b == b':').count() {
            0 => value,
            1 => {
                let (name, port) = value.split_once(':')?;
                if !valid_port(port) {
                    return None;
                }
                name
            }
            // A bare IPv6 address (not valid in Host, but harmless to read).
            _ => value,
        }
    };
    let name = name.trim_end_matches('.');
    if name.is_empty() {
        return None;
    }
    Some(if name.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    })
}

fn valid_port(port: &str) -> bool {
    // Empty (`host:`) is allowed by RFC 3986; otherwise digits naming a
    // port that exists (at most 65535).
    port.is_empty()
        || (port.len() <= 5
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u16>().is_ok())
}

/// `localhost` or a loopback IP literal (127.0.0.0/8, ::1).
pub(crate) fn is_loopback_name(name: &str) -> bool {
    // The usual names first, without parsing an address.
    if name == "localhost" || name == "127.0.0.1" || name == "::1" {
        return true;
    }
    name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostnames() {
        assert_eq!(hostname_of("LocalHost:8080").as_deref(), Some("localhost"));
        assert_eq!(hostname_of("[::1]:80").as_deref(), Some("::1"));
        assert_eq!(hostname_of("[::1]").as_deref(), Some("::1"));
        assert_eq!(hostname_of("127.0.0.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(hostname_of("evil.com:x"), None);
        // A port that cannot exist.
        assert_eq!(hostname_of("localhost:99999"), None);
        assert_eq!(hostname_of("[::1]:65536"), None);
        assert_eq!(hostname_of("localhost:65535").as_deref(), Some("localhost"));
        assert_eq!(hostname_of("[::1]x"), None);
        assert_eq!(hostname_of(""), None);
        assert!(is_loopback_name("127.8.9.1"));
        assert!(is_loopback_name("::1"));
        assert!(!is_loopback_name("localhost.evil.com"));
        assert!(!is_loopback_name("0.0.0.0"));
    }

    #[test]
    fn the_plain_loopback_shortcut_agrees_with_the_general_parse() {
        let o = HttpOptions::default();
        for host in [
            "127.0.0.1",
            "127.0.0.1:8080",
            "localhost:",
            "localhost:65535",
            "localhost:65536",
            "localhost:80x",
            "127.0.0.1.evil.com",
            "localhostevil.com",
            "localhost.:9",
            "127.0.0.10:9",
        ] {
            let general = hostname_of(host).is_some_and(|name| is_loopback_name(&name));
            assert_eq!(host_allowed(&o, host), general, "{host}");
            if is_plain_loopback(host) {
                assert!(
                    general,
                    "{host}: the shortcut accepted what the parse refuses"
                );
            }
        }
        assert!(is_plain_loopback("127.0.0.1:18790"));
        assert!(!is_plain_loopback("localhost:99999"));
        assert!(!is_plain_loopback("127.0.0.1.evil.com"));
    }

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut b = hyper::Request::builder().uri("/mcp");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).expect("valid request").into_parts().0
    }

    #[test]
    fn guard_rules() {
        let o = HttpOptions::default();
        assert!(allowed(&o, &parts(&[("host", "127.0.0.1:9")])));
        assert!(allowed(
            &o,
            &parts(&[("host", "localhost:9"), ("origin", "http://localhost:3000")])
        ));
        assert!(!allowed(&o, &parts(&[])));
        assert!(!allowed(&o, &parts(&[("host", "evil.example.com")])));
        assert!(!allowed(
            &o,
            &parts(&[("host", "localhost"), ("origin", "http://evil.example.com")])
        ));
        assert!(!allowed(
            &o,
            &parts(&[("host", "localhost"), ("origin", "null")])
        ));
        assert!(!allowed(
            &o,
            &parts(&[("host", "localhost"), ("host", "localhost")])
        ));
        let wide = HttpOptions::default()
            .allowed_hosts(["MCP.Example.com"])
            .allowed_origins(["https://app.example.com"]);
        assert!(allowed(
            &wide,
            &parts(&[
                ("host", "mcp.example.com:443"),
                ("origin", "https://APP.example.com")
            ])
        ));
        let open = HttpOptions::default().allow_request(|_, _, _| true);
        assert!(allowed(&open, &parts(&[("host", "evil.example.com")])));
    }
}
