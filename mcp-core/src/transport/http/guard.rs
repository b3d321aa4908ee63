//! The `Host`/`Origin` guard (anti-DNS-rebinding, anti-CSRF), checked before routing.

use std::borrow::Cow;
use std::net::IpAddr;

use std::sync::{Arc, OnceLock};

use hyper::header::{HeaderValue, HOST, ORIGIN};
use hyper::http::request::Parts;

use super::options::HttpOptions;

/// The accepted hosts and origins of [`HttpOptions`], normalized once when
/// the service is built, so that a request compares against them as they
/// are instead of re-reading every configured entry.
#[derive(Debug, Default)]
pub(crate) struct Guard {
    /// [`HttpOptions::allowed_hosts`] as host names ([`hostname_of`]);
    /// an entry that names no host is left out (it never matched).
    hosts: Vec<String>,
    /// [`HttpOptions::allowed_origins`] trimmed, without trailing `/`,
    /// lower-cased.
    origins: Vec<String>,
}

/// The `Host` and `Origin` values, as sent, of the first request a
/// [`Guard`] accepted through one connection (see [`Guard::allows`]). The
/// verdict depends on those bytes and the guard alone, so a request with the
/// same ones gets the same answer.
///
/// Shared by the clones of one service handle (the verdict is the same for
/// all of them), and one pointer wide: a service handle is moved into every
/// request's future.
#[derive(Clone, Debug, Default)]
pub(crate) struct Seen(Arc<OnceLock<(HeaderValue, Option<HeaderValue>)>>);

impl Seen {
    fn matches(&self, host: &HeaderValue, origin: Option<&HeaderValue>) -> bool {
        self.0
            .get()
            .is_some_and(|(h, o)| h == host && o.as_ref() == origin)
    }

    fn remember(&self, host: &HeaderValue, origin: Option<&HeaderValue>) {
        let _ = self.0.set((host.clone(), origin.cloned()));
    }
}

impl Guard {
    /// The guard of `options` (their lists as they are now).
    pub(crate) fn new(options: &HttpOptions) -> Self {
        Self {
            hosts: options
                .allowed_hosts
                .iter()
                .filter_map(|h| hostname_of(h.trim()).map(Cow::into_owned))
                .collect(),
            origins: options
                .allowed_origins
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
                .collect(),
        }
    }

    /// True when the request may go on to authorization and routing.
    /// `seen` remembers the `Host` and `Origin` of a request accepted on the
    /// same connection: a later one sending the same bytes (every request
    /// of a well-behaved client) is accepted without parsing them again.
    pub(crate) fn allows(&self, options: &HttpOptions, parts: &Parts, seen: &Seen) -> bool {
        // The first value of a header, and whether it was repeated.
        let first = |name| {
            let mut values = parts.headers.get_all(name).iter();
            (values.next(), values.next().is_some())
        };
        let (origin, many_origins) = first(ORIGIN);
        let (host, many_hosts) = first(HOST);
        if let Some(check) = &options.allow_request {
            return check(origin.map(text), host.map(text), parts);
        }
        // Exactly one Host header (HTTP/1.1 requires it), naming an accepted
        // host, and at most one Origin.
        let (Some(host), false, false) = (host, many_hosts, many_origins) else {
            return false;
        };
        // An absolute-form request target carries its own authority; it
        // must pass too (and such requests are not remembered).
        let authority = parts.uri.authority();
        if authority.is_none() && seen.matches(host, origin) {
            return true;
        }
        let allowed = self.host_allowed(text(host))
            && authority.is_none_or(|a| self.host_allowed(a.as_str()))
            && origin.is_none_or(|o| self.origin_allowed(text(o)));
        if allowed && authority.is_none() {
            seen.remember(host, origin);
        }
        allowed
    }

    fn host_allowed(&self, host: &str) -> bool {
        let Some(name) = hostname_of(host) else {
            return false;
        };
        is_loopback_name(&name) || self.hosts.iter().any(|allowed| *allowed == name)
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        // Header values are visible ASCII (or the replacement character):
        // trimming ASCII white space is trimming all of it.
        let origin = origin.trim_ascii().trim_end_matches('/');
        if self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return true;
        }
        let Some((scheme, rest)) = origin.split_once("://") else {
            return false; // "null", garbage
        };
        if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
            return false;
        }
        if rest.contains(['/', '@', '?', '#']) {
            return false;
        }
        hostname_of(rest).is_some_and(|name| is_loopback_name(&name))
    }
}

/// A header value as text; invalid bytes read as a replacement character
/// (which no accepted host or origin contains).
fn text(value: &HeaderValue) -> &str {
    value.to_str().unwrap_or("\u{fffd}")
}

/// The lower-cased host name of a `Host` value or authority, without port
/// or brackets; `None` when malformed.
pub(crate) fn hostname_of(value: &str) -> Option<Cow<'_, str>> {
    let value = value.trim_ascii();
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
        let bytes = value.as_bytes();
        match bytes.iter().position(|&b| b == b':') {
            None => value,
            // One colon: `name:port`.
            Some(colon) if !bytes[colon + 1..].contains(&b':') => {
                if !valid_port(&value[colon + 1..]) {
                    return None;
                }
                &value[..colon]
            }
            // A bare IPv6 address (not valid in Host, but harmless to read).
            Some(_) => value,
        }
    };
    // Trailing dots (a fully qualified name) do not change the host.
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
    fn loopback_hosts_with_and_without_ports() {
        let g = Guard::default();
        for (host, expected) in [
            ("127.0.0.1", true),
            ("127.0.0.1:8080", true),
            ("localhost:", true),
            ("localhost:65535", true),
            ("localhost.:9", true),
            (" localhost:9\t", true),
            ("LOCALHOST:9", true),
            ("127.0.0.10:9", true),
            ("[::1]:9", true),
            ("localhost:65536", false),
            ("localhost:80x", false),
            ("localhost:9:9", false),
            ("127.0.0.1.evil.com", false),
            ("localhostevil.com", false),
            (":9", false),
        ] {
            assert_eq!(g.host_allowed(host), expected, "{host:?}");
        }
    }

    #[test]
    fn configured_lists_are_normalized_once() {
        let mut o = HttpOptions::default()
            .allowed_hosts([" MCP.Example.com.:443 ", "bad:x", ""])
            .allowed_origins([" https://App.Example.com/ "]);
        let g = Guard::new(&o);
        assert_eq!(g.hosts, ["mcp.example.com"]);
        assert_eq!(g.origins, ["https://app.example.com"]);
        assert!(g.host_allowed("mcp.example.com"));
        assert!(g.host_allowed("Mcp.Example.Com:8443"));
        assert!(!g.host_allowed("bad"));
        assert!(g.origin_allowed("HTTPS://app.example.COM"));
        assert!(!g.origin_allowed("https://app.example.com.evil"));
        // The lists are read when the guard is built.
        o.allowed_hosts.push("late.example.com".into());
        assert!(!g.host_allowed("late.example.com"));
        assert!(Guard::new(&o).host_allowed("late.example.com"));
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
        let allowed =
            |o: &HttpOptions, parts: &Parts| Guard::new(o).allows(o, parts, &Seen::default());
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

    #[test]
    fn a_connection_remembers_only_what_it_accepted() {
        let o = HttpOptions::default();
        let g = Guard::new(&o);
        let seen = Seen::default();
        let local = parts(&[("host", "127.0.0.1:9"), ("origin", "http://localhost:3")]);
        assert!(g.allows(&o, &local, &seen));
        assert!(seen.0.get().is_some(), "the accepted pair is remembered");
        // The same bytes pass again; anything else is judged afresh.
        assert!(g.allows(&o, &local, &seen));
        assert!(!g.allows(&o, &parts(&[("host", "evil.example.com")]), &seen));
        assert!(!g.allows(
            &o,
            &parts(&[
                ("host", "127.0.0.1:9"),
                ("origin", "http://evil.example.com")
            ]),
            &seen
        ));
        assert!(!g.allows(
            &o,
            &parts(&[("host", "127.0.0.1:9"), ("host", "127.0.0.1:9")]),
            &seen
        ));
        // A refused request is never remembered.
        let fresh = Seen::default();
        assert!(!g.allows(&o, &parts(&[("host", "evil.example.com")]), &fresh));
        assert!(fresh.0.get().is_none());
        // An absolute-form target is checked each time and not remembered.
        let absolute = hyper::Request::builder()
            .uri("http://evil.example.com/mcp")
            .header("host", "127.0.0.1:9")
            .body(())
            .expect("valid request")
            .into_parts()
            .0;
        let other = Seen::default();
        assert!(!g.allows(&o, &absolute, &other));
        assert!(!g.allows(&o, &absolute, &seen));
        assert!(other.0.get().is_none());
    }
}
