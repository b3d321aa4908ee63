//! Tool arguments read straight from their JSON text, with no JSON tree in
//! between.
//!
//! One streaming pass over the text proves that the schema checker of
//! [`super::args`] would report nothing; serde then builds the typed
//! arguments from the same text. Whatever the pass cannot prove (an
//! `anyOf`, an `enum` of numbers, more than 64 required keys, a `null`
//! standing for an absent optional argument), any problem
//! it meets and any serde error take the tree path instead, which reports
//! exactly what it always has: this module changes the cost of good
//! arguments, never the answer to bad ones.

use std::borrow::Cow;
use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::args::{parse_args, Keywords};

/// A tool's input schema, with what the streaming pass reads of it
/// compiled once.
pub(crate) struct CheckedSchema {
    /// The schema itself, for the tree path.
    pub(crate) tree: Map<String, Value>,
    root: Node,
}

impl CheckedSchema {
    /// Compiles `tree`.
    pub(crate) fn new(tree: Map<String, Value>) -> Self {
        let root = Node::compile(&tree, 0);
        Self { tree, root }
    }
}

/// [`parse_args`] for arguments still in their JSON text (an object).
///
/// # Errors
/// The same message [`parse_args`] gives for the same arguments.
pub(crate) fn parse_raw_args<T: DeserializeOwned>(
    raw: &RawValue,
    schema: &CheckedSchema,
) -> Result<T, String> {
    if conforms(raw.get(), &schema.root) {
        if let Ok(args) = serde_json::from_str::<T>(raw.get()) {
            return Ok(args);
        }
    }
    let args: Map<String, Value> =
        serde_json::from_str(raw.get()).map_err(|e| format!("Invalid arguments: {e}"))?;
    parse_args(args, &schema.tree)
}

/// True when the checker would find no problem in `text` against the
/// schema (false also when this pass cannot tell).
fn conforms(text: &str, root: &Node) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    At {
        node: root,
        root: true,
    }
    .deserialize(&mut de)
    .is_ok()
        && de.end().is_ok()
}

/// −2⁶³: a JSON number at or below it that is not an `i64` is read as a float.
const BEYOND_I64: f64 = -9_223_372_036_854_775_808.0;
/// 2⁶⁴: a JSON number at or above it is past `u64` and read as a float.
const BEYOND_U64: f64 = 18_446_744_073_709_551_616.0;

/// The error that ends the pass: a problem, or something it cannot prove.
/// Its text is never shown.
fn unproven<E: de::Error>() -> E {
    E::custom("")
}

/// The kinds of JSON value, as bits, the way the checker's `type` sees them.
mod kind {
    pub(super) const NULL: u8 = 1;
    pub(super) const BOOL: u8 = 2;
    /// A number with no fractional part (`integer` and `number` match it).
    pub(super) const INTEGRAL: u8 = 4;
    /// Any other number (only `number` matches it).
    pub(super) const FRACTIONAL: u8 = 8;
    pub(super) const STRING: u8 = 16;
    pub(super) const ARRAY: u8 = 32;
    pub(super) const OBJECT: u8 = 64;
    pub(super) const ANY: u8 = 127;

    /// What a `type` name admits (an unknown name admits anything).
    pub(super) fn of(name: &str) -> u8 {
        match name {
            "object" => OBJECT,
            "array" => ARRAY,
            "string" => STRING,
            "boolean" => BOOL,
            "null" => NULL,
            "number" => INTEGRAL | FRACTIONAL,
            "integer" => INTEGRAL,
            _ => ANY,
        }
    }
}

/// One schema node as the pass reads it, compiled from what
/// [`Keywords::of`] finds in it.
struct Node {
    /// `anyOf` or `oneOf`: alternatives would need the value more than once.
    unprovable: bool,
    /// The kinds `type` admits.
    kinds: u8,
    enumeration: Option<Vec<Value>>,
    constant: Option<Value>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    items: Option<Box<Node>>,
    /// Each property with its schema (`None`: not an object, which the
    /// checker treats as an unknown key).
    properties: Option<Vec<(String, Option<Node>)>>,
    /// The names in `required` (the checker skips any other entry).
    required: Vec<String>,
    closed: bool,
}

/// Deeper schemas than this are left to the tree.
const MAX_DEPTH: usize = 64;

impl Node {
    fn compile(schema: &Map<String, Value>, depth: usize) -> Self {
        if depth > MAX_DEPTH {
            return Self::unprovable();
        }
        let kw = Keywords::of(schema);
        let kinds = match kw.ty {
            Some(Value::String(t)) => kind::of(t),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .fold(0, |k, t| k | kind::of(t)),
            _ => kind::ANY,
        };
        let deeper = |sub: &Map<String, Value>| Self::compile(sub, depth + 1);
        // Alternatives that only list strings (an enum of names) are an
        // enumeration, which the pass reads; any others need the tree.
        let alternatives = kw.any_of.is_some() || kw.one_of.is_some();
        let listing = alternatives
            .then(|| crate::schema::alternatives_listing(schema))
            .flatten()
            .map(|listing| {
                listing
                    .into_iter()
                    .flat_map(|(values, _)| values)
                    .cloned()
                    .collect::<Vec<Value>>()
            });
        let unprovable = alternatives && listing.is_none();
        let enumeration = match (kw.enumeration, listing) {
            (Some(listed), Some(alternatives)) => Some(
                listed
                    .iter()
                    .filter(|v| alternatives.contains(v))
                    .cloned()
                    .collect(),
            ),
            (Some(listed), None) => Some(listed.clone()),
            (None, alternatives) => alternatives,
        };
        Self {
            unprovable,
            kinds,
            enumeration,
            constant: kw.constant.cloned(),
            minimum: kw.minimum,
            maximum: kw.maximum,
            items: kw.items.map(|items| Box::new(deeper(items))),
            properties: kw.properties.map(|props| {
                props
                    .iter()
                    .map(|(name, sub)| (name.clone(), sub.as_object().map(deeper)))
                    .collect()
            }),
            required: kw
                .required
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            closed: kw.closed,
        }
    }
}

impl Node {
    /// A node the pass leaves to the tree, whatever its value.
    fn unprovable() -> Self {
        Self {
            unprovable: true,
            kinds: kind::ANY,
            enumeration: None,
            constant: None,
            minimum: None,
            maximum: None,
            items: None,
            properties: None,
            required: Vec::new(),
            closed: false,
        }
    }
}

/// A value and the node it must satisfy.
struct At<'s> {
    node: &'s Node,
    /// The arguments object itself, where unknown keys are refused.
    root: bool,
}

impl<'de> DeserializeSeed<'de> for At<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.node.unprovable {
            return Err(unproven());
        }
        deserializer.deserialize_any(self)
    }
}

impl At<'_> {
    /// The `type` keyword.
    fn typed<E: de::Error>(&self, kind: u8) -> Result<(), E> {
        if self.node.kinds & kind == 0 {
            return Err(unproven());
        }
        Ok(())
    }

    /// `type`, `enum` and `const` for a scalar, compared with `is`.
    fn scalar<E: de::Error>(&self, kind: u8, is: impl Fn(&Value) -> bool) -> Result<(), E> {
        self.typed(kind)?;
        let node = self.node;
        if node
            .enumeration
            .as_ref()
            .is_some_and(|allowed| !allowed.iter().any(&is))
            || node.constant.as_ref().is_some_and(|expected| !is(expected))
        {
            return Err(unproven());
        }
        Ok(())
    }

    /// A number: `enum` and `const` are left to the tree (their numbers
    /// compare by representation), `minimum` and `maximum` as the checker
    /// reads them.
    fn number<E: de::Error>(&self, f: f64, integral: bool) -> Result<(), E> {
        self.typed(if integral {
            kind::INTEGRAL
        } else {
            kind::FRACTIONAL
        })?;
        let node = self.node;
        let below = node.minimum.is_some_and(|min| f < min);
        let above = node.maximum.is_some_and(|max| f > max);
        if node.enumeration.is_some() || node.constant.is_some() || below || above {
            return Err(unproven());
        }
        Ok(())
    }

    /// A container: `enum` and `const` are left to the tree.
    fn container<E: de::Error>(&self, kind: u8) -> Result<(), E> {
        self.typed(kind)?;
        if self.node.enumeration.is_some() || self.node.constant.is_some() {
            return Err(unproven());
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for At<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar(kind::NULL, Value::is_null)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.scalar(kind::BOOL, |v| v.as_bool() == Some(b))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.scalar(kind::STRING, |v| v.as_str() == Some(s))
    }

    #[allow(clippy::cast_precision_loss)] // as `Number::as_f64` reads it
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        self.number(n as f64, true)
    }

    #[allow(clippy::cast_precision_loss)] // as `Number::as_f64` reads it
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        self.number(n as f64, true)
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<(), E> {
        // An integer past 64 bits, or `-0`: a tree holds it as a float,
        // which an `i128` or `u128` argument refuses, while serde_json reads
        // the text of one as a whole integer. Left to the tree, so both
        // paths answer alike.
        if f <= BEYOND_I64 || f >= BEYOND_U64 || (f == 0.0 && f.is_sign_negative()) {
            return Err(unproven());
        }
        self.number(f, f.fract() == 0.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.container(kind::ARRAY)?;
        match &self.node.items {
            Some(node) => while seq.next_element_seed(At { node, root: false })?.is_some() {},
            None => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.container(kind::OBJECT)?;
        let node = self.node;
        let required = &node.required;
        if required.len() > 64 {
            return Err(unproven());
        }
        let closed = self.root || node.closed;
        // Bit `i`: `required[i]` was seen.
        let mut seen = 0u64;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            for (i, name) in required.iter().enumerate() {
                if *name == key {
                    seen |= 1 << i;
                }
            }
            // Without `properties` the checker looks no further.
            let Some(properties) = &node.properties else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            // A `null` the checker reads as absent (an optional property
            // whose schema does not take `null`) fails its node here, so the
            // tree decides: it drops the key before deserializing, which
            // the text cannot.
            match properties.iter().find(|(name, _)| *name == key) {
                Some((_, Some(node))) => map.next_value_seed(At { node, root: false })?,
                _ if closed => return Err(unproven()),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let all = if required.len() == 64 {
            u64::MAX
        } else {
            (1u64 << required.len()) - 1
        };
        if seen != all {
            return Err(unproven());
        }
        Ok(())
    }
}

/// An object key, borrowed from the text unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the tree checker says about `args` (true: no problem).
    fn tree_accepts(args: &Value, schema: &Map<String, Value>) -> bool {
        parse_args::<Value>(args.as_object().cloned().unwrap_or_default(), schema).is_ok()
    }

    fn schema(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_pass_never_accepts_what_the_tree_refuses() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "count": {"type": "integer", "minimum": 0, "maximum": 10},
                "ratio": {"type": "number"},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "flag": {"type": ["boolean", "null"]},
                "inner": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "required": ["a"],
                    "additionalProperties": false
                },
                "free": {"type": "object"},
                "either": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "named": {"oneOf": [
                    {"type": "string", "const": "red", "description": "Warm."},
                    {"type": "string", "enum": ["blue"]}
                ]},
                "small": {"type": "integer", "minimum": 0, "maximum": 255}
            },
            "required": ["text"]
        }));
        let compiled = CheckedSchema::new(s.clone());
        let cases = [
            (json!({"text": "x"}), true),
            (
                json!({"text": "x", "count": 3, "ratio": 1, "mode": "fast"}),
                true,
            ),
            (json!({"text": "x", "count": 3.0}), true),
            (json!({"text": "x", "tags": ["a", "b"], "flag": null}), true),
            (
                json!({"text": "x", "inner": {"a": "y"}, "free": {"any": [1, {}]}}),
                true,
            ),
            (json!({}), false),
            (json!({"text": 1}), false),
            (json!({"text": "x", "count": 11}), false),
            (json!({"text": "x", "count": -1}), false),
            (json!({"text": "x", "count": 1.5}), false),
            (json!({"text": "x", "mode": "medium"}), false),
            (json!({"text": "x", "tags": ["a", 2]}), false),
            (json!({"text": "x", "flag": "yes"}), false),
            (json!({"text": "x", "inner": {}}), false),
            (json!({"text": "x", "inner": {"a": "y", "b": 1}}), false),
            (json!({"text": "x", "extra": true}), false),
            (json!({"text": "x", "either": 1}), false),
            (json!({"text": "x", "named": "red"}), true),
            (json!({"text": "x", "named": "blue"}), true),
            (json!({"text": "x", "named": "green"}), false),
            (json!({"text": "x", "named": 1}), false),
            (json!({"text": "x", "small": 300}), false),
            (json!({"text": "x", "small": -1}), false),
            // `null` for an optional property is absent to the tree; the
            // pass leaves it to the tree.
            (json!({"text": "x", "count": null, "named": null}), true),
            (json!({"text": null}), false),
        ];
        for (args, valid) in cases {
            let text = args.to_string();
            assert_eq!(tree_accepts(&args, &s), valid, "tree on {text}");
            if conforms(&text, &compiled.root) {
                assert!(valid, "the pass accepted {text}, which the tree refuses");
            }
        }
        // What the pass proves, it proves without the tree.
        assert!(conforms(
            r#"{"text":"x","count":3,"tags":["a"]}"#,
            &compiled.root
        ));
        assert!(conforms(r#"{"te\u0078t":"x"}"#, &compiled.root));
        // An `anyOf` is never proven: the tree decides.
        assert!(!conforms(r#"{"text":"x","either":"y"}"#, &compiled.root));
        // Alternatives that only list names are an enumeration it proves.
        assert!(conforms(r#"{"text":"x","named":"red"}"#, &compiled.root));
        assert!(!conforms(r#"{"text":"x","count":null}"#, &compiled.root));
    }

    #[test]
    fn a_schema_deeper_than_the_pass_reads_is_left_to_the_tree() {
        let mut node = json!({"type": "string"});
        for _ in 0..(MAX_DEPTH + 10) {
            node = json!({"type": "array", "items": node});
        }
        let s = CheckedSchema::new(schema(json!({
            "type": "object", "properties": {"deep": node}
        })));
        let shallow = format!(r#"{{"deep":{}{}}}"#, "[".repeat(3), "]".repeat(3));
        assert!(conforms(&shallow, &s.root));
        let deep = format!(r#"{{"deep":{}"x"{}}}"#, "[".repeat(80), "]".repeat(80));
        assert!(!conforms(&deep, &s.root));
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Args {
        text: String,
        count: Option<u8>,
    }

    #[test]
    fn answers_match_the_tree_path() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "count": {"type": ["integer", "null"], "format": "uint8", "minimum": 0}
            },
            "required": ["text"]
        }));
        for text in [
            r#"{"text":"hi"}"#,
            r#"{"text":"hi","count":7}"#,
            r#"{"text":"hi","count":700}"#,
            r#"{"text":"hi","text":"again"}"#,
            r#"{"count":1}"#,
            r#"{"text":"hi","cuont":1}"#,
            r#"{"text":"hi","count":null}"#,
            r#"{"text":null}"#,
            r#"{"text":null,"count":null}"#,
        ] {
            let raw: Box<RawValue> = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"));
            let map: Map<String, Value> = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(
                parse_raw_args::<Args>(&raw, &CheckedSchema::new(s.clone())),
                parse_args::<Args>(map, &s),
                "{text}"
            );
        }
    }
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Wide {
        n: i128,
    }

    /// A tree holds an integer past 64 bits (and `-0`) as a float, which an
    /// `i128` refuses; the text would give it whole. Found by the `tool_arguments`
    /// fuzz target: both paths must answer alike.
    #[test]
    fn integers_past_64_bits_get_the_tree_answer() {
        let s = schema(json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "format": "int128"}},
            "required": ["n"]
        }));
        for text in [
            r#"{"n":-170141183460469231731687303715884105728}"#,
            r#"{"n":-9223372036854775809}"#,
            r#"{"n":18446744073709551616}"#,
            r#"{"n":18446744073709551615}"#,
            r#"{"n":-9223372036854775808}"#,
            r#"{"n":1e30}"#,
            r#"{"n":-0}"#,
            r#"{"n":-0.0}"#,
            r#"{"n":0}"#,
        ] {
            let raw: Box<RawValue> = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"));
            let map: Map<String, Value> = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(
                parse_raw_args::<Wide>(&raw, &CheckedSchema::new(s.clone())),
                parse_args::<Wide>(map, &s),
                "{text}"
            );
        }
    }
}
