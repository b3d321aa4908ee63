//! Streamable HTTP on hyper's client: one POST per message; a request's
//! answer is a JSON body or an event stream (its progress, the server's
//! requests, then its response), resumed by `GET` with `Last-Event-ID`
//! when the stream breaks first; the legacy `Mcp-Session-Id` and GET
//! stream; the 2026-07-28 routing headers.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode, Uri};
use serde::Deserialize;
use serde_json::Value;

use super::sse::{Event, Parser};
use super::{Inbound, Inbox, Link, Outgoing};
use crate::cancel::CancelToken;
use crate::client::error::ClientError;
use crate::http_client::{self, HttpClient};
use crate::protocol::RequestId;

const SESSION: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL: HeaderName = HeaderName::from_static("mcp-protocol-version");
const METHOD: HeaderName = HeaderName::from_static("mcp-method");
const NAME: HeaderName = HeaderName::from_static("mcp-name");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// Resumptions of one broken event stream before its request fails.
const MAX_RESUMES: u32 = 3;
/// The wait before resuming when the server named no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// What [`Http`] is built from.
#[derive(Debug, Clone)]
pub(crate) struct HttpConfig {
    pub(crate) url: Uri,
    /// Sent on every request (say `Authorization`), never `Mcp-*`.
    pub(crate) headers: HeaderMap,
    /// The largest JSON body or event the server may send.
    pub(crate) max_message: usize,
    /// Sends the OAuth token and answers the server's refusals.
    #[cfg(feature = "client-oauth")]
    pub(crate) oauth: Option<crate::client::oauth::OAuth>,
}

struct Shared {
    client: HttpClient<Full<Bytes>>,
    config: HttpConfig,
    session: Mutex<Option<HeaderValue>>,
    /// The legacy negotiated version, for the GET stream and DELETE.
    protocol: Mutex<Option<HeaderValue>>,
    inbox: Inbox,
    closed: CancelToken,
}

/// The Streamable HTTP link.
pub(crate) struct Http(Arc<Shared>);

impl Http {
    pub(crate) fn new(config: HttpConfig, inbox: Inbox) -> Self {
        let client = http_client::client();
        Self(Arc::new(Shared {
            client,
            config,
            session: Mutex::new(None),
            protocol: Mutex::new(None),
            inbox,
            closed: CancelToken::new(),
        }))
    }
}

impl Shared {
    fn session(&self) -> Option<HeaderValue> {
        self.session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A request to the endpoint with the headers every message carries.
    fn request(&self, method: Method, body: Bytes) -> hyper::http::request::Builder {
        let mut req = Request::builder()
            .method(method.clone())
            .uri(self.config.url.clone());
        if let Some(headers) = req.headers_mut() {
            for (name, value) in &self.config.headers {
                headers.append(name, value.clone());
            }
            if let Some(session) = self.session() {
                headers.insert(SESSION, session);
            }
            if !body.is_empty() {
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            }
            // A POST names its own revision; GET and DELETE the negotiated one.
            if method != Method::POST {
                let protocol = self
                    .protocol
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                if let Some(v) = protocol {
                    headers.insert(PROTOCOL, v);
                }
            }
        }
        req
    }

    fn post(&self, message: &mut Outgoing) -> Result<(Request<Full<Bytes>>, Bytes), ClientError> {
        let body = Bytes::from(std::mem::take(&mut message.body));
        let mut req = self.request(Method::POST, body.clone()).header(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        for (name, value) in &message.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ClientError::protocol(format!("header {name:?}: {e}")))?;
            if is_own_header(&name) {
                continue;
            }
            // This request's value replaces the connection's.
            let value = header_value(value)?;
            if let Some(headers) = req.headers_mut() {
                headers.insert(name, value);
            }
        }
        let version = message.protocol_version.as_deref();
        if let Some(version) = version {
            req = req.header(PROTOCOL, header_value(version)?);
        }
        // The 2026-07-28 routing headers, only on that revision: a legacy
        // request never carries them.
        if version.is_some_and(|v| crate::protocol::MODERN_PROTOCOL_VERSIONS.contains(&v)) {
            if let Some(method) = &message.method {
                req = req.header(METHOD, header_value(method)?);
            }
            if let Some(name) = &message.name {
                req = req.header(NAME, param_value(name)?);
            }
            for (name, value) in &message.param_headers {
                let name = HeaderName::from_bytes(format!("mcp-param-{name}").as_bytes())
                    .map_err(|e| ClientError::protocol(format!("header Mcp-Param-{name}: {e}")))?;
                req = req.header(name, param_value(value)?);
            }
        }
        let req = req
            .body(Full::new(body.clone()))
            .map_err(|e| ClientError::transport(format!("building the request: {e}")))?;
        Ok((req, body))
    }

    /// Sends one request (`body` is its body again, for a resend): as it
    /// is, or with OAuth's token, answering a refusal with the flow when
    /// `recover` (not for the closing DELETE).
    async fn call(
        &self,
        req: Request<Full<Bytes>>,
        body: Bytes,
        recover: bool,
    ) -> Result<Response<Incoming>, ClientError> {
        let client = self
            .client
            .as_ref()
            .map_err(|e| ClientError::transport(e.clone()))?;
        #[cfg(feature = "client-oauth")]
        if let Some(oauth) = &self.config.oauth {
            return crate::client::oauth::link::send(
                client,
                oauth,
                &self.config.url,
                req,
                body,
                recover,
            )
            .await;
        }
        let _ = (body, recover);
        let method = req.method().clone();
        client.request(req).await.map_err(|e| {
            ClientError::transport(format!("{method} failed: {}", http_client::describe(&e)))
        })
    }

    fn remember_session(&self, response: &Response<Incoming>) {
        if let Some(id) = response.headers().get(&SESSION) {
            *self.session.lock().unwrap_or_else(PoisonError::into_inner) = Some(id.clone());
        }
    }

    fn deliver(&self, item: Inbound) {
        self.inbox.deliver(item);
    }

    /// Sends a request and pumps its answer into the inbox; reports a lost
    /// answer as the request's failure.
    async fn exchange(self: Arc<Self>, req: Request<Full<Bytes>>, body: Bytes, id: RequestId) {
        let outcome = match self.call(req, body, true).await {
            Ok(response) => self.answer(response, &id).await,
            Err(e) => Err(e),
        };
        if let Err(e) = outcome {
            self.deliver(Inbound::Failed(id, e));
        }
    }

    /// Reads one POST's response for request `id`.
    async fn answer(
        &self,
        response: Response<Incoming>,
        id: &RequestId,
    ) -> Result<(), ClientError> {
        self.remember_session(&response);
        let status = response.status();
        if status == StatusCode::ACCEPTED {
            // Answered later on the session's GET stream.
            return Ok(());
        }
        if is_event_stream(response.headers()) && status.is_success() {
            return self.stream(response.into_body(), id).await;
        }
        let challenge = response
            .headers()
            .get(hyper::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = read_bounded(response.into_body(), self.config.max_message).await?;
        // A JSON-RPC reply (a refusal before routing may carry a null id:
        // the dispatcher takes it as this request's, see `related`).
        let probe = serde_json::from_slice::<Probe>(&body);
        let is_reply =
            body.trim_ascii_start().first() == Some(&b'[') || probe.as_ref().is_ok_and(|p| p.error);
        match probe {
            Ok(_) if status.is_success() || is_reply => {
                self.deliver(Inbound::Message(body, Some(id.clone())));
                Ok(())
            }
            _ if status == StatusCode::NOT_FOUND && self.session().is_some() => Err(
                ClientError::transport("HTTP 404: the session is unknown or expired"),
            ),
            _ if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN => {
                Err(ClientError::transport(format!(
                    "HTTP {status} (the server wants authorization{}){}",
                    challenge.map(|c| format!(": {c}")).unwrap_or_default(),
                    snippet(&body)
                )))
            }
            _ => Err(ClientError::transport(format!(
                "HTTP {status}{}",
                snippet(&body)
            ))),
        }
    }

    /// Pumps an event stream; resumes it with `Last-Event-ID` (after the
    /// server's `retry`) if it ends before the response to `id`.
    async fn stream(&self, body: Incoming, id: &RequestId) -> Result<(), ClientError> {
        let mut cursor = Cursor::default();
        let mut body = body;
        let mut resumes = 0;
        loop {
            if self.pump(body, id, &mut cursor).await? {
                return Ok(());
            }
            let Some(last) = cursor.last_id.clone() else {
                return Err(ClientError::transport(
                    "the event stream ended before the response (and cannot be resumed: no event id)",
                ));
            };
            resumes += 1;
            if resumes > MAX_RESUMES {
                return Err(ClientError::transport(format!(
                    "the event stream broke {MAX_RESUMES} times before the response"
                )));
            }
            tokio::time::sleep(cursor.retry.unwrap_or(DEFAULT_RETRY)).await;
            body = self.resume(&last).await?;
        }
    }

    /// A GET resuming a stream after `last`.
    async fn resume(&self, last: &str) -> Result<Incoming, ClientError> {
        let req = self
            .request(Method::GET, Bytes::new())
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
            .header(LAST_EVENT_ID, header_value(last)?)
            .body(Full::new(Bytes::new()))
            .map_err(|e| ClientError::transport(format!("building the request: {e}")))?;
        let response = self.call(req, Bytes::new(), true).await?;
        if !response.status().is_success() || !is_event_stream(response.headers()) {
            return Err(ClientError::transport(format!(
                "resuming the event stream: HTTP {}",
                response.status()
            )));
        }
        Ok(response.into_body())
    }

    /// Delivers a stream's events; `true` once the response to `id` (if
    /// any) was among them.
    async fn pump(
        &self,
        mut body: Incoming,
        id: &RequestId,
        cursor: &mut Cursor,
    ) -> Result<bool, ClientError> {
        let mut parser = Parser::new(self.config.max_message);
        let mut events = Vec::new();
        loop {
            let frame = match body.frame().await {
                None => return Ok(false),
                // A reset mid-stream is resumable like an end.
                Some(Err(_)) => return Ok(false),
                Some(Ok(frame)) => frame,
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            parser
                .feed(&data, &mut events)
                .map_err(ClientError::protocol)?;
            for event in events.drain(..) {
                if self.event(event, id, cursor).await {
                    return Ok(true);
                }
            }
        }
    }

    /// Delivers one event; `true` when it is the response to `id`.
    async fn event(&self, event: Event, id: &RequestId, cursor: &mut Cursor) -> bool {
        if let Some(retry) = event.retry {
            cursor.retry = Some(Duration::from_millis(retry));
        }
        if event.id.is_some() {
            cursor.last_id = event.id;
        }
        if event.data.trim().is_empty() {
            return false;
        }
        // The GET stream's messages belong to no request.
        let related = (!matches!(id, RequestId::String(s) if s.is_empty())).then(|| id.clone());
        let ours = related.is_some();
        self.deliver(Inbound::Message(event.data.into_bytes(), related));
        // Delivering settles the request when this was its response (or a
        // refusal that answers it): the stream is then done.
        ours && !self.inbox.waiting(id)
    }

    /// The legacy GET stream: server messages outside any request, kept
    /// open (resumed) until the link closes or the server refuses it.
    async fn listen(self: Arc<Self>) {
        let mut cursor = Cursor::default();
        let never = RequestId::String(String::new());
        let mut failures = 0;
        while !self.closed.is_cancelled() && failures < 5 {
            let mut req = self
                .request(Method::GET, Bytes::new())
                .header(ACCEPT, HeaderValue::from_static("text/event-stream"));
            if let Some(last) = cursor.last_id.as_deref().and_then(|v| header_value(v).ok()) {
                req = req.header(LAST_EVENT_ID, last);
            }
            let Ok(req) = req.body(Full::new(Bytes::new())) else {
                return;
            };
            match self.call(req, Bytes::new(), true).await {
                Ok(r) if r.status().is_success() && is_event_stream(r.headers()) => {
                    failures = 0;
                    tokio::select! {
                        _ = self.pump(r.into_body(), &never, &mut cursor) => {}
                        () = self.closed.cancelled() => return,
                    }
                }
                // 405: the server offers no GET stream; any other refusal
                // is final too.
                Ok(_) => return,
                Err(_) => failures += 1,
            }
            tokio::time::sleep(cursor.retry.unwrap_or(DEFAULT_RETRY)).await;
        }
    }
}

/// Where a stream is, for resuming it.
#[derive(Debug, Default)]
struct Cursor {
    last_id: Option<String>,
    retry: Option<Duration>,
}

/// Headers only the client itself sets: the MCP ones, `Last-Event-ID`,
/// and those that describe this hop rather than the request.
pub(crate) fn is_own_header(name: &HeaderName) -> bool {
    let name = name.as_str();
    name.starts_with("mcp-")
        || matches!(
            name,
            "last-event-id"
                | "host"
                | "content-length"
                | "content-type"
                | "accept"
                | "connection"
                | "transfer-encoding"
                | "te"
                | "upgrade"
                | "keep-alive"
                | "proxy-authorization"
        )
}

/// What the link reads of a JSON reply: whether it is an error.
#[derive(serde::Deserialize)]
struct Probe {
    /// True for a JSON-RPC error object (an OAuth error body has a string).
    #[serde(default, deserialize_with = "error_object")]
    error: bool,
}

fn error_object<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Value::deserialize(d).map(|v| v.is_object())
}

fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("text/event-stream"))
        })
}

async fn read_bounded(mut body: Incoming, max: usize) -> Result<Vec<u8>, ClientError> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ClientError::transport(format!("reading the body: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > max {
                return Err(ClientError::transport(format!(
                    "the server's response exceeds {max} bytes"
                )));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// The start of a body, for an error message.
fn snippet(body: &[u8]) -> String {
    if body.is_empty() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    format!(": {}", text.trim())
}

fn header_value(value: &str) -> Result<HeaderValue, ClientError> {
    HeaderValue::from_str(value)
        .map_err(|_| ClientError::protocol(format!("{value:?} cannot be sent as a header")))
}

/// A routing header's value: as is when it is visible ASCII without edge
/// whitespace, otherwise `=?base64?…?=` of its UTF-8.
pub(crate) fn encode_param(value: &str) -> String {
    let plain = value.bytes().all(|b| b == b' ' || b.is_ascii_graphic())
        && !value.starts_with(' ')
        && !value.ends_with(' ');
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            crate::protocol::base64::encode(value.as_bytes())
        )
    }
}

fn param_value(value: &str) -> Result<HeaderValue, ClientError> {
    header_value(&encode_param(value))
}

impl Drop for Http {
    /// A client dropped without `close` stops its GET stream and requests.
    fn drop(&mut self) {
        self.0.closed.cancel();
    }
}

#[async_trait::async_trait]
impl Link for Http {
    fn routes(&self) -> bool {
        true
    }

    async fn send(&self, mut message: Outgoing) -> Result<(), ClientError> {
        if self.0.closed.is_cancelled() {
            return Err(ClientError::Closed);
        }
        if let Some(v) = &message.protocol_version {
            if !crate::protocol::MODERN_PROTOCOL_VERSIONS.contains(&&**v) {
                if let Ok(v) = header_value(v) {
                    *self
                        .0
                        .protocol
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Some(v);
                }
            }
        }
        let (req, body) = self.0.post(&mut message)?;
        let Some(id) = message.id.clone() else {
            // A notification or a response: 202, nothing to deliver.
            let response = self.0.call(req, body, true).await?;
            let status = response.status();
            let body = read_bounded(response.into_body(), self.0.config.max_message).await?;
            if !status.is_success() {
                return Err(ClientError::transport(format!(
                    "HTTP {status}{}",
                    snippet(&body)
                )));
            }
            return Ok(());
        };
        let shared = Arc::clone(&self.0);
        let abandon = message.abandon.take().unwrap_or_default();
        let closed = self.0.closed.clone();
        // Abandoning a request drops its connection: the server sees the
        // disconnect (the 2026-07-28 way to cancel over HTTP).
        tokio::spawn(async move {
            tokio::select! {
                () = shared.exchange(req, body, id) => {}
                () = abandon.cancelled() => {}
                () = closed.cancelled() => {}
            }
        });
        Ok(())
    }

    async fn initialized(&self) {
        tokio::spawn(Arc::clone(&self.0).listen());
    }

    async fn close(&self) {
        self.0.closed.cancel();
        if self.0.session().is_some() {
            let req = self.0.request(Method::DELETE, Bytes::new());
            if let Ok(req) = req.body(Full::new(Bytes::new())) {
                let _ = tokio::time::timeout(
                    Duration::from_secs(2),
                    self.0.call(req, Bytes::new(), false),
                )
                .await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::encode_param;

    #[test]
    fn unsafe_values_are_base64_wrapped() {
        assert_eq!(encode_param("us-east1"), "us-east1");
        assert_eq!(encode_param("a b"), "a b");
        assert_eq!(encode_param(""), "");
        assert_eq!(encode_param(" x"), "=?base64?IHg=?=");
        assert_eq!(encode_param("x "), "=?base64?eCA=?=");
        assert_eq!(encode_param("\tx"), "=?base64?CXg=?=");
        assert_eq!(encode_param("é"), "=?base64?w6k=?=");
        assert_eq!(encode_param("a\r\nb"), "=?base64?YQ0KYg==?=");
    }
}
