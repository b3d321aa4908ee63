//! The server the OAuth tests talk to: the protected MCP resource (our
//! own `McpHttpService` behind a bearer check with a scope per tool) and
//! its authorization server (metadata, an authorize endpoint that
//! approves at once, a token endpoint that checks PKCE), on one
//! ephemeral port.
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_core::protocol::base64;
use mcp_core::{
    protocol::CallToolResult, transport::http::McpHttpService, HttpOptions, InvokeContext,
    McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

pub(crate) const WRITE_SCOPE: &str = "files:write";
pub(crate) const READ_SCOPE: &str = "files:read";

/// How the test server misbehaves, if at all.
#[derive(Clone, Default)]
pub(crate) struct Plan {
    /// `iss` sent in the authorization redirect instead of the issuer.
    pub(crate) wrong_iss: bool,
    /// Bytes of padding in the resource metadata document.
    pub(crate) padding: usize,
    /// The tokens' `expires_in`.
    pub(crate) expires_in: Option<u64>,
    /// The tool `write` is refused for lack of scope whatever the token.
    pub(crate) never_enough: bool,
    /// The resource metadata names another server.
    pub(crate) foreign_resource: bool,
    /// The authorization server offers dynamic registration (RFC 7591)
    /// of confidential clients (`client_secret_post`) and its token
    /// endpoint accepts only the clients it registered.
    pub(crate) registration: bool,
}

/// What a request to the test server carried.
#[derive(Default)]
pub(crate) struct Seen {
    /// Query of each authorization request.
    pub(crate) authorize: Vec<HashMap<String, String>>,
    /// Form of each token request.
    pub(crate) token: Vec<HashMap<String, String>>,
    /// Method and `Authorization` of each request to the MCP endpoint.
    pub(crate) mcp: Vec<(Method, Option<String>)>,
    /// Authorization-server metadata fetches.
    pub(crate) metadata: usize,
    /// Body of each registration request.
    pub(crate) register: Vec<Value>,
}

struct Grant {
    challenge: String,
    scope: String,
}

pub(crate) struct Server {
    base: String,
    plan: Plan,
    mcp: McpHttpService,
    seen: Mutex<Seen>,
    codes: Mutex<HashMap<String, Grant>>,
    /// Access token → its scopes; refresh token → its scopes.
    access: Mutex<HashMap<String, Vec<String>>>,
    refresh: Mutex<HashMap<String, Vec<String>>>,
    /// Registered client id → its secret.
    clients: Mutex<HashMap<String, String>>,
    counter: AtomicUsize,
}

type Body = Either<mcp_core::transport::http::McpBody, Full<Bytes>>;

pub(crate) fn tools() -> McpServer {
    let tool = |name: &'static str| {
        McpToolDef::new(
            name,
            "a test tool",
            json!({"type": "object"}),
            move |_: Map<String, Value>, _: InvokeContext| async move {
                CallToolResult::text(format!("{name} done"))
            },
        )
    };
    McpServer::builder()
        .server_info("protected", "1")
        .tool(tool("read"))
        .tool(tool("write"))
        .build()
        .unwrap_or_else(|e| panic!("server: {e}"))
}

pub(crate) async fn start(plan: Plan) -> Arc<Server> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("addr: {e}"));
    let server = Arc::new(Server {
        base: format!("http://{addr}"),
        plan,
        // One user behind every token: a refreshed token keeps the legacy
        // session (the default principal is the Authorization header).
        mcp: McpHttpService::new(
            tools(),
            HttpOptions::new().principal(|_| Some("the-user".to_owned())),
        ),
        seen: Mutex::default(),
        codes: Mutex::default(),
        access: Mutex::default(),
        refresh: Mutex::default(),
        clients: Mutex::default(),
        counter: AtomicUsize::new(0),
    });
    let shared = Arc::clone(&server);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let server = Arc::clone(&shared);
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let server = Arc::clone(&server);
                    async move { Ok::<_, Infallible>(server.route(req).await) }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    server
}

fn reply(status: StatusCode, headers: &[(&str, String)], body: Value) -> Response<Body> {
    let mut r = Response::new(Either::Right(Full::new(Bytes::from(body.to_string()))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            hyper::header::HeaderValue::from_str(value),
        ) {
            r.headers_mut().insert(n, v);
        }
    }
    r
}

/// Decodes `a=b&c=d` (percent escapes, `+`).
fn pairs(s: &str) -> HashMap<String, String> {
    let decode = |v: &str| {
        let v = v.replace('+', " ");
        let bytes = v.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' && i + 2 < bytes.len() {
                if let Some(b) = v
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    out.push(b);
                    i += 3;
                    continue;
                }
            }
            out.push(bytes[i]);
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (n, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(n), decode(v))
        })
        .collect()
}

impl Server {
    pub(crate) fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// The authorization server's issuer.
    pub(crate) fn issuer(&self) -> String {
        self.base.clone()
    }

    fn prm_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.base)
    }

    fn next(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.counter.fetch_add(1, Ordering::Relaxed))
    }

    async fn route(&self, req: Request<Incoming>) -> Response<Body> {
        let path = req.uri().path().to_owned();
        let query = req.uri().query().unwrap_or_default().to_owned();
        match (req.method().clone(), path.as_str()) {
            (Method::GET, "/.well-known/oauth-protected-resource/mcp") => reply(
                StatusCode::OK,
                &[],
                json!({
                    "resource": if self.plan.foreign_resource {
                        "http://evil.example.com/mcp".to_owned()
                    } else {
                        self.resource()
                    },
                    "authorization_servers": [self.base],
                    "scopes_supported": [READ_SCOPE],
                    "padding": "x".repeat(self.plan.padding),
                }),
            ),
            (Method::GET, "/.well-known/oauth-authorization-server") => {
                self.seen.lock().unwrap_or_else(|e| e.into_inner()).metadata += 1;
                let mut metadata = json!({
                        "issuer": self.base,
                        "authorization_endpoint": format!("{}/authorize", self.base),
                        "token_endpoint": format!("{}/token", self.base),
                        "response_types_supported": ["code"],
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported": ["none"],
                        "authorization_response_iss_parameter_supported": true,
                        "scopes_supported": [READ_SCOPE, WRITE_SCOPE, "offline_access"],
                });
                if self.plan.registration {
                    metadata["registration_endpoint"] = json!(format!("{}/register", self.base));
                    metadata["token_endpoint_auth_methods_supported"] =
                        json!(["client_secret_post"]);
                }
                reply(StatusCode::OK, &[], metadata)
            }
            (Method::POST, "/register") if self.plan.registration => {
                let body = req.into_body().collect().await.map(|b| b.to_bytes());
                let asked: Value =
                    serde_json::from_slice(&body.unwrap_or_default()).unwrap_or_default();
                self.register(asked)
            }
            (Method::GET, "/authorize") => self.authorize(&query),
            (Method::POST, "/token") => {
                let body = req.into_body().collect().await.map(|b| b.to_bytes());
                let form = pairs(&String::from_utf8_lossy(&body.unwrap_or_default()));
                self.token(form)
            }
            (_, "/mcp") => self.mcp(req).await,
            _ => reply(StatusCode::NOT_FOUND, &[], json!({"error": "not_found"})),
        }
    }

    fn authorize(&self, query: &str) -> Response<Body> {
        let q = pairs(query);
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .authorize
            .push(q.clone());
        let code = self.next("code");
        self.codes.lock().unwrap_or_else(|e| e.into_inner()).insert(
            code.clone(),
            Grant {
                challenge: q.get("code_challenge").cloned().unwrap_or_default(),
                scope: q.get("scope").cloned().unwrap_or_default(),
            },
        );
        let iss = if self.plan.wrong_iss {
            "http://evil.example.com".to_owned()
        } else {
            self.base.clone()
        };
        let location = format!(
            "{}?code={code}&state={}&iss={}",
            q.get("redirect_uri").cloned().unwrap_or_default(),
            q.get("state").cloned().unwrap_or_default(),
            iss.replace(':', "%3A").replace('/', "%2F"),
        );
        reply(StatusCode::FOUND, &[("location", location)], json!({}))
    }

    fn register(&self, asked: Value) -> Response<Body> {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .register
            .push(asked.clone());
        let id = self.next("dyn");
        let secret = self.next("secret");
        self.clients
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), secret.clone());
        reply(
            StatusCode::CREATED,
            &[],
            json!({
                "client_id": id,
                "client_secret": secret,
                "client_secret_expires_at": 0,
                "token_endpoint_auth_method": "client_secret_post",
                "redirect_uris": asked["redirect_uris"],
            }),
        )
    }

    /// Forgets every registered client (as a server whose registrations
    /// expired or were purged would).
    pub(crate) fn forget_clients(&self) {
        self.clients
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    fn token(&self, form: HashMap<String, String>) -> Response<Body> {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .token
            .push(form.clone());
        let field = |n: &str| form.get(n).cloned().unwrap_or_default();
        if self.plan.registration {
            let known = self
                .clients
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&field("client_id"))
                .is_some_and(|secret| *secret == field("client_secret"));
            if !known {
                return reply(
                    StatusCode::UNAUTHORIZED,
                    &[],
                    json!({"error": "invalid_client"}),
                );
            }
        }
        if field("resource") != self.resource() {
            return reply(
                StatusCode::BAD_REQUEST,
                &[],
                json!({"error": "invalid_target"}),
            );
        }
        let scopes: Vec<String> = match field("grant_type").as_str() {
            "authorization_code" => {
                let grant = self
                    .codes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&field("code"));
                let Some(grant) = grant else {
                    return reply(
                        StatusCode::BAD_REQUEST,
                        &[],
                        json!({"error": "invalid_grant"}),
                    );
                };
                // PKCE S256, as RFC 7636 §4.6 has the server check it.
                let computed =
                    base64::encode_url(&Sha256::digest(field("code_verifier").as_bytes()));
                if computed != grant.challenge {
                    return reply(
                        StatusCode::BAD_REQUEST,
                        &[],
                        json!({"error": "invalid_grant", "error_description": "PKCE verifier mismatch"}),
                    );
                }
                grant
                    .scope
                    .split(' ')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            }
            "refresh_token" => {
                let known = self
                    .refresh
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&field("refresh_token"))
                    .cloned();
                match known {
                    Some(s) => s,
                    None => {
                        return reply(
                            StatusCode::BAD_REQUEST,
                            &[],
                            json!({"error": "invalid_grant"}),
                        )
                    }
                }
            }
            _ => {
                return reply(
                    StatusCode::BAD_REQUEST,
                    &[],
                    json!({"error": "unsupported_grant_type"}),
                )
            }
        };
        let access = self.next("at");
        let refresh = self.next("rt");
        self.access
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(access.clone(), scopes.clone());
        self.refresh
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(refresh.clone(), scopes.clone());
        let mut body = json!({
            "access_token": access,
            "token_type": "Bearer",
            "refresh_token": refresh,
            "scope": scopes.join(" "),
        });
        if let Some(e) = self.plan.expires_in {
            body["expires_in"] = json!(e);
        }
        reply(StatusCode::OK, &[], body)
    }

    /// The protected endpoint: a bearer token this server issued, with
    /// `files:write` for the tool `write` and `files:read` for the rest.
    async fn mcp(&self, req: Request<Incoming>) -> Response<Body> {
        let authorization = req
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .mcp
            .push((req.method().clone(), authorization.clone()));
        let scopes = authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Bearer "))
            .and_then(|t| {
                self.access
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(t)
                    .cloned()
            });
        let Some(scopes) = scopes else {
            let challenge = format!("Bearer resource_metadata=\"{}\"", self.prm_url());
            return reply(
                StatusCode::UNAUTHORIZED,
                &[("www-authenticate", challenge)],
                json!({"error": "invalid_token"}),
            );
        };
        let (parts, body) = req.into_parts();
        let body = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let needed = if message["method"] == "tools/call" && message["params"]["name"] == "write" {
            WRITE_SCOPE
        } else {
            READ_SCOPE
        };
        let never = self.plan.never_enough && needed == WRITE_SCOPE;
        if never || !scopes.iter().any(|s| s == needed) {
            let challenge = format!(
                "Bearer error=\"insufficient_scope\", scope=\"{needed}\", resource_metadata=\"{}\"",
                self.prm_url()
            );
            return reply(
                StatusCode::FORBIDDEN,
                &[("www-authenticate", challenge)],
                json!({"error": "insufficient_scope"}),
            );
        }
        let response = self
            .mcp
            .handle(Request::from_parts(parts, Full::new(body)))
            .await;
        response.map(Either::Left)
    }

    pub(crate) fn seen<T>(&self, f: impl FnOnce(&Seen) -> T) -> T {
        f(&self.seen.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Forgets every access token (as a server restart or revocation would).
    pub(crate) fn revoke_access_tokens(&self) {
        self.access
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}
