//! `handle_message` and batch dispatch: one JSON-RPC message (or batch) in,
//! at most one reply out.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::era::{self, meta_keys, Era, ModernMeta, REMOVED_METHODS};
use super::extras;
use super::incoming::{is_request, request_id_of, Incoming, RequestParts};
use super::reply::{Outcome, Replies, Reply};
use super::McpServer;
use crate::cancel::CancelToken;
use crate::context::{CallContext, InvokeContext, Progress};
use crate::interrupt::{Channel, Interrupt, Interruption};
use crate::panic::catch_panic;
use crate::protocol::{
    self, fail, jsonrpc::classify, negotiate_version, CallToolResult, ClientCapabilities,
    ClientInfo, ErrorObject, Implementation, MessageKind, RequestId,
};
use crate::resource::ResourceRequest;
use crate::session::Session;

/// Parses one transport frame (a stdio line, an HTTP body).
///
/// # Errors
/// The ready-to-send `-32700 Parse error` response (id `null`) for invalid
/// JSON, invalid UTF-8 or nesting deeper than serde_json's limit.
pub fn parse_payload(bytes: &[u8]) -> Result<Value, Value> {
    serde_json::from_slice(bytes).map_err(|_| fail(Value::Null, &ErrorObject::parse_error()))
}

/// What [`McpServer::prepare`] decided. (Not boxed: it lives for one
/// match, and boxing would cost an allocation per request.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Step {
    /// Answered (or nothing to answer) without running a handler.
    Done(Option<Reply>),
    /// A registered request to run with [`McpServer::run_prepared`].
    Run(Prepared),
}

/// What a handled request produced, before it is written.
pub(crate) enum Answer {
    /// A result in JSON form.
    Json(Value),
    /// A tool's result, still typed.
    Tool(CallToolResult),
    /// `tools/list` from the listing serialized at build time.
    ToolListing(Arc<Box<serde_json::value::RawValue>>),
}

/// A request whose id is registered in its session, ready to run.
pub(crate) struct Prepared {
    id: RequestId,
    method: String,
    params: Map<String, Value>,
    era: Era,
    session: Session,
    guard: crate::session::InflightGuard,
    ctx: CallContext,
}

/// Something held for as long as an admitted request runs (a semaphore permit).
pub(crate) type Admission = Box<dyn Send>;

impl McpServer {
    /// Handles one JSON-RPC message (not a batch) and returns the reply, if
    /// any: requests get a response; notifications and responses get `None`;
    /// a request cancelled while running gets `None`.
    ///
    /// Cancel-safe in the sense that dropping the future abandons the call
    /// (and unregisters its id).
    pub async fn handle_message(&self, message: Value, ctx: &CallContext) -> Option<Value> {
        self.reply_to(message, ctx).await.map(Reply::into_value)
    }

    /// [`handle_message`](Self::handle_message) for transports: the reply
    /// is serialized straight from its parts.
    pub(crate) async fn reply_to(&self, message: Value, ctx: &CallContext) -> Option<Reply> {
        match self.prepare(message, ctx) {
            Step::Done(reply) => reply,
            Step::Run(call) => self.run_prepared(call).await,
        }
    }

    /// The synchronous first half of [`handle_message`](Self::handle_message):
    /// classifies the message, answers what needs no handler (errors,
    /// notifications, `initialize`, `ping`, `server/discover`), and registers
    /// a request's id in its session. A transport that runs requests
    /// concurrently calls this in arrival order, so a `notifications/cancelled`
    /// read right after its request always finds it.
    pub(crate) fn prepare(&self, message: Value, ctx: &CallContext) -> Step {
        let session = self.session_of(ctx);
        let id = match classify(&message) {
            MessageKind::Invalid { id, reason } => {
                return Step::Done(Some(Reply::error(
                    RequestId::from_value(&id),
                    ErrorObject::invalid_request(reason),
                )))
            }
            MessageKind::Response { id } => {
                self.route_response(message, id.as_ref(), &session);
                return Step::Done(None);
            }
            MessageKind::Notification { method } => {
                self.on_notification(method, &message, &session);
                return Step::Done(None);
            }
            MessageKind::Request { id, .. } => id,
        };
        match take_method_and_params(message) {
            Ok((method, params)) => self.prepare_request(id, method, params, ctx, session),
            Err(e) => Step::Done(Some(Reply::error(Some(id), e))),
        }
    }

    /// [`prepare`](Self::prepare) for a parsed frame: a request already
    /// taken apart skips the classification of its JSON.
    pub(crate) fn prepare_incoming(&self, message: Incoming, ctx: &CallContext) -> Step {
        match message {
            Incoming::Request(RequestParts { id, method, params }) => {
                self.prepare_request(id, method, params, ctx, self.session_of(ctx))
            }
            Incoming::Json(message) => self.prepare(message, ctx),
        }
    }

    /// The scope a call's id is registered in: the context's session, or
    /// the server's shared one.
    fn session_of(&self, ctx: &CallContext) -> Session {
        ctx.session
            .clone()
            .unwrap_or_else(|| self.inner.shared_session.clone())
    }

    /// The rest of [`prepare`](Self::prepare) once a request is taken apart.
    fn prepare_request(
        &self,
        id: RequestId,
        method: String,
        params: Map<String, Value>,
        ctx: &CallContext,
        session: Session,
    ) -> Step {
        let reply = |result: Result<Value, ErrorObject>| {
            Step::Done(Some(match result {
                Ok(value) => Reply::result(&id, value),
                Err(e) => Reply::error(Some(id.clone()), e),
            }))
        };
        let era = match era::modern_claim(&params) {
            None => Era::Legacy,
            Some(Ok(meta)) => Era::Modern(meta),
            Some(Err(e)) => return reply(Err(e)),
        };
        match (&era, method.as_str()) {
            (Era::Legacy, "initialize") => return reply(self.initialize(&params, &session)),
            (Era::Legacy, "ping") => return reply(Ok(Value::Object(Map::new()))),
            (Era::Legacy, "server/discover") => {
                return reply(Err(ErrorObject::invalid_params(format!(
                    "server/discover requires `_meta[\"{}\"]`",
                    meta_keys::PROTOCOL_VERSION
                ))))
            }
            (Era::Modern(_), m) if REMOVED_METHODS.contains(&m) => {
                return reply(Err(ErrorObject::method_not_found(m)))
            }
            (Era::Modern(_), "server/discover") => return reply(Ok(self.discover())),
            _ => {}
        }
        let Some(guard) = session.begin(&id, CancelToken::new()) else {
            return reply(Err(ErrorObject::invalid_request(format!(
                "Request id {id} is already in flight"
            ))));
        };
        Step::Run(Prepared {
            id,
            method,
            params,
            era,
            session,
            guard,
            ctx: ctx.clone(),
        })
    }

    /// The second half of [`handle_message`](Self::handle_message): runs a
    /// prepared request. `None` when it was cancelled (no reply is sent).
    pub(crate) async fn run_prepared(&self, call: Prepared) -> Option<Reply> {
        let Prepared {
            id,
            method,
            params,
            era,
            session,
            guard,
            ctx,
        } = call;
        let result = self
            .handle_request(&id, &method, params, &ctx, &session, &era, guard)
            .await?;
        let outcome = match result {
            Ok(Answer::Json(value)) => Outcome::Json(value),
            Ok(Answer::ToolListing(items)) => Outcome::Listing {
                key: "tools",
                items,
                modern: matches!(era, Era::Modern(_)).then(|| {
                    (
                        Arc::clone(&self.inner.server_info_raw),
                        self.inner.list_cache,
                    )
                }),
            },
            Ok(Answer::Tool(result)) => Outcome::Tool {
                result,
                modern: matches!(era, Era::Modern(_))
                    .then(|| Arc::clone(&self.inner.server_info_raw)),
            },
            Err(e) if e.code == INPUT_REQUIRED => Outcome::Json(e.data.unwrap_or(Value::Null)),
            Err(e) => Outcome::Error(e),
        };
        Some(Reply {
            id: Some(id),
            outcome,
        })
    }

    /// Handles one transport frame (a stdio line, an HTTP body) from bytes
    /// to bytes, as the built-in transports do: parses it, dispatches it (a
    /// batch too) and returns the reply's JSON, written straight from the
    /// reply without an intermediate `serde_json::Value`. `None` when there
    /// is nothing to answer (notifications and responses). Invalid JSON gets
    /// the `-32700` reply. For a custom transport.
    pub async fn handle_frame(&self, frame: &[u8], ctx: &CallContext) -> Option<Vec<u8>> {
        let replies = match Incoming::parse(frame) {
            Err(reply) => return serde_json::to_vec(&reply).ok(),
            Ok(Incoming::Json(payload)) => {
                self.dispatch_payload_admitted(payload, ctx, &mut || Ok(Box::new(())))
                    .await?
            }
            Ok(request) => Replies::One(match self.prepare_incoming(request, ctx) {
                Step::Done(reply) => reply?,
                Step::Run(call) => self.run_prepared(call).await?,
            }),
        };
        let mut out = Vec::new();
        replies.write_to(&mut out);
        Some(out)
    }

    /// Dispatches a payload that may be a batch: a single message goes to
    /// [`handle_message`](Self::handle_message); an array gets one response
    /// per request, in order, or `None` when it held only notifications and
    /// responses. An empty batch is `-32600`; so is an `initialize` inside a
    /// batch (answered in its slot; the rest of the batch still runs).
    pub async fn dispatch_payload(&self, payload: Value, ctx: &CallContext) -> Option<Value> {
        self.dispatch_payload_admitted(payload, ctx, &mut || Ok(Box::new(())))
            .await
            .map(Replies::into_value)
    }

    /// [`dispatch_payload`](Self::dispatch_payload) with a per-request
    /// admission check: `admit` runs for every request (never for
    /// notifications) and may refuse it with an error that is answered in
    /// the request's place.
    pub(crate) async fn dispatch_payload_admitted(
        &self,
        payload: Value,
        ctx: &CallContext,
        admit: &mut (dyn FnMut() -> Result<Admission, ErrorObject> + Send),
    ) -> Option<Replies> {
        let Value::Array(items) = payload else {
            if !is_request(&payload) {
                return self.reply_to(payload, ctx).await.map(Replies::One);
            }
            return match admit() {
                Ok(permit) => {
                    let reply = self.reply_to(payload, ctx).await;
                    drop(permit);
                    reply.map(Replies::One)
                }
                Err(e) => Some(Replies::One(Reply::error(request_id_of(&payload), e))),
            };
        };
        if items.is_empty() {
            return Some(Replies::One(Reply::error(
                None,
                ErrorObject::invalid_request("Invalid JSON-RPC request: empty batch"),
            )));
        }
        let mut tasks = tokio::task::JoinSet::new();
        let mut replies: Vec<Option<Reply>> =
            std::iter::repeat_with(|| None).take(items.len()).collect();
        for (slot, item) in items.into_iter().enumerate() {
            if is_request(&item) {
                if item.get("method").and_then(Value::as_str) == Some("initialize") {
                    replies[slot] = Some(Reply::error(
                        request_id_of(&item),
                        ErrorObject::invalid_request(
                            "Invalid JSON-RPC request: initialize cannot be batched",
                        ),
                    ));
                    continue;
                }
                match admit() {
                    Ok(permit) => {
                        let server = self.clone();
                        let ctx = ctx.clone();
                        tasks.spawn(async move {
                            let reply = server.reply_to(item, &ctx).await;
                            drop(permit);
                            (slot, reply)
                        });
                    }
                    Err(e) => replies[slot] = Some(Reply::error(request_id_of(&item), e)),
                }
            } else {
                let server = self.clone();
                let ctx = ctx.clone();
                tasks.spawn(async move { (slot, server.reply_to(item, &ctx).await) });
            }
        }
        while let Some(done) = tasks.join_next().await {
            match done {
                Ok((slot, reply)) => replies[slot] = reply,
                Err(join_error) => {
                    // handle_message catches handler panics itself; this is a
                    // bug in the dispatcher, reported without taking the batch down.
                    eprintln!("mcp-core: batch entry task failed: {join_error}");
                }
            }
        }
        let out: Vec<Reply> = replies.into_iter().flatten().collect();
        (!out.is_empty()).then_some(Replies::Batch(out))
    }

    fn route_response(&self, message: Value, id: Option<&RequestId>, session: &Session) {
        let Some(id) = id else { return };
        let Value::Object(mut obj) = message else {
            return;
        };
        let reply = match obj.remove("error") {
            Some(err) => Err(
                serde_json::from_value::<ErrorObject>(err).unwrap_or_else(|_| {
                    ErrorObject::internal("the client answered with a malformed error")
                }),
            ),
            None => Ok(obj.remove("result").unwrap_or(Value::Null)),
        };
        // A response nobody waits for is ignored.
        session.resolve(id, reply);
    }

    fn on_notification(&self, method: &str, message: &Value, session: &Session) {
        if method == "notifications/cancelled" {
            if let Some(id) = message
                .pointer("/params/requestId")
                .and_then(RequestId::from_value)
            {
                session.cancel(&id);
            }
        }
        // notifications/initialized and anything else: accepted, no reply.
        // A request method sent without an id is never executed.
    }

    /// Runs one registered request. `None` when it was cancelled (no reply is sent).
    #[allow(clippy::too_many_arguments)]
    async fn handle_request(
        &self,
        id: &RequestId,
        method: &str,
        params: Map<String, Value>,
        ctx: &CallContext,
        session: &Session,
        era: &Era,
        guard: crate::session::InflightGuard,
    ) -> Option<Result<Answer, ErrorObject>> {
        let token = guard.token().clone();
        if ctx.signal.as_ref().is_some_and(CancelToken::is_cancelled) {
            token.cancel();
            return None;
        }
        let external = ctx.signal.clone();
        let work = async {
            match (era, method) {
                (Era::Modern(_), "subscriptions/listen") => {
                    return self
                        .listen(id, &params, ctx, session)
                        .await
                        .map(Answer::Json);
                }
                (_, "tools/list") => {
                    if let Some(listing) = &self.inner.tools_listing {
                        let listing = Arc::clone(listing);
                        return check_cursor(&params).map(|()| Answer::ToolListing(listing));
                    }
                }
                (_, "tools/call") => {
                    return self
                        .run_tool_call(id, params, ctx, session, &token, era)
                        .await
                        .map(Answer::Tool);
                }
                _ => {}
            }
            let mut result = self
                .run_method(id, method, params, ctx, session, &token, era)
                .await;
            if let (Era::Modern(_), Ok(Value::Object(map))) = (era, &mut result) {
                era::decorate(map, &self.inner.server_info_json);
            }
            result.map(Answer::Json)
        };
        // The work is polled first: a call that finishes at once never
        // registers a waiter on either cancellation signal. One cancelled
        // by the time it finished still gets no reply.
        let result = tokio::select! {
            biased;
            r = work => (!token.is_cancelled()
                && !external.as_ref().is_some_and(CancelToken::is_cancelled))
            .then_some(r),
            () = token.cancelled() => None,
            // The token is cancelled inside the waiting future, before the
            // select drops the handler, so cleanup code sees is_cancelled().
            () = async {
                wait_external(external.as_ref()).await;
                token.cancel();
            } => None,
        };
        drop(guard);
        result.filter(|r| !matches!(r, Err(e) if e.code == LISTEN_ENDED))
    }

    /// `server/discover` (2026-07-28).
    fn discover(&self) -> Value {
        let inner = &self.inner;
        let mut result = Map::new();
        result.insert(
            "supportedVersions".into(),
            serde_json::to_value(era::MODERN_PROTOCOL_VERSIONS).unwrap_or(Value::Null),
        );
        result.insert("capabilities".into(), inner.capabilities.clone());
        if let Some(instructions) = &inner.instructions {
            result.insert("instructions".into(), Value::String(instructions.clone()));
        }
        inner.discover_cache.apply(&mut result);
        era::decorate(&mut result, &inner.server_info_json);
        Value::Object(result)
    }

    /// `subscriptions/listen` (2026-07-28): acknowledge the subset we honour
    /// (none: this server's lists never change and it offers no resource
    /// subscriptions), then hold the request open until the client cancels
    /// it (no reply) or the session ends (a graceful, tagged result).
    async fn listen(
        &self,
        id: &RequestId,
        params: &Map<String, Value>,
        ctx: &CallContext,
        session: &Session,
    ) -> Result<Value, ErrorObject> {
        if !params.get("notifications").is_some_and(Value::is_object) {
            return Err(ErrorObject::invalid_params(
                "subscriptions/listen requires a `notifications` object",
            ));
        }
        let tag = serde_json::json!({ meta_keys::SUBSCRIPTION_ID: id.to_value() });
        let mut honoured = Map::new();
        let mut listening = None;
        if let (true, Some(Value::Array(uris)), Some(outbound)) = (
            self.inner.resource_subscriptions,
            params
                .get("notifications")
                .and_then(|n| n.get("resourceSubscriptions")),
            &ctx.outbound,
        ) {
            let uris: std::collections::HashSet<String> = uris
                .iter()
                .filter_map(|u| u.as_str().map(str::to_owned))
                .collect();
            honoured.insert(
                "resourceSubscriptions".into(),
                serde_json::to_value(&uris).unwrap_or(Value::Null),
            );
            self.inner
                .subscriptions
                .add_listen(session, id.to_value(), Arc::clone(outbound), uris);
            listening = Some(ListenGuard {
                server: self,
                session,
                id: id.to_value(),
            });
        }
        if let Some(outbound) = &ctx.outbound {
            let ack = protocol::notification(
                "notifications/subscriptions/acknowledged",
                serde_json::json!({ "_meta": tag, "notifications": honoured }),
            );
            if !outbound.send(ack).await {
                return Err(ErrorObject::new(LISTEN_ENDED, "closed"));
            }
        }
        session.closed().await;
        drop(listening);
        let mut result = Map::new();
        result.insert("_meta".into(), tag);
        era::decorate(&mut result, &self.inner.server_info_json);
        Ok(Value::Object(result))
    }

    /// `tools/call`: the result stays typed until it is written.
    async fn run_tool_call(
        &self,
        id: &RequestId,
        mut params: Map<String, Value>,
        ctx: &CallContext,
        session: &Session,
        token: &CancelToken,
        era: &Era,
    ) -> Result<CallToolResult, ErrorObject> {
        let name = match params.remove("name") {
            Some(Value::String(name)) => name,
            _ => {
                return Err(ErrorObject::invalid_params(
                    "tools/call requires a string `name`",
                ))
            }
        };
        let tool = self
            .inner
            .tools
            .get(&name)
            .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown tool: {name}")))?;
        let args = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args,
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "tools/call `arguments` must be an object",
                ))
            }
        };
        let round = self.round_trip("tools/call", &name, &args, &params, ctx, era)?;
        let ictx = self.invoke_context(id, &params, ctx, session, token, era, &round);
        let work = catch_panic(tool.invoke(args, ictx));
        round.run(work).await?.map_err(ErrorObject::internal)
    }

    #[allow(clippy::too_many_arguments)]
    async fn run_method(
        &self,
        id: &RequestId,
        method: &str,
        mut params: Map<String, Value>,
        ctx: &CallContext,
        session: &Session,
        token: &CancelToken,
        era: &Era,
    ) -> Result<Value, ErrorObject> {
        let inner = &self.inner;
        let modern = matches!(era, Era::Modern(_));
        let list_hint = |mut v: Value| {
            if let (true, Value::Object(map)) = (modern, &mut v) {
                inner.list_cache.apply(map);
            }
            v
        };
        let has_resources = !inner.resources.is_empty() || !inner.templates.is_empty();
        match method {
            "tools/list" => {
                check_cursor(&params)?;
                let tools: Vec<Value> = inner
                    .tools
                    .iter()
                    .filter(|t| t.is_visible(ctx))
                    .map(|t| to_json(t.tool()))
                    .collect();
                Ok(list_hint(single("tools", Value::Array(tools))))
            }
            "resources/list" if has_resources => {
                check_cursor(&params)?;
                let list: Vec<Value> = inner
                    .resources
                    .iter()
                    .filter_map(|r| r.resource().map(to_json))
                    .collect();
                Ok(list_hint(single("resources", Value::Array(list))))
            }
            "resources/templates/list" if has_resources => {
                check_cursor(&params)?;
                let list: Vec<Value> = inner
                    .templates
                    .iter()
                    .filter_map(|r| r.resource_template().map(to_json))
                    .collect();
                Ok(list_hint(single("resourceTemplates", Value::Array(list))))
            }
            "resources/read" if has_resources => {
                let uri = match params.get("uri") {
                    Some(Value::String(uri)) => uri.clone(),
                    _ => {
                        return Err(ErrorObject::invalid_params(
                            "resources/read requires a string `uri`",
                        ))
                    }
                };
                let (def, vars) = match inner.resources.get(&uri) {
                    Some(def) => (def, HashMap::new()),
                    None => inner
                        .templates
                        .iter()
                        .find_map(|t| t.match_template(&uri).map(|vars| (t, vars)))
                        .ok_or_else(|| {
                            ErrorObject::invalid_params(format!("Unknown resource: {uri}"))
                                .with_data(serde_json::json!({ "uri": uri }))
                        })?,
                };
                let round = self.round_trip(method, &uri, &Map::new(), &params, ctx, era)?;
                let ictx = self.invoke_context(id, &params, ctx, session, token, era, &round);
                let cache = def.cache;
                let work = catch_panic(Box::pin(def.read(ResourceRequest { uri, vars }, ictx)));
                let contents = round.run(work).await?.map_err(ErrorObject::internal)??;
                let mut result = single("contents", to_json(&contents));
                if let (true, Value::Object(map)) = (modern, &mut result) {
                    cache
                        .unwrap_or(era::CacheHint::new(0, era::CacheScope::Private))
                        .apply(map);
                }
                Ok(result)
            }
            "prompts/list" if !inner.prompts.is_empty() => {
                check_cursor(&params)?;
                let list: Vec<Value> = inner.prompts.iter().map(|p| to_json(p.prompt())).collect();
                Ok(list_hint(single("prompts", Value::Array(list))))
            }
            "prompts/get" if !inner.prompts.is_empty() => {
                let name = match params.get("name") {
                    Some(Value::String(name)) => name.clone(),
                    _ => {
                        return Err(ErrorObject::invalid_params(
                            "prompts/get requires a string `name`",
                        ))
                    }
                };
                let prompt = inner.prompts.get(&name).ok_or_else(|| {
                    ErrorObject::invalid_params(format!("Unknown prompt: {name}"))
                })?;
                let raw_args = params.remove("arguments");
                let binding_args = raw_args
                    .as_ref()
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                let args = prompt_args(raw_args)?;
                let round = self.round_trip(method, &name, &binding_args, &params, ctx, era)?;
                let ictx = self.invoke_context(id, &params, ctx, session, token, era, &round);
                let work = catch_panic(Box::pin(prompt.get(args, ictx)));
                let result = round.run(work).await?.map_err(ErrorObject::internal)??;
                Ok(to_json(&result))
            }
            "logging/setLevel" if inner.logging && !modern => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let rank = extras::level_rank(level).ok_or_else(|| {
                    ErrorObject::invalid_params(format!(
                        "invalid log level {:?}; expected one of {}",
                        level,
                        extras::LOG_LEVELS.join(", ")
                    ))
                })?;
                session.set_log_level(rank);
                Ok(Value::Object(Map::new()))
            }
            "completion/complete" if inner.completer.is_some() => {
                let request = extras::completion_request(&params)?;
                let round =
                    self.round_trip(method, "", &Map::new(), &Map::new(), ctx, &Era::Legacy)?;
                let ictx = self.invoke_context(id, &params, ctx, session, token, era, &round);
                let Some(complete) = &inner.completer else {
                    return Err(ErrorObject::method_not_found(method));
                };
                let work = catch_panic(complete(request, ictx));
                let values = round.run(work).await?.map_err(ErrorObject::internal)??;
                Ok(extras::completion_result(values))
            }
            "resources/subscribe" | "resources/unsubscribe"
                if inner.resource_subscriptions && !modern =>
            {
                let uri = params.get("uri").and_then(Value::as_str).ok_or_else(|| {
                    ErrorObject::invalid_params(format!("{method} requires a string `uri`"))
                })?;
                inner.subscriptions.set_legacy(
                    session,
                    ctx.outbound.as_ref(),
                    uri,
                    method == "resources/subscribe",
                );
                Ok(Value::Object(Map::new()))
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    fn initialize(
        &self,
        params: &Map<String, Value>,
        session: &Session,
    ) -> Result<Value, ErrorObject> {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = negotiate_version(requested);
        let capabilities = match params.get("capabilities") {
            Some(caps @ Value::Object(_)) => {
                serde_json::from_value::<ClientCapabilities>(caps.clone()).map_err(|e| {
                    ErrorObject::invalid_params(format!("initialize: invalid capabilities: {e}"))
                })?
            }
            None | Some(Value::Null) => ClientCapabilities::default(),
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "initialize: `capabilities` must be an object",
                ))
            }
        };
        let implementation = params
            .get("clientInfo")
            .and_then(|v| serde_json::from_value::<Implementation>(v.clone()).ok());
        session.set_client(ClientInfo {
            protocol_version: version,
            capabilities,
            implementation,
        });
        let mut result = Map::with_capacity(4);
        result.insert("protocolVersion".into(), Value::String(version.to_owned()));
        result.insert("capabilities".into(), self.inner.capabilities.clone());
        result.insert("serverInfo".into(), to_json(&self.inner.info));
        if let Some(instructions) = &self.inner.instructions {
            result.insert("instructions".into(), Value::String(instructions.clone()));
        }
        Ok(Value::Object(result))
    }

    #[allow(clippy::too_many_arguments)]
    fn invoke_context(
        &self,
        id: &RequestId,
        params: &Map<String, Value>,
        ctx: &CallContext,
        session: &Session,
        token: &CancelToken,
        era: &Era,
        round: &RoundTrip,
    ) -> InvokeContext {
        let progress = match (&ctx.progress, &ctx.outbound) {
            (Some(sink), _) => Some(Progress::sink(Arc::clone(sink))),
            (None, Some(outbound)) => params
                .get("_meta")
                .and_then(|m| m.get("progressToken"))
                .filter(|t| t.is_string() || t.as_i64().is_some())
                .map(|t| Progress::notify(t.clone(), Arc::clone(outbound))),
            (None, None) => None,
        };
        let (client, channel) = match era {
            Era::Legacy => (
                session.client(),
                match &ctx.outbound {
                    Some(outbound) => Channel::Legacy {
                        session: session.clone(),
                        outbound: Arc::clone(outbound),
                    },
                    None => Channel::None,
                },
            ),
            // Servers never send requests in this revision: questions
            // become `input_required` results answered on the retry.
            Era::Modern(meta) => (
                Some(Arc::clone(&meta.client)),
                Channel::RoundTrip(Arc::clone(&round.interrupt)),
            ),
        };
        let can_elicit = client
            .as_deref()
            .is_some_and(|c| c.capabilities.supports_form_elicitation());
        InvokeContext {
            cancel: token.clone(),
            progress,
            elicitor: std::sync::OnceLock::new(),
            can_elicit,
            request_id: Some(id.clone()),
            client,
            call: ctx.clone(),
            state: Some(Arc::clone(&self.inner.state)),
            interrupt: Some(Arc::clone(&round.interrupt)),
            channel,
            modern: matches!(era, Era::Modern(_)),
            log_threshold: match era {
                _ if !self.inner.logging => None,
                Era::Legacy => Some(session.log_level().unwrap_or(0)),
                Era::Modern(meta) => meta.log_level.as_deref().and_then(extras::level_rank),
            },
        }
    }

    /// Sets up a call that may be interrupted: for a modern request, opens
    /// its `requestState` (answers of earlier rounds) and merges the retry's
    /// `inputResponses`.
    fn round_trip(
        &self,
        method: &str,
        key: &str,
        args: &Map<String, Value>,
        params: &Map<String, Value>,
        ctx: &CallContext,
        era: &Era,
    ) -> Result<RoundTrip<'_>, ErrorObject> {
        let mut round = RoundTrip {
            interrupt: Arc::new(Interrupt::default()),
            identity: None,
            server: self,
            principal: ctx.principal.clone(),
        };
        let Era::Modern(meta) = era else {
            return Ok(round);
        };
        // A handler can only ask what the client declared it can answer
        // (elicitation, sampling, roots, or an extension): a request from
        // a client that declares nothing and carries no answers never
        // needs its binding, which hashes the arguments.
        let caps = &meta.client.capabilities;
        let may_ask = caps.elicitation.is_some()
            || caps.sampling.is_some()
            || caps.roots.is_some()
            || !caps.extra.is_empty();
        if !may_ask
            && !params.contains_key("requestState")
            && !params.contains_key("inputResponses")
        {
            return Ok(round);
        }
        let identity = crate::request_state::binding(method, key, args);
        if let Some(state) = params.get("requestState") {
            let state = state
                .as_str()
                .ok_or_else(|| ErrorObject::invalid_params("`requestState` must be a string"))?;
            let binding = &identity;
            let (mut answers, pending) = self
                .inner
                .state_keys
                .open(state, binding, ctx.principal.as_deref())
                .map_err(|why| {
                    ErrorObject::invalid_params(format!("Invalid requestState: {why}"))
                })?;
            if let Some(Value::Object(responses)) = params.get("inputResponses") {
                for key in pending {
                    if let Some(answer @ Value::Object(_)) = responses.get(&key) {
                        answers.insert(key, answer.clone());
                    }
                }
            }
            round.interrupt = Arc::new(Interrupt::with_answers(answers));
        } else if let Some(Value::Object(responses)) = params.get("inputResponses") {
            // Answers without a state: nothing of an earlier round to carry,
            // and these answers are the client's own either way, so they are
            // used as given (keys nobody asks for are ignored; answers that
            // are not objects are dropped and the question asked again).
            let answers = responses
                .iter()
                .filter(|(_, answer)| answer.is_object())
                .map(|(key, answer)| (key.clone(), answer.clone()))
                .collect();
            round.interrupt = Arc::new(Interrupt::with_answers(answers));
        }
        round.identity = Some(identity);
        Ok(round)
    }
}

/// Unregisters a listen's resource subscriptions however the listen ends.
struct ListenGuard<'a> {
    server: &'a McpServer,
    session: &'a Session,
    id: Value,
}

impl Drop for ListenGuard<'_> {
    fn drop(&mut self) {
        self.server
            .inner
            .subscriptions
            .end_listen(self.session, &self.id);
    }
}

/// Error code used internally to end a `subscriptions/listen` without a reply.
const LISTEN_ENDED: i64 = i64::MIN;

/// A call that a handler may interrupt (see [`crate::interrupt`]).
struct RoundTrip<'a> {
    interrupt: Arc<Interrupt>,
    /// Set for modern requests: what sealed state is bound to (method plus a
    /// digest of name or URI and arguments, hashed without copying them).
    identity: Option<String>,
    server: &'a McpServer,
    principal: Option<Arc<str>>,
}

impl RoundTrip<'_> {
    /// Runs the handler future unless it interrupts itself. An interruption
    /// comes back as an error: a protocol error, or (marked with
    /// [`INPUT_REQUIRED`]) the `input_required` result in its `data`.
    async fn run<T>(&self, work: impl std::future::Future<Output = T>) -> Result<T, ErrorObject> {
        // Work first: a handler that finishes at once never registers a
        // waiter on the interrupt.
        tokio::select! {
            biased;
            r = work => Ok(r),
            why = self.interrupt.wait() => Err(self.interrupted(why)),
        }
    }

    fn interrupted(&self, why: Interruption) -> ErrorObject {
        match (why, &self.identity) {
            (Interruption::Error(e), _) => e,
            (Interruption::Input(requests), Some(identity)) => {
                let inner = &self.server.inner;
                let pending: Vec<String> = requests.keys().cloned().collect();
                let state = inner.state_keys.seal(
                    identity,
                    self.principal.as_deref(),
                    &self.interrupt.answers,
                    &pending,
                );
                let mut result = Map::new();
                result.insert("resultType".into(), Value::String("input_required".into()));
                result.insert("inputRequests".into(), Value::Object(requests));
                result.insert("requestState".into(), Value::String(state));
                era::decorate(&mut result, &inner.server_info_json);
                ErrorObject::new(INPUT_REQUIRED, "input required").with_data(Value::Object(result))
            }
            (Interruption::Input(_), None) => {
                ErrorObject::internal("this request cannot ask for input by round trip")
            }
        }
    }
}

/// Marks an `ErrorObject` that actually carries an `input_required` result
/// in its `data`; turned back into a result before replying.
pub(crate) const INPUT_REQUIRED: i64 = i64::MIN + 1;

async fn wait_external(signal: Option<&CancelToken>) {
    match signal {
        Some(s) => s.cancelled().await,
        None => std::future::pending().await,
    }
}

/// Moves a request's method name and params out of it (no copies).
fn take_method_and_params(message: Value) -> Result<(String, Map<String, Value>), ErrorObject> {
    let Value::Object(mut obj) = message else {
        return Ok((String::new(), Map::new()));
    };
    let method = match obj.remove("method") {
        Some(Value::String(method)) => method,
        _ => String::new(),
    };
    match obj.remove("params") {
        None | Some(Value::Null) => Ok((method, Map::new())),
        Some(Value::Object(params)) => Ok((method, params)),
        Some(_) => Err(ErrorObject::invalid_params("`params` must be an object")),
    }
}

fn check_cursor(params: &Map<String, Value>) -> Result<(), ErrorObject> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(ErrorObject::invalid_params(
            "Invalid cursor: this server lists everything in one page",
        )),
    }
}

fn prompt_args(raw: Option<Value>) -> Result<HashMap<String, String>, ErrorObject> {
    match raw {
        None | Some(Value::Null) => Ok(HashMap::new()),
        Some(Value::Object(map)) => map
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                _ => Err(ErrorObject::invalid_params(format!(
                    "prompts/get argument `{k}` must be a string"
                ))),
            })
            .collect(),
        Some(_) => Err(ErrorObject::invalid_params(
            "prompts/get `arguments` must be an object of strings",
        )),
    }
}

fn single(key: &str, value: Value) -> Value {
    let mut map = Map::with_capacity(1);
    map.insert(key.to_owned(), value);
    Value::Object(map)
}

fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> Value {
    // Our own protocol types always serialize; a failure would be a bug, so
    // degrade to null rather than panic.
    serde_json::to_value(value).unwrap_or(Value::Null)
}

#[allow(dead_code)]
fn _assert_send(server: &McpServer, ctx: &CallContext) {
    fn is_send<T: Send>(_: T) {}
    is_send(server.handle_message(Value::Null, ctx));
    is_send(server.dispatch_payload(Value::Null, ctx));
}

#[allow(dead_code)]
fn _modern_meta_is_used(m: &ModernMeta) -> &'static str {
    m.client.protocol_version
}
