//! The resource server's own HTTP client: GETs of authorization-server
//! metadata and JWKS, POSTs to an introspection endpoint. Bodies are
//! bounded in bytes and every exchange in time; `https://` through the
//! crate's one TLS connector ([`crate::tls`]), or `http://`.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{HeaderMap, Method, Request, Uri};
use serde_json::Value;

use crate::http_client::{self, HttpClient};

/// Largest metadata, JWKS or introspection answer read (256 KiB).
const MAX_ANSWER_BYTES: usize = 256 * 1024;
/// How long one exchange may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A small JSON-over-HTTP client (cheap to clone).
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: HttpClient<Full<Bytes>>,
}

impl Default for Fetcher {
    fn default() -> Self {
        Self {
            client: http_client::client(),
        }
    }
}

impl Fetcher {
    /// GETs `url` and parses its JSON answer (a non-2xx status is an error).
    pub(crate) async fn get_json(&self, url: &str) -> Result<Value, String> {
        Ok(self.get_json_max_age(url).await?.0)
    }

    /// GETs `url` and parses its JSON answer, with how long the answer
    /// says it may be reused (`Cache-Control`, see [`max_age`]).
    pub(crate) async fn get_json_max_age(
        &self,
        url: &str,
    ) -> Result<(Value, Option<Duration>), String> {
        let request = Request::builder()
            .method(Method::GET)
            .uri(parse(url)?)
            .header(ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| format!("{url}: {e}"))?;
        let (value, headers) = self.exchange(url, request).await?;
        Ok((value, max_age(&headers)))
    }

    /// POSTs a form to `url` with an `Authorization` value, and parses the
    /// JSON answer.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        form: String,
        authorization: Option<HeaderValue>,
    ) -> Result<Value, String> {
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(parse(url)?)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(value) = authorization {
            builder = builder.header(AUTHORIZATION, value);
        }
        let request = builder
            .body(Full::new(Bytes::from(form)))
            .map_err(|e| format!("{url}: {e}"))?;
        Ok(self.exchange(url, request).await?.0)
    }

    async fn exchange(
        &self,
        url: &str,
        request: Request<Full<Bytes>>,
    ) -> Result<(Value, HeaderMap), String> {
        let work = async {
            let client = self.client.as_ref().map_err(|e| format!("{url}: {e}"))?;
            let response = client
                .request(request)
                .await
                .map_err(|e| format!("{url}: {}", http_client::describe(&e)))?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| format!("{url}: reading the answer: {e}"))?
                .to_bytes();
            if !status.is_success() {
                return Err(format!("{url}: HTTP {status}"));
            }
            let value =
                serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))?;
            Ok((value, headers))
        };
        tokio::time::timeout(TIMEOUT, work)
            .await
            .map_err(|_| format!("{url}: no answer within {TIMEOUT:?}"))?
    }
}

/// How long an answer may be reused according to its `Cache-Control`
/// (RFC 9111 §5.2.2): `max-age=N` is N seconds, `no-store` and `no-cache`
/// are zero; `None` when it says neither (or the header does not parse).
pub(crate) fn max_age(headers: &HeaderMap) -> Option<Duration> {
    let mut age = None;
    for value in headers.get_all(CACHE_CONTROL) {
        let Ok(value) = value.to_str() else {
            continue;
        };
        for directive in value.split(',') {
            let directive = directive.trim();
            let (name, arg) = match directive.split_once('=') {
                Some((name, arg)) => (name.trim(), Some(arg.trim().trim_matches('"'))),
                None => (directive, None),
            };
            if name.eq_ignore_ascii_case("no-store") || name.eq_ignore_ascii_case("no-cache") {
                return Some(Duration::ZERO);
            }
            if name.eq_ignore_ascii_case("max-age") {
                // A number too large to hold is "a very long time" (§1.2.2).
                let seconds =
                    arg.filter(|a| !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()));
                if let Some(seconds) = seconds {
                    age = Some(Duration::from_secs(seconds.parse().unwrap_or(u64::MAX)));
                }
            }
        }
    }
    age
}

fn parse(url: &str) -> Result<Uri, String> {
    let uri: Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    http_client::check_scheme(uri.scheme_str()).map_err(|e| format!("{url}: {e}"))?;
    Ok(uri)
}

/// `application/x-www-form-urlencoded` encoding of one value.
pub(crate) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(CACHE_CONTROL, HeaderValue::from_str(v).expect("header"));
        }
        map
    }

    #[test]
    fn cache_control_max_age_is_read() {
        let secs = |v: &[&str]| max_age(&headers(v)).map(|d| d.as_secs());
        assert_eq!(secs(&[]), None);
        assert_eq!(secs(&["public, max-age=3600"]), Some(3600));
        assert_eq!(secs(&["Max-Age=\"60\""]), Some(60));
        assert_eq!(secs(&["max-age=60", "no-cache"]), Some(0));
        assert_eq!(secs(&["no-store"]), Some(0));
        assert_eq!(secs(&["max-age=-5"]), None);
        assert_eq!(secs(&["max-age=99999999999999999999999"]), Some(u64::MAX));
    }
}
