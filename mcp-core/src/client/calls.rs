//! What a [`Client`] asks: every request of both eras, with pagination
//! and typed results (the input rounds and version retry are in
//! `rounds`).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::PoisonError;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::cache::Lookup;
use super::error::ClientError;
use super::options::RequestOptions;
use super::rounds::{input_round, Step};
use super::tool_headers::{annotated, headers_for};
use super::wire::Kind;
use super::Client;
use crate::protocol::{
    CallToolResult, GetPromptResult, Prompt, Resource, ResourceContents, ResourceTemplate, Tool,
};

/// Pages a listing may take before the client gives up.
const MAX_PAGES: usize = 1000;

impl Client {
    /// Sends request `method` with `params` (an object, or `null` for
    /// none) and returns its final result.
    ///
    /// On 2026-07-28 an `input_required` result is fulfilled with the
    /// [`Handlers`](super::Handlers) and retried until complete, and a
    /// `-32022` naming another stateless revision is retried once with it.
    /// The result keeps every member (`resultType` included). A listing
    /// or `resources/read` may be answered from the client's cache while
    /// its `ttlMs` lasts ([`CacheOptions`](super::CacheOptions)).
    ///
    /// # Errors
    /// The server's error, a transport failure, a timeout or cancellation,
    /// an input the handlers cannot answer, or too many input rounds.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the request (see the module docs).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ClientError::protocol(format!(
                    "request params must be an object, not {other}"
                )))
            }
        };
        let raw = self.request_raw(method, params, options).await?;
        serde_json::from_str(raw.get()).map_err(|e| ClientError::protocol(format!("{method}: {e}")))
    }

    /// [`Client::request`] returning the final result as raw JSON, for a
    /// caller that reads it into its own type in one pass.
    pub(crate) async fn request_raw(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let modern = self.peer.is_modern();
        let ticket = match self.cache.lookup(method, &params, options) {
            Lookup::Hit(raw) => return Ok(raw),
            Lookup::Miss(ticket) if modern => Some(ticket),
            _ => None,
        };
        // An answer to a retry that carried input is never kept.
        let asked = AtomicBool::new(false);
        let raw = self
            .drive(method, params, options, |raw| {
                // Legacy results have no resultType, and most modern ones say
                // "complete": read it only when the text names it at all.
                static NAMED: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
                    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"resultType\""));
                let named = modern && NAMED.find(raw.get().as_bytes()).is_some();
                let kind: Kind<'_> = if named {
                    serde_json::from_str(raw.get()).map_err(|e| {
                        ClientError::protocol(format!("{method}: the result is not an object: {e}"))
                    })?
                } else {
                    Kind { result_type: None }
                };
                Ok(
                    match input_round(method, modern, kind.result_type.as_deref(), &raw)? {
                        Some(round) => {
                            asked.store(true, Ordering::Relaxed);
                            Step::Input(round)
                        }
                        None => Step::Done(raw),
                    },
                )
            })
            .await?;
        if let Some(ticket) = ticket {
            if !asked.load(Ordering::Relaxed) {
                self.cache.store(ticket, &raw);
            }
        }
        Ok(raw)
    }

    /// Sends notification `method` with `params`.
    ///
    /// # Errors
    /// The transport failed.
    ///
    /// # Cancel safety
    /// Dropping the future may leave the notification unsent.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), ClientError> {
        let params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        self.peer.notify(method, &params).await
    }

    /// `ping` (on 2026-07-28, which has none, `server/discover`).
    ///
    /// # Errors
    /// As [`Client::request`].
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = if self.is_modern() {
            "server/discover"
        } else {
            "ping"
        };
        self.request(method, Value::Null, &RequestOptions::new())
            .await
            .map(drop)
    }

    /// Every item of a paginated listing (`tools/list` → `tools`, …).
    pub(crate) async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
    ) -> Result<Vec<T>, ClientError> {
        self.list_pages(method, key, |_| Ok(())).await
    }

    /// Every item of the paginated listing `method` (its array `key`):
    /// `admit` sees each page's size in bytes of JSON before the page is
    /// read, and refuses it with an error (a proxy's listing budget). A
    /// repeated cursor, or more than 1,000 pages, is a protocol error.
    pub(crate) async fn list_pages<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
        mut admit: impl FnMut(usize) -> Result<(), ClientError>,
    ) -> Result<Vec<T>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        for _ in 0..MAX_PAGES {
            let mut params = Map::new();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), Value::String(c.clone()));
            }
            let raw = match self
                .request_raw(method, params, &RequestOptions::new())
                .await
            {
                Ok(raw) => raw,
                Err(e) => {
                    // A cached first page may hold a cursor the server no
                    // longer knows: the next listing starts afresh.
                    if cursor.is_some() {
                        self.cache.forget(method);
                    }
                    return Err(e);
                }
            };
            admit(raw.get().len())?;
            let mut page: Map<String, Value> = serde_json::from_str(raw.get())
                .map_err(|e| ClientError::protocol(format!("{method}: {e}")))?;
            drop(raw);
            let list = page.remove(key).unwrap_or(Value::Null);
            let list: Vec<T> = serde_json::from_value(list)
                .map_err(|e| ClientError::protocol(format!("{method}: {key}: {e}")))?;
            items.extend(list);
            match page.remove("nextCursor") {
                Some(Value::String(next)) if seen.insert(next.clone()) => cursor = Some(next),
                Some(Value::String(_)) => {
                    return Err(ClientError::protocol(format!("{method} repeated a cursor")))
                }
                _ => return Ok(items),
            }
        }
        Err(ClientError::protocol(format!(
            "{method} has more than {MAX_PAGES} pages"
        )))
    }

    /// Every tool (all pages). On 2026-07-28, tools whose `x-mcp-header`
    /// annotations are invalid are left out (the spec says a client must
    /// not call them), and the others' annotations are remembered for the
    /// `Mcp-Param-{Name}` headers of their calls.
    ///
    /// # Errors
    /// As [`Client::request`], or a listing of the wrong shape.
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let tools: Vec<Tool> = self.list_all("tools/list", "tools").await?;
        Ok(self.callable_tools(tools))
    }

    /// The listed `tools` this client may call (see
    /// [`list_tools`](Self::list_tools)), their header annotations
    /// remembered.
    pub(crate) fn callable_tools(&self, tools: Vec<Tool>) -> Vec<Tool> {
        if !self.is_modern() {
            return tools;
        }
        let mut kept = Vec::with_capacity(tools.len());
        let mut headers = self
            .tool_headers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        headers.clear();
        for tool in tools {
            match annotated(&tool.input_schema) {
                Ok(found) => {
                    if !found.is_empty() {
                        headers.insert(tool.name.clone(), found);
                    }
                    kept.push(tool);
                }
                Err(why) => {
                    tracing::warn!(target: "mcp_core::client", "left out tool {:?}: {why}", tool.name);
                }
            }
        }
        kept
    }

    /// Calls tool `name` with `arguments` (anything serializing to an
    /// object, or `()` / `null` for none).
    ///
    /// # Errors
    /// As [`Client::request`]. A tool that fails answers `Ok` with
    /// `is_error: Some(true)`.
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, &RequestOptions::new())
            .await
    }

    /// [`Client::call_tool`] with per-request options (progress, timeout,
    /// cancel token).
    ///
    /// # Errors
    /// As [`Client::call_tool`].
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: &RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        let arguments = match serde_json::to_value(arguments).map_err(ClientError::protocol)? {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ClientError::protocol(format!(
                    "tool arguments must serialize to an object, not {other}"
                )))
            }
        };
        let mut options = options.clone();
        if self.is_modern() {
            let headers = self
                .tool_headers
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(annotated) = headers.get(name) {
                options.param_headers = headers_for(annotated, &arguments);
            }
        }
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        params.insert("arguments".into(), Value::Object(arguments));
        let raw = self.request_raw("tools/call", params, &options).await?;
        serde_json::from_str(raw.get())
            .map_err(|e| ClientError::protocol(format!("tools/call: {e}")))
    }

    /// Calls tool `name` and reads its `structuredContent` as `T`.
    ///
    /// # Errors
    /// As [`Client::call_tool`]; a tool failure (`isError`) or a result
    /// without `structuredContent` of that shape is [`ClientError::Protocol`]
    /// naming the tool's text.
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn call_tool_typed<T: DeserializeOwned>(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<T, ClientError> {
        let result = self.call_tool(name, arguments).await?;
        let text = || {
            result
                .content
                .iter()
                .filter_map(|c| match c {
                    crate::protocol::Content::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        if result.is_error == Some(true) {
            return Err(ClientError::protocol(format!(
                "tool {name} failed: {}",
                text()
            )));
        }
        let Some(structured) = result.structured_content.clone() else {
            return Err(ClientError::protocol(format!(
                "tool {name} returned no structuredContent: {}",
                text()
            )));
        };
        serde_json::from_value(Value::Object(structured))
            .map_err(|e| ClientError::protocol(format!("tool {name}'s structuredContent: {e}")))
    }

    /// Every resource (all pages).
    ///
    /// # Errors
    /// As [`Client::list_tools`].
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all("resources/list", "resources").await
    }

    /// Every resource template (all pages).
    ///
    /// # Errors
    /// As [`Client::list_tools`].
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// Reads resource `uri`: its contents.
    ///
    /// # Errors
    /// As [`Client::request`] (an unknown resource is the server's error).
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, ClientError> {
        let mut result = self
            .request(
                "resources/read",
                json!({ "uri": uri }),
                &RequestOptions::new(),
            )
            .await?;
        let contents = result
            .get_mut("contents")
            .map(Value::take)
            .unwrap_or(Value::Null);
        serde_json::from_value(contents)
            .map_err(|e| ClientError::protocol(format!("resources/read: {e}")))
    }

    /// Subscribes to updates of `uri` (legacy revisions; the updates reach
    /// [`Handlers::on_notification`](super::Handlers::on_notification)).
    /// On 2026-07-28 use [`Client::listen`].
    ///
    /// # Errors
    /// As [`Client::request`]; on 2026-07-28, always.
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        if self.is_modern() {
            return Err(ClientError::protocol(
                "2026-07-28 has no resources/subscribe: use Client::listen",
            ));
        }
        self.request(
            "resources/subscribe",
            json!({ "uri": uri }),
            &RequestOptions::new(),
        )
        .await
        .map(drop)
    }

    /// Holds a 2026-07-28 `subscriptions/listen` open with `notifications`
    /// (say `{"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]}`);
    /// what arrives reaches
    /// [`Handlers::on_notification`](super::Handlers::on_notification).
    /// Returns when the server ends the listen; cancel it with
    /// [`RequestOptions::cancel`] or by dropping the future.
    ///
    /// # Errors
    /// As [`Client::request`].
    ///
    /// # Cancel safety
    /// Dropping the future ends the listen.
    pub async fn listen(
        &self,
        notifications: Value,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        // A listen lasts as long as the caller wants it to.
        let mut options = options.clone();
        if options.timeout.is_none() {
            options = options.no_timeout();
        }
        self.request(
            "subscriptions/listen",
            json!({ "notifications": notifications }),
            &options,
        )
        .await
    }

    /// Every prompt (all pages).
    ///
    /// # Errors
    /// As [`Client::list_tools`].
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// Gets prompt `name` with string `arguments`.
    ///
    /// # Errors
    /// As [`Client::request`].
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (String, String)>,
    ) -> Result<GetPromptResult, ClientError> {
        let arguments: Map<String, Value> = arguments
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let result = self
            .request(
                "prompts/get",
                json!({"name": name, "arguments": arguments}),
                &RequestOptions::new(),
            )
            .await?;
        from_result(result, "prompts/get")
    }

    /// Completion values for argument `argument` at `value` of `reference`
    /// (`{"type": "ref/prompt", "name": …}` or `{"type": "ref/resource", "uri": …}`).
    ///
    /// # Errors
    /// As [`Client::request`].
    ///
    /// # Cancel safety
    /// As [`Client::request`].
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, ClientError> {
        let result = self
            .request(
                "completion/complete",
                json!({"ref": reference, "argument": {"name": argument, "value": value}}),
                &RequestOptions::new(),
            )
            .await?;
        let values = result
            .get("completion")
            .and_then(|c| c.get("values"))
            .cloned()
            .unwrap_or(Value::Null);
        serde_json::from_value(values)
            .map_err(|e| ClientError::protocol(format!("completion/complete: {e}")))
    }
}

/// A result read as `T`, without the 2026-07-28 envelope members.
fn from_result<T: DeserializeOwned>(result: Value, method: &str) -> Result<T, ClientError> {
    let mut result = result;
    if let Value::Object(map) = &mut result {
        for key in ["resultType", "ttlMs", "cacheScope"] {
            map.remove(key);
        }
    }
    serde_json::from_value(result).map_err(|e| ClientError::protocol(format!("{method}: {e}")))
}
