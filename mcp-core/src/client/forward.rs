//! A `tools/call` forwarded for a proxy: the arguments written once, the
//! result read in one pass with its content blocks kept as the JSON they
//! came in ([`Content::Raw`]), so they reach the proxy's caller intact
//! without being parsed into typed content and written again.

use std::borrow::Cow;
use std::sync::PoisonError;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::ClientError;
use super::options::RequestOptions;
use super::rounds::{input_round, Step};
use super::tool_headers::headers_for;
use super::Client;
use crate::protocol::meta::meta_keys;
use crate::protocol::{CallToolResult, Content, RawContent};

/// A `tools/call` result with its blocks unparsed (and what decides
/// whether it is final).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Forwarded<'a> {
    #[serde(default, borrow)]
    result_type: Option<Cow<'a, str>>,
    /// Required of a final result; an `input_required` one has none.
    #[serde(default)]
    content: Option<Vec<Box<RawValue>>>,
    #[serde(default)]
    structured_content: Option<Map<String, Value>>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "meta_without_server_info"
    )]
    meta: Option<Map<String, Value>>,
}

/// The backend's result `_meta` without its `serverInfo`: that names the
/// backend, and the result we send is ours (on 2026-07-28 our own server
/// info is written in its place). It is skipped, not parsed.
fn meta_without_server_info<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Map<String, Value>>, D::Error> {
    struct Meta;
    impl<'de> Visitor<'de> for Meta {
        type Value = Option<Map<String, Value>>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a _meta object")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut kept = Map::new();
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if key == meta_keys::SERVER_INFO {
                    map.next_value::<IgnoredAny>()?;
                } else {
                    kept.insert(key.into_owned(), map.next_value()?);
                }
            }
            Ok((!kept.is_empty()).then_some(kept))
        }
    }
    deserializer.deserialize_any(Meta)
}

impl Client {
    /// Calls tool `name` with `arguments` for a proxy: as
    /// [`Client::call_tool_with`], but the result's content blocks stay
    /// raw ([`Content::Raw`]) and the arguments are not copied.
    pub(crate) async fn forward_tool_call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        let modern = self.is_modern();
        // Only a tool with `x-mcp-header` arguments needs options of its own.
        let param_headers = if modern {
            let headers = self
                .tool_headers
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            headers.get(name).map(|a| headers_for(a, &arguments))
        } else {
            None
        };
        let own;
        let options = match param_headers {
            Some(param_headers) => {
                let mut o = options.clone();
                o.param_headers = param_headers;
                own = o;
                &own
            }
            None => options,
        };
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        params.insert("arguments".into(), Value::Object(arguments));
        self.drive("tools/call", params, options, |raw| {
            let read: Forwarded<'_> = serde_json::from_str(raw.get())
                .map_err(|e| ClientError::protocol(format!("tools/call: {e}")))?;
            if let Some(round) =
                input_round("tools/call", modern, read.result_type.as_deref(), &raw)?
            {
                return Ok(Step::Input(round));
            }
            let content = read
                .content
                .ok_or_else(|| ClientError::protocol("tools/call: missing field `content`"))?
                .into_iter()
                .map(|block| RawContent::new(block).map(Content::Raw))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ClientError::protocol(format!("tools/call: {e}")))?;
            Ok(Step::Done(CallToolResult {
                content,
                structured_content: read.structured_content,
                is_error: read.is_error,
                meta: read.meta,
            }))
        })
        .await
    }
}
