//! Capabilities: what a client declares it can answer, and what a server
//! offers (`initialize` and `server/discover`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a client announced in `initialize`. Unknown members are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// Present when the client can answer `elicitation/create`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<Value>,
    /// Present when the client can answer `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Value>,
    /// Present when the client can answer `roots/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<Value>,
    /// Experimental and other capabilities.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ClientCapabilities {
    /// True when the client accepts form-mode elicitation: an `elicitation`
    /// object that is empty (form implied) or names `form`.
    pub fn supports_form_elicitation(&self) -> bool {
        match &self.elicitation {
            Some(Value::Object(o)) => o.is_empty() || o.contains_key("form"),
            _ => false,
        }
    }
}

/// `listChanged` of a list capability (`tools`, `prompts`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListCapability {
    /// The server sends `notifications/.../list_changed`.
    pub list_changed: bool,
}

/// The `resources` capability.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// The server accepts resource subscriptions.
    pub subscribe: bool,
    /// The server sends `notifications/resources/list_changed`.
    pub list_changed: bool,
}

/// What a server offers, as `initialize` and `server/discover` report it.
/// A member is present when the feature is offered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Tools (`tools/list`, `tools/call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListCapability>,
    /// Resources (`resources/list`, `resources/read`, templates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Prompts (`prompts/list`, `prompts/get`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListCapability>,
    /// Log messages (`notifications/message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Map<String, Value>>,
    /// Argument completion (`completion/complete`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Map<String, Value>>,
    /// Experimental and extension capabilities.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_capabilities_serialize_only_what_is_offered() {
        let caps = ServerCapabilities {
            tools: Some(ListCapability::default()),
            resources: Some(ResourcesCapability {
                subscribe: true,
                list_changed: false,
            }),
            logging: Some(Map::new()),
            ..ServerCapabilities::default()
        };
        assert_eq!(
            serde_json::to_value(&caps).unwrap_or_default(),
            json!({
                "tools": {"listChanged": false},
                "resources": {"subscribe": true, "listChanged": false},
                "logging": {}
            })
        );
    }
}
