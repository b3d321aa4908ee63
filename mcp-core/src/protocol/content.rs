//! Content blocks carried by tool results and prompt messages.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::Annotations;
use super::resources::ResourceContents;

/// One block of content: text, image, audio, a resource link or an embedded resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
        /// Optional annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Optional metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// A base64-encoded image.
    Image {
        /// Base64 data.
        data: String,
        /// The image MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Optional annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Optional metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// Base64-encoded audio (2025-03-26 and later).
    Audio {
        /// Base64 data.
        data: String,
        /// The audio MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Optional annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Optional metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// A link to a resource the client may read (2025-06-18 and later).
    ResourceLink(super::resources::Resource),
    /// A resource embedded in full.
    Resource {
        /// The resource contents.
        resource: ResourceContents,
        /// Optional annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Optional metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An image block from bytes (base64-encoded here).
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: super::base64::encode(bytes),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An audio block from bytes (base64-encoded here).
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Self::Audio {
            data: super::base64::encode(bytes),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// A link to a resource.
    pub fn resource_link(resource: super::resources::Resource) -> Self {
        Self::ResourceLink(resource)
    }

    /// An embedded resource.
    pub fn embedded(resource: ResourceContents) -> Self {
        Self::Resource {
            resource,
            annotations: None,
            meta: None,
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The bytes of text or base64 data this block carries: a lower bound
    /// of its JSON size, for sizing an output buffer once.
    pub(crate) fn bulk_len(&self) -> usize {
        match self {
            Self::Text { text, .. } => text.len(),
            Self::Image { data, .. } | Self::Audio { data, .. } => data.len(),
            Self::Resource { resource, .. } => {
                resource.text.as_ref().map_or(0, String::len)
                    + resource.blob.as_ref().map_or(0, String::len)
            }
            Self::ResourceLink(_) => 0,
        }
    }
}
