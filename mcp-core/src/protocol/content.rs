//! Content blocks carried by tool results and prompt messages.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::common::Annotations;
use super::resources::ResourceContents;

/// One block of content: text, image, audio, a resource link or an embedded resource.
///
/// [`Content::Raw`] is a block kept as the JSON it arrived in (a proxied
/// backend's result, forwarded intact); it is written back byte for byte
/// and never produced by deserializing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// The derived impls are wrapped below so that `Raw` is written verbatim.
#[serde(remote = "Self")]
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
    /// A block as received, not parsed (see [`RawContent`]).
    #[serde(skip)]
    Raw(RawContent),
}

/// The error of [`RawContent::new`]: the JSON given is not an object.
#[derive(Debug, Clone)]
pub struct NotAnObject(Box<RawValue>);

impl NotAnObject {
    /// The JSON text refused.
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl std::fmt::Display for NotAnObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a content block must be an object, not {}", self.0.get())
    }
}

impl std::error::Error for NotAnObject {}

/// A content block kept as JSON text: what a proxy forwards without
/// parsing it into a typed [`Content`] and writing it again.
#[derive(Debug, Clone)]
pub struct RawContent(Box<RawValue>);

impl RawContent {
    /// Keeps `raw` as a block.
    ///
    /// # Errors
    /// `raw` is not a JSON object (every content block is one).
    pub fn new(raw: Box<RawValue>) -> Result<Self, NotAnObject> {
        if raw.get().trim_start().starts_with('{') {
            Ok(Self(raw))
        } else {
            Err(NotAnObject(raw))
        }
    }

    /// The block's JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The block parsed into its typed form.
    ///
    /// # Errors
    /// The block is not a content block this crate knows.
    pub fn parse(&self) -> Result<Content, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }
}

impl PartialEq for RawContent {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Raw(raw) => raw.0.serialize(serializer),
            typed => Content::serialize(typed, serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Content::deserialize(deserializer)
    }
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

    /// The text of a text block (`None` for a [`Raw`](Self::Raw) block:
    /// [`RawContent::parse`] it first).
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
            Self::Raw(raw) => raw.get().len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(text: &str) -> RawContent {
        let value = RawValue::from_string(text.to_owned()).expect("JSON");
        RawContent::new(value).expect("an object")
    }

    #[test]
    fn a_raw_block_is_written_back_byte_for_byte() {
        // Key order, spacing and an unknown member survive.
        let text = r#"{"text":"hi \u00e9", "type":"text","x-extra":[1, 2]}"#;
        let block = Content::Raw(raw(text));
        assert_eq!(serde_json::to_string(&block).expect("serialize"), text);
        let list = serde_json::to_string(&vec![block, Content::text("b")]).expect("serialize");
        assert_eq!(list, format!(r#"[{text},{{"type":"text","text":"b"}}]"#));
    }

    #[test]
    fn typed_blocks_keep_their_wire_form_and_raw_blocks_parse_into_them() {
        let typed = Content::text("hi");
        let wire = serde_json::to_value(&typed).expect("serialize");
        assert_eq!(wire, json!({"type": "text", "text": "hi"}));
        let back: Content = serde_json::from_value(wire).expect("deserialize");
        assert_eq!(back, typed);
        assert_eq!(
            raw(r#"{"type":"text","text":"hi"}"#)
                .parse()
                .expect("parse"),
            typed
        );
        assert!(raw(r#"{"type":"nope"}"#).parse().is_err());
        let result = crate::protocol::CallToolResult::new(vec![
            Content::Raw(raw(r#"{"type":"text","text":"a"}"#)),
            Content::text("b"),
        ]);
        assert_eq!(result.text_content(), "ab", "raw text blocks count");
    }

    #[test]
    fn a_block_that_is_not_an_object_is_refused() {
        let value = RawValue::from_string("[1]".to_owned()).expect("JSON");
        assert!(RawContent::new(value).is_err());
    }
}
