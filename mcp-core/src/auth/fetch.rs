//! The resource server's own HTTP client: GETs of authorization-server
//! metadata and JWKS, POSTs to an introspection endpoint. Bodies are
//! bounded in bytes and every exchange in time; `https://` through the
//! crate's one TLS connector ([`crate::tls`]), or `http://`.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use hyper::{Method, Request, Uri};
use serde_json::Value;

use crate::outbound::{self, Outbound};

/// Largest metadata, JWKS or introspection answer read (256 KiB).
const MAX_ANSWER_BYTES: usize = 256 * 1024;
/// How long one exchange may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A small JSON-over-HTTP client (cheap to clone).
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: Outbound<Full<Bytes>>,
}

impl Default for Fetcher {
    fn default() -> Self {
        Self {
            client: outbound::client(),
        }
    }
}

impl Fetcher {
    /// GETs `url` and parses its JSON answer (a non-2xx status is an error).
    pub(crate) async fn get_json(&self, url: &str) -> Result<Value, String> {
        let request = Request::builder()
            .method(Method::GET)
            .uri(parse(url)?)
            .header(ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| format!("{url}: {e}"))?;
        self.exchange(url, request).await
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
        self.exchange(url, request).await
    }

    async fn exchange(&self, url: &str, request: Request<Full<Bytes>>) -> Result<Value, String> {
        let work = async {
            let client = self.client.as_ref().map_err(|e| format!("{url}: {e}"))?;
            let response = client
                .request(request)
                .await
                .map_err(|e| format!("{url}: {}", outbound::describe(&e)))?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| format!("{url}: reading the answer: {e}"))?
                .to_bytes();
            if !status.is_success() {
                return Err(format!("{url}: HTTP {status}"));
            }
            serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))
        };
        tokio::time::timeout(TIMEOUT, work)
            .await
            .map_err(|_| format!("{url}: no answer within {TIMEOUT:?}"))?
    }
}

fn parse(url: &str) -> Result<Uri, String> {
    let uri: Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    outbound::check_scheme(uri.scheme_str()).map_err(|e| format!("{url}: {e}"))?;
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
