//! Tool arguments read straight from their JSON text, with no JSON tree in
//! between.
//!
//! One streaming pass over the text proves that the schema checker of
//! [`super::args`] would report nothing; serde then builds the typed
//! arguments from the same text. Whatever the pass cannot prove (an
//! `anyOf`, an `enum` of numbers, more than 64 required keys), any problem
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

/// [`parse_args`] for arguments still in their JSON text (an object).
///
/// # Errors
/// The same message [`parse_args`] gives for the same arguments.
pub(crate) fn parse_raw_args<T: DeserializeOwned>(
    raw: &RawValue,
    schema: &Map<String, Value>,
) -> Result<T, String> {
    if conforms(raw.get(), schema) {
        if let Ok(args) = serde_json::from_str::<T>(raw.get()) {
            return Ok(args);
        }
    }
    let args: Map<String, Value> =
        serde_json::from_str(raw.get()).map_err(|e| format!("Invalid arguments: {e}"))?;
    parse_args(args, schema)
}

/// True when the checker would find no problem in `text` against `schema`
/// (false also when this pass cannot tell).
fn conforms(text: &str, schema: &Map<String, Value>) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    Node { schema, root: true }.deserialize(&mut de).is_ok() && de.end().is_ok()
}

/// The error that ends the pass: a problem, or something it cannot prove.
/// Its text is never shown.
fn unproven<E: de::Error>() -> E {
    E::custom("")
}

/// One value and the schema node it must satisfy.
struct Node<'s> {
    schema: &'s Map<String, Value>,
    /// The arguments object itself, where unknown keys are refused.
    root: bool,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let kw = Keywords::of(self.schema);
        // Alternatives would need the value more than once.
        if kw.any_of.is_some() || kw.one_of.is_some() {
            return Err(unproven());
        }
        deserializer.deserialize_any(NodeVisitor {
            kw,
            root: self.root,
        })
    }
}

/// The JSON type of a value, as the checker's `type` keyword sees it.
#[derive(Clone, Copy)]
enum Kind {
    Null,
    Bool,
    /// `true` when the number is integral (`integer` matches it).
    Number(bool),
    String,
    Array,
    Object,
}

fn kind_matches(kind: Kind, ty: &str) -> bool {
    match ty {
        "object" => matches!(kind, Kind::Object),
        "array" => matches!(kind, Kind::Array),
        "string" => matches!(kind, Kind::String),
        "boolean" => matches!(kind, Kind::Bool),
        "null" => matches!(kind, Kind::Null),
        "number" => matches!(kind, Kind::Number(_)),
        "integer" => matches!(kind, Kind::Number(true)),
        _ => true,
    }
}

struct NodeVisitor<'s> {
    kw: Keywords<'s>,
    root: bool,
}

impl NodeVisitor<'_> {
    /// The `type` keyword.
    fn typed<E: de::Error>(&self, kind: Kind) -> Result<(), E> {
        let ok = match self.kw.ty {
            Some(Value::String(t)) => kind_matches(kind, t),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| kind_matches(kind, t)),
            _ => true,
        };
        if ok {
            Ok(())
        } else {
            Err(unproven())
        }
    }

    /// `type`, `enum` and `const` for a scalar, compared with `is`.
    fn scalar<E: de::Error>(&self, kind: Kind, is: impl Fn(&Value) -> bool) -> Result<(), E> {
        self.typed(kind)?;
        if self
            .kw
            .enumeration
            .is_some_and(|allowed| !allowed.iter().any(&is))
            || self.kw.constant.is_some_and(|expected| !is(expected))
        {
            return Err(unproven());
        }
        Ok(())
    }

    /// A number: `enum` and `const` are left to the tree (their numbers
    /// compare by representation), `minimum` and `maximum` as the checker
    /// reads them.
    fn number<E: de::Error>(&self, f: f64, integral: bool) -> Result<(), E> {
        self.typed(Kind::Number(integral))?;
        let below = self.kw.minimum.is_some_and(|min| f < min);
        let above = self.kw.maximum.is_some_and(|max| f > max);
        if self.kw.enumeration.is_some() || self.kw.constant.is_some() || below || above {
            return Err(unproven());
        }
        Ok(())
    }

    /// A container: `enum` and `const` are left to the tree.
    fn container<E: de::Error>(&self, kind: Kind) -> Result<(), E> {
        self.typed(kind)?;
        if self.kw.enumeration.is_some() || self.kw.constant.is_some() {
            return Err(unproven());
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for NodeVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar(Kind::Null, Value::is_null)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.scalar(Kind::Bool, |v| v.as_bool() == Some(b))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.scalar(Kind::String, |v| v.as_str() == Some(s))
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
        self.number(f, f.fract() == 0.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.container(Kind::Array)?;
        match self.kw.items {
            Some(schema) => {
                while seq
                    .next_element_seed(Node {
                        schema,
                        root: false,
                    })?
                    .is_some()
                {}
            }
            None => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.container(Kind::Object)?;
        let required = self.kw.required.map_or(&[][..], Vec::as_slice);
        if required.len() > 64 {
            return Err(unproven());
        }
        let closed = self.root || self.kw.closed;
        // Bit `i`: `required[i]` was seen.
        let mut seen = 0u64;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            for (i, name) in required.iter().enumerate() {
                if name.as_str() == Some(&key) {
                    seen |= 1 << i;
                }
            }
            // Without `properties` the checker looks no further.
            let Some(properties) = self.kw.properties else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            match properties.get(&*key).and_then(Value::as_object) {
                Some(schema) => map.next_value_seed(Node {
                    schema,
                    root: false,
                })?,
                None if closed => return Err(unproven()),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let missing = required
            .iter()
            .enumerate()
            .any(|(i, name)| name.is_string() && seen & (1 << i) == 0);
        if missing {
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
                "either": {"anyOf": [{"type": "string"}, {"type": "null"}]}
            },
            "required": ["text"]
        }));
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
        ];
        for (args, valid) in cases {
            let text = args.to_string();
            assert_eq!(tree_accepts(&args, &s), valid, "tree on {text}");
            if conforms(&text, &s) {
                assert!(valid, "the pass accepted {text}, which the tree refuses");
            }
        }
        // What the pass proves, it proves without the tree.
        assert!(conforms(r#"{"text":"x","count":3,"tags":["a"]}"#, &s));
        assert!(conforms(r#"{"te\u0078t":"x"}"#, &s));
        // An `anyOf` is never proven: the tree decides.
        assert!(!conforms(r#"{"text":"x","either":"y"}"#, &s));
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
        ] {
            let raw: Box<RawValue> = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"));
            let map: Map<String, Value> = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(
                parse_raw_args::<Args>(&raw, &s),
                parse_args::<Args>(map, &s),
                "{text}"
            );
        }
    }
}
