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
use crate::context::{scope_challenge, scopes_allowed, Extensions};
use crate::server::Frame;

impl McpHttpService {
    /// `Err` is the `403` for the first request of `payload` (every entry
    /// of a batch is checked) whose caller lacks a needed scope.
    pub(super) fn check_scopes(
        &self,
        parts: &Parts,
        payload: &Frame,
    ) -> Result<(), Response<McpBody>> {
        let ext = parts.extensions.get::<Extensions>();
        match payload.batch() {
            Some(items) => items.iter().try_for_each(|item| {
                let params = item.get("params").and_then(Value::as_object);
                self.check_one(
                    ext,
                    item.get("method").and_then(Value::as_str),
                    &|key| params.and_then(|p| p.get(key)).and_then(Value::as_str),
                    item.get("id").cloned().unwrap_or(Value::Null),
                )
            }),
            None if payload.is_request() => self.check_one(
                ext,
                payload.method(),
                &|key| payload.param_str(key),
                payload.id_value(),
            ),
            None => Ok(()),
        }
    }

    /// [`check_scopes`](Self::check_scopes) for one request (`field` reads
    /// its params' string members).
    fn check_one<'a>(
        &self,
        ext: Option<&Extensions>,
        method: Option<&str>,
        field: &dyn Fn(&str) -> Option<&'a str>,
        id: Value,
    ) -> Result<(), Response<McpBody>> {
        let Some(method) = method else {
            return Ok(());
        };
        let Some(needed) = self.shared.server.scopes_needed(method, field) else {
            return Ok(());
        };
        if ext.is_some_and(|e| scopes_allowed(e, &needed)) {
            return Ok(());
        }
        let what = crate::server::scoped_subject(method, field);
        Err(self.forbidden(&what, &needed, id))
    }

    fn forbidden(&self, what: &str, needed: &[String], id: Value) -> Response<McpBody> {
        #[cfg(feature = "auth")]
        let metadata = self
            .shared
            .options
            .resource_server
            .as_ref()
            .map(|rs| rs.metadata_url().to_owned());
        #[cfg(not(feature = "auth"))]
        let metadata: Option<String> = None;
        let error = crate::server::insufficient_scope(what, needed);
        let mut r = json_response(StatusCode::FORBIDDEN, &crate::protocol::fail(id, &error));
        if let Ok(v) = HeaderValue::from_str(&scope_challenge(needed, metadata.as_deref())) {
            r.headers_mut().insert(WWW_AUTHENTICATE, v);
        }
        r
    }
}
