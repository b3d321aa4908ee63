//! The HTTP requests of the OAuth flow (metadata, registration, token,
//! the headless authorization step): one hyper client, every body read
//! bounded in bytes before it is parsed, redirects never followed, each
//! exchange under a timeout.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION};
use hyper::{Method, Request, StatusCode};
use serde::de::DeserializeOwned;

use crate::client::ClientError;
use crate::http_client::{self, HttpClient};

/// An HTTP answer: status, `Location`, and the body (bounded).
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) location: Option<String>,
    /// A `DPoP-Nonce` the server sent.
    pub(crate) dpop_nonce: Option<String>,
    pub(crate) body: Vec<u8>,
}

impl Answer {
    /// The body as JSON of type `T`, naming `what` on failure.
    pub(crate) fn json<T: DeserializeOwned>(&self, what: &str) -> Result<T, ClientError> {
        serde_json::from_slice(&self.body)
            .map_err(|e| ClientError::Authorization(format!("{what}: not the expected JSON ({e})")))
    }

    /// The OAuth `error` code of a refusal, if it has one.
    pub(crate) fn error_code(&self) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct Refusal {
            error: String,
        }
        serde_json::from_slice::<Refusal>(&self.body)
            .ok()
            .map(|r| r.error)
    }

    /// The OAuth `error` (and description) of a refusal, for a message.
    pub(crate) fn oauth_error(&self) -> String {
        #[derive(serde::Deserialize)]
        struct Refusal {
            error: String,
            #[serde(default)]
            error_description: Option<String>,
        }
        match serde_json::from_slice::<Refusal>(&self.body) {
            Ok(r) => match r.error_description {
                Some(d) => format!("HTTP {}: {} ({d})", self.status, r.error),
                None => format!("HTTP {}: {}", self.status, r.error),
            },
            Err(_) => format!("HTTP {}", self.status),
        }
    }
}

/// A request body and how it is encoded.
pub(crate) enum Body {
    /// No body (GET).
    None,
    /// `application/x-www-form-urlencoded`.
    Form(String),
    /// `application/json`.
    Json(Vec<u8>),
}

/// The flow's HTTP client.
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: HttpClient<Full<Bytes>>,
    /// The largest body accepted from an authorization or resource server.
    pub(crate) max_bytes: usize,
    timeout: Duration,
}

impl Fetcher {
    pub(crate) fn new(max_bytes: usize, timeout: Duration) -> Self {
        Self {
            client: http_client::client(),
            max_bytes,
            timeout,
        }
    }

    /// A GET of a JSON document.
    pub(crate) async fn get(&self, url: &str) -> Result<Answer, ClientError> {
        self.send(Method::GET, url, Body::None, None).await
    }

    /// One exchange: `method` to `url` with `body` and, when given, an
    /// `Authorization` header value.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &str,
        body: Body,
        authorization: Option<&str>,
    ) -> Result<Answer, ClientError> {
        self.send_with(method, url, body, authorization, None).await
    }

    /// [`Fetcher::send`], with a `DPoP` proof header when given.
    pub(crate) async fn send_with(
        &self,
        method: Method,
        url: &str,
        body: Body,
        authorization: Option<&str>,
        dpop: Option<&str>,
    ) -> Result<Answer, ClientError> {
        let uri = super::urls::parse(url)?;
        http_client::check_scheme(uri.scheme_str())
            .map_err(|e| ClientError::Authorization(format!("{url}: {e}")))?;
        let mut req = Request::builder()
            .method(method.clone())
            .uri(uri)
            .header(ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(a) = authorization {
            let value = HeaderValue::from_str(a)
                .map_err(|_| ClientError::Authorization("credentials unfit for a header".into()))?;
            req = req.header(AUTHORIZATION, value);
        }
        if let Some(proof) = dpop {
            let value = HeaderValue::from_str(proof).map_err(|_| {
                ClientError::Authorization("a DPoP proof unfit for a header".into())
            })?;
            req = req.header("dpop", value);
        }
        let bytes = match body {
            Body::None => Bytes::new(),
            Body::Form(form) => {
                req = req.header(
                    CONTENT_TYPE,
                    HeaderValue::from_static("application/x-www-form-urlencoded"),
                );
                Bytes::from(form)
            }
            Body::Json(json) => {
                req = req.header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                Bytes::from(json)
            }
        };
        let req = req
            .body(Full::new(bytes))
            .map_err(|e| ClientError::Authorization(format!("building a request to {url}: {e}")))?;
        let exchange = async {
            let client = self
                .client
                .as_ref()
                .map_err(|e| ClientError::Authorization(format!("{method} {url} failed: {e}")))?;
            let response = client.request(req).await.map_err(|e| {
                ClientError::Authorization(format!(
                    "{method} {url} failed: {}",
                    http_client::describe(&e)
                ))
            })?;
            let status = response.status();
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let dpop_nonce = response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body = read_bounded(response.into_body(), self.max_bytes, url).await?;
            Ok(Answer {
                status,
                location,
                dpop_nonce,
                body,
            })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| ClientError::Authorization(format!("{method} {url}: no answer in time")))?
    }
}

/// Reads `body`, refusing it once it passes `max` bytes (before buffering more).
async fn read_bounded(
    mut body: hyper::body::Incoming,
    max: usize,
    url: &str,
) -> Result<Vec<u8>, ClientError> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ClientError::Authorization(format!("reading {url}: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > max {
                return Err(ClientError::Authorization(format!(
                    "the answer of {url} exceeds {max} bytes"
                )));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}
