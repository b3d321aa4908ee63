//! What the HTTP link does with OAuth: every request goes out with the
//! current token (never a caller's `Authorization`), and a `401` or a
//! `403 insufficient_scope` is answered by the flow and the request sent
//! again, a bounded number of times.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client as HyperClient;

use super::challenge::Challenge;
use super::OAuth;
use crate::client::ClientError;

/// Sends `req` (whose body is `body`) to `endpoint` with the token; on a
/// refusal the flow runs and the request goes again, unless `recover` is
/// false (the closing DELETE).
pub(crate) async fn send(
    client: &HyperClient<HttpConnector, Full<Bytes>>,
    oauth: &OAuth,
    endpoint: &Uri,
    req: Request<Full<Bytes>>,
    body: Bytes,
    recover: bool,
) -> Result<Response<Incoming>, ClientError> {
    let method = req.method().clone();
    let uri = req.uri().clone();
    let version = req.version();
    let mut headers = req.headers().clone();
    headers.remove(AUTHORIZATION);
    drop(req);
    let mut attempt = 0;
    loop {
        let bearer = oauth.bearer(endpoint).await?;
        let mut next = Request::new(Full::new(body.clone()));
        *next.method_mut() = method.clone();
        *next.uri_mut() = uri.clone();
        *next.version_mut() = version;
        *next.headers_mut() = headers.clone();
        if let Some(b) = &bearer {
            next.headers_mut().insert(AUTHORIZATION, b.clone());
        }
        let response = client
            .request(next)
            .await
            .map_err(|e| ClientError::transport(format!("{method} failed: {e}")))?;
        let status = response.status();
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let refused = status == StatusCode::UNAUTHORIZED
            || (status == StatusCode::FORBIDDEN
                && Challenge::parse(challenge.as_deref()).insufficient_scope());
        if !refused || !recover {
            return Ok(response);
        }
        drop(response);
        oauth
            .recover(
                endpoint,
                status,
                challenge.as_deref(),
                bearer.as_ref(),
                attempt,
            )
            .await?;
        attempt += 1;
    }
}
