//! What the HTTP link does with OAuth: every request goes out with the
//! current token (never a caller's `Authorization`), and a `401` or a
//! `403 insufficient_scope` is answered by the flow and the request sent
//! again, a bounded number of times.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::Client as HyperClient;

use super::challenge::Challenge;

const DPOP: hyper::header::HeaderName = hyper::header::HeaderName::from_static("dpop");
const DPOP_NONCE: hyper::header::HeaderName = hyper::header::HeaderName::from_static("dpop-nonce");
use super::OAuth;
use crate::client::ClientError;

/// Sends `req` (whose body is `body`) to `endpoint` with the token; on a
/// refusal the flow runs and the request goes again, unless `recover` is
/// false (the closing DELETE).
pub(crate) async fn send(
    client: &HyperClient<crate::http_client::Connector, Full<Bytes>>,
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
    let mut nonce_retried = false;
    loop {
        let credentials = oauth.authorization(endpoint, &method).await?;
        let mut next = Request::new(Full::new(body.clone()));
        *next.method_mut() = method.clone();
        *next.uri_mut() = uri.clone();
        *next.version_mut() = version;
        *next.headers_mut() = headers.clone();
        let bearer = credentials.as_ref().map(|(a, _)| a.clone());
        if let Some((authorization, proof)) = credentials {
            next.headers_mut().insert(AUTHORIZATION, authorization);
            if let Some(proof) = proof {
                next.headers_mut().insert(DPOP, proof);
            }
        }
        let response = client.request(next).await.map_err(|e| {
            ClientError::transport(format!(
                "{method} failed: {}",
                crate::http_client::describe(&e)
            ))
        })?;
        let status = response.status();
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let parsed = Challenge::parse(challenge.as_deref());
        let fresh_nonce = response
            .headers()
            .get(DPOP_NONCE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|n| oauth.resource_nonce(n));
        // RFC 9449 §9: a proof without the server's nonce, retried once with it.
        if status == StatusCode::UNAUTHORIZED
            && parsed.error.as_deref() == Some("use_dpop_nonce")
            && fresh_nonce
            && !nonce_retried
        {
            nonce_retried = true;
            continue;
        }
        let refused = status == StatusCode::UNAUTHORIZED
            || (status == StatusCode::FORBIDDEN && parsed.insufficient_scope());
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
