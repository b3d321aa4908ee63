//! The scope check of a POSTed request, on its parsed body and before it
//! is dispatched: a call whose caller lacks a scope the tool, resource or
//! prompt needs is answered `403` with an `insufficient_scope` challenge
//! (so a client can step up), never a `200` carrying an error.

// A refused request is answered with its ready `Response`; it is built once
// per request, so its size in a `Result` does not matter.
#![allow(clippy::result_large_err)]

use hyper::header::{HeaderValue, WWW_AUTHENTICATE};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use serde_json::Value;

use super::respond::json_response;
use super::service::McpHttpService;
use super::sse::McpBody;
use crate::context::{scope_challenge, Extensions};
use crate::server::{Frame, ScopeDenied};

impl McpHttpService {
    /// `Err` is the `403` for the first request of `payload` (every entry
    /// of a batch is checked) whose caller lacks a scope of an item it
    /// names (the same check as the dispatcher's, see
    /// `McpServer::check_named_scopes`).
    pub(super) fn check_scopes(
        &self,
        parts: &Parts,
        payload: &Frame,
    ) -> Result<(), Response<McpBody>> {
        let ext = parts.extensions.get::<Extensions>();
        let server = &self.shared.server;
        let refuse = |denied: ScopeDenied, id: Value| self.forbidden(&denied, id);
        match payload.batch() {
            Some(items) => items.iter().try_for_each(|item| {
                let Some(method) = item.get("method").and_then(Value::as_str) else {
                    return Ok(());
                };
                let params = item.get("params").and_then(Value::as_object);
                server
                    .check_scopes_of(method, params, None, ext)
                    .map_err(|d| refuse(d, item.get("id").cloned().unwrap_or(Value::Null)))
            }),
            None if payload.is_request() => {
                let Some(method) = payload.method() else {
                    return Ok(());
                };
                server
                    .check_scopes_of(method, payload.params(), payload.param_str("name"), ext)
                    .map_err(|d| refuse(d, payload.id_value()))
            }
            None => Ok(()),
        }
    }

    fn forbidden(&self, denied: &ScopeDenied, id: Value) -> Response<McpBody> {
        #[cfg(feature = "auth")]
        let metadata = self
            .shared
            .options
            .resource_server
            .as_ref()
            .map(|rs| rs.metadata_url().to_owned());
        #[cfg(not(feature = "auth"))]
        let metadata: Option<String> = None;
        let (error, needed) = (denied.error(), &denied.needed);
        let mut r = json_response(StatusCode::FORBIDDEN, &crate::protocol::fail(id, &error));
        if let Ok(v) = HeaderValue::from_str(&scope_challenge(needed, metadata.as_deref())) {
            r.headers_mut().insert(WWW_AUTHENTICATE, v);
        }
        r
    }
}
