//! The resource-server gate of the endpoint (feature `auth`): Protected
//! Resource Metadata at its well-known paths, and the bearer token of every
//! request to the MCP path, verified before anything else reads the request.

use hyper::header::{
    HeaderValue, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS,
    ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_MAX_AGE, ALLOW, AUTHORIZATION, CACHE_CONTROL,
    RETRY_AFTER, WWW_AUTHENTICATE,
};
use hyper::http::request::Parts;
use hyper::{Method, Response, StatusCode};

use super::respond::{error_response, json_response};
use super::service::{McpHttpService, Principal};
use super::sse::McpBody;
use crate::auth::{Refusal, Rejection, ResourceServer};
use crate::context::Extensions;
use crate::protocol::ErrorCode;

impl McpHttpService {
    /// Verifies the token of a request to the MCP path and attaches its
    /// principal and [`AuthInfo`](crate::context::AuthInfo); `Some` is the answer
    /// when the request goes no further.
    pub(super) async fn oauth(
        &self,
        rs: &ResourceServer,
        parts: &mut Parts,
    ) -> Option<Response<McpBody>> {
        let endpoint = &self.shared.options.path;
        let path = parts.uri.path();
        if path != endpoint {
            return None;
        }
        match rs.authenticate(&parts.headers).await {
            Ok(info) => {
                // The token stops here: handlers, interceptors and anything
                // they call never see it (a handler that forwarded headers
                // upstream would otherwise pass it on).
                parts.headers.remove(AUTHORIZATION);
                parts
                    .extensions
                    .insert(Principal(Some(std::sync::Arc::clone(&info.principal))));
                let mut ext = parts.extensions.remove::<Extensions>().unwrap_or_default();
                ext.insert(info);
                parts.extensions.insert(ext);
                None
            }
            Err(Refusal::Missing) => Some(challenge(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: this server needs an OAuth bearer token (see the \
                 resource_metadata of the WWW-Authenticate header)",
                rs.challenge(None),
            )),
            Err(Refusal::Rejected(Rejection::InvalidToken(why))) => Some(challenge(
                StatusCode::UNAUTHORIZED,
                &format!("Unauthorized: invalid token: {why}"),
                rs.challenge(Some(&why)),
            )),
            Err(Refusal::Rejected(Rejection::InsufficientScope(scopes))) => Some(challenge(
                StatusCode::FORBIDDEN,
                &format!("Forbidden: the token lacks the scopes {}", scopes.join(" ")),
                rs.scope_challenge(&scopes),
            )),
            Err(Refusal::Rejected(Rejection::Unavailable(why))) => {
                tracing::warn!(target: "mcp_core::auth", "token verification unavailable: {why}");
                let mut r = error_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    ErrorCode::SERVER_BUSY,
                    "Service Unavailable: the token could not be verified now; retry later",
                );
                r.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("5"));
                Some(r)
            }
        }
    }

    /// The Protected Resource Metadata when `parts` asks for it. Asked
    /// before the Host/Origin guard: the document is public and the same
    /// for every caller, and browser-based clients read it from their own
    /// origin, so it is served to any origin (CORS `*`, with the OPTIONS
    /// preflight answered).
    pub(super) fn metadata_route(
        &self,
        rs: &ResourceServer,
        parts: &Parts,
    ) -> Option<Response<McpBody>> {
        if !rs.is_metadata_path(parts.uri.path(), &self.shared.options.path) {
            return None;
        }
        let mut r = if parts.method == Method::OPTIONS {
            let mut r = Response::new(McpBody::empty());
            *r.status_mut() = StatusCode::NO_CONTENT;
            let h = r.headers_mut();
            h.insert(
                ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("GET, HEAD, OPTIONS"),
            );
            // No credentials are involved, so `*` is honoured for headers
            // too (say the MCP-Protocol-Version a client sends).
            h.insert(ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("*"));
            h.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
            r
        } else {
            self.metadata(rs, &parts.method)
        };
        r.headers_mut()
            .insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        Some(r)
    }

    fn metadata(&self, rs: &ResourceServer, method: &Method) -> Response<McpBody> {
        if method != Method::GET && method != Method::HEAD {
            let mut r = error_response(
                StatusCode::METHOD_NOT_ALLOWED,
                ErrorCode::INVALID_REQUEST,
                "Method Not Allowed: GET the protected resource metadata",
            );
            r.headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
            return r;
        }
        let doc = rs.metadata(self.shared.server.declared_scopes());
        let mut r = json_response(StatusCode::OK, &doc);
        r.headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
        r
    }
}

fn challenge(status: StatusCode, message: &str, header: HeaderValue) -> Response<McpBody> {
    let mut r = error_response(status, ErrorCode::INVALID_REQUEST, message);
    r.headers_mut().insert(WWW_AUTHENTICATE, header);
    r
}
