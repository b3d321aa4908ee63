//! `initialize`: implementation info and capabilities.

use serde::{Deserialize, Serialize};

use super::capabilities::ClientCapabilities;
use super::common::Icon;

/// Name and version of a client or server implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable title (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Home page (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

impl Implementation {
    /// An implementation with a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: None,
        }
    }
}

impl Default for Implementation {
    fn default() -> Self {
        Self::new("mcp-core", env!("CARGO_PKG_VERSION"))
    }
}

/// The client side of a legacy session, recorded from `initialize`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientInfo {
    /// The negotiated protocol revision.
    pub protocol_version: &'static str,
    /// The client's capabilities.
    pub capabilities: ClientCapabilities,
    /// The client's implementation info, when it sent one.
    pub implementation: Option<Implementation>,
}
