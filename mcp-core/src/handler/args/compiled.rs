//! A tool's input schema in the form the argument checker reads: every
//! keyword it looks at read once, when the tool is registered, instead of
//! being looked up by name in the schema's JSON on every call.
//!
//! This is only a representation: [`check`](super::check) is still the one
//! checker, and it reads every keyword the way it read the JSON (what a
//! keyword of the wrong JSON type means, the order of the checks, the text
//! of every message) — the tests in `super::tests` run through it.

use serde_json::{Map, Value};

/// A JSON Schema object, compiled for [`check`](super::check).
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    /// `type`: a name, or a list of names (its non-string items left out);
    /// `None` when absent or of another JSON type (anything fits).
    pub(super) types: Option<Vec<(Ty, String)>>,
    /// `format`, when a string.
    pub(super) format: Option<String>,
    /// `enum`, when an array.
    pub(super) enumeration: Option<Vec<Value>>,
    /// `const`.
    pub(super) constant: Option<Value>,
    /// The values of an enumeration written as alternatives
    /// (`crate::schema::alternatives_listing`), when `anyOf` or `oneOf` is
    /// an array and every alternative is such a listing.
    pub(super) listing: Option<Vec<Value>>,
    /// `anyOf` and `oneOf`, when arrays.
    pub(super) any_of: Option<Alternatives>,
    pub(super) one_of: Option<Alternatives>,
    /// `minimum` and `maximum`, when numbers.
    pub(super) minimum: Option<f64>,
    pub(super) maximum: Option<f64>,
    /// `maxLength`, when a non-negative integer: the most characters
    /// (Unicode code points) a string may have.
    pub(super) max_length: Option<u64>,
    /// `items`, when an object.
    pub(super) items: Option<Box<Node>>,
    /// `properties`, when an object.
    pub(super) properties: Option<Properties>,
    /// The string members of `required`, when an array.
    pub(super) required: Option<Vec<String>>,
    /// `additionalProperties: false`.
    pub(super) closed: bool,
    /// Whether `null` passes this schema (read when an optional property
    /// is given `null`: see `absent_null`).
    pub(super) takes_null: bool,
}

/// A JSON type name of `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    Object,
    Array,
    String,
    Boolean,
    Null,
    Number,
    Integer,
    /// A name JSON Schema does not define: every value fits it.
    Other,
}

impl Ty {
    fn of(name: &str) -> Self {
        match name {
            "object" => Self::Object,
            "array" => Self::Array,
            "string" => Self::String,
            "boolean" => Self::Boolean,
            "null" => Self::Null,
            "number" => Self::Number,
            "integer" => Self::Integer,
            _ => Self::Other,
        }
    }
}

/// The alternatives of `anyOf` or `oneOf`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Alternatives {
    /// The alternatives that are objects (the others are never matched).
    pub(super) shapes: Vec<Node>,
    /// How many alternatives the array holds (for the message).
    pub(super) count: usize,
}

/// The members of `properties`, in the schema's order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Properties {
    entries: Vec<Property>,
    /// Positions in `entries` sorted by name, for a lookup by halving when
    /// there are many.
    sorted: Vec<usize>,
}

/// One member of `properties`.
#[derive(Debug, Clone)]
pub(super) struct Property {
    pub(super) name: String,
    /// Its schema (`true` compiled as the empty schema); `None` when it is
    /// `false` or not a schema, and the key is then refused as unknown.
    pub(super) node: Option<Node>,
    /// A `null` given for it stands for "absent": it is not required and
    /// its schema does not take `null`.
    pub(super) null_is_absent: bool,
}

/// Up to this many properties are looked up one by one.
const SCAN: usize = 8;

impl Properties {
    /// The property named `key`.
    pub(super) fn get(&self, key: &str) -> Option<&Property> {
        if self.entries.len() <= SCAN {
            return self.entries.iter().find(|p| p.name == key);
        }
        self.sorted
            .binary_search_by(|&i| self.entries[i].name.as_str().cmp(key))
            .ok()
            .map(|i| &self.entries[self.sorted[i]])
    }

    /// The property names, in the schema's order.
    pub(super) fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|p| p.name.as_str()).collect()
    }
}

impl Node {
    /// Compiles `schema` (and every schema inside it that the checker reads).
    pub(crate) fn compile(schema: &Map<String, Value>) -> Self {
        let mut node = Self::default();
        let mut properties = None;
        for (key, value) in schema {
            match key.as_str() {
                "type" => {
                    node.types = match value {
                        Value::String(t) => Some(vec![(Ty::of(t), t.clone())]),
                        Value::Array(ts) => Some(
                            ts.iter()
                                .filter_map(Value::as_str)
                                .map(|t| (Ty::of(t), t.to_owned()))
                                .collect(),
                        ),
                        _ => None,
                    }
                }
                "format" => node.format = value.as_str().map(str::to_owned),
                "enum" => node.enumeration = value.as_array().cloned(),
                "const" => node.constant = Some(value.clone()),
                "anyOf" => node.any_of = value.as_array().map(|a| Alternatives::compile(a)),
                "oneOf" => node.one_of = value.as_array().map(|a| Alternatives::compile(a)),
                "minimum" => node.minimum = value.as_f64(),
                "maximum" => node.maximum = value.as_f64(),
                "maxLength" => node.max_length = value.as_u64(),
                "items" => node.items = value.as_object().map(|s| Box::new(Self::compile(s))),
                "properties" => properties = value.as_object(),
                "required" => {
                    node.required = value.as_array().map(|r| {
                        r.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    });
                }
                "additionalProperties" => node.closed = *value == Value::Bool(false),
                _ => {}
            }
        }
        if node.any_of.is_some() || node.one_of.is_some() {
            node.listing = crate::schema::alternatives_listing(schema).map(|listing| {
                listing
                    .iter()
                    .flat_map(|(values, _)| values.iter().map(|v| (*v).clone()))
                    .collect()
            });
        }
        node.properties = properties.map(|p| node.compile_properties(p));
        node.takes_null = super::fits(&Value::Null, &node);
        node
    }

    fn compile_properties(&self, properties: &Map<String, Value>) -> Properties {
        let entries: Vec<Property> = properties
            .iter()
            .map(|(name, sub)| {
                // `true` (what schemars writes for `serde_json::Value`)
                // takes any value: the empty schema. `false` and other
                // non-objects stay unknown keys: no value fits them.
                let node = match sub {
                    Value::Bool(true) => Some(Self::compile(&Map::new())),
                    _ => sub.as_object().map(Self::compile),
                };
                let required = self
                    .required
                    .as_ref()
                    .is_some_and(|r| r.iter().any(|n| n == name));
                Property {
                    name: name.clone(),
                    null_is_absent: !required && node.as_ref().is_some_and(|n| !n.takes_null),
                    node,
                }
            })
            .collect();
        let mut sorted: Vec<usize> = (0..entries.len()).collect();
        sorted.sort_by(|&a, &b| entries[a].name.cmp(&entries[b].name));
        Properties { entries, sorted }
    }

    /// The type names `type` lists, for a message.
    pub(super) fn expected_types(&self) -> Option<Vec<&str>> {
        self.types
            .as_ref()
            .map(|ts| ts.iter().map(|(_, name)| name.as_str()).collect())
    }
}

impl Alternatives {
    fn compile(alternatives: &[Value]) -> Self {
        Self {
            shapes: alternatives
                .iter()
                .filter_map(Value::as_object)
                .map(Node::compile)
                .collect(),
            count: alternatives.len(),
        }
    }
}
