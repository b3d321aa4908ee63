//! The ranking of `search_tools`: plain term scoring, deterministic, no
//! index kept between calls (the catalog may change at any time).
//!
//! Text is cut into *terms*: runs of letters and digits, split again where
//! a lower-case letter or digit is followed by an upper-case one
//! (`getWeather` → `get`, `weather`), all lower-cased (`read_file` and
//! `ReadFile` both give `read`, `file`). Each query term is compared with
//! the terms of five fields of a tool, each with its weight:
//!
//! | field | weight |
//! |---|---|
//! | name | 6 |
//! | title | 4 |
//! | parameter names (top-level `properties` of the input schema) | 3 |
//! | description | 2 |
//! | parameter descriptions | 1 |
//!
//! A field scores twice its weight when it holds the query term exactly,
//! its weight when one of its terms starts with a query term of three
//! characters or more (`weath` finds `weather`), else nothing; a field
//! counts once per query term however often the term appears in it. A
//! tool's score is the sum over query terms and fields, plus 20 when the
//! whole query is the tool's name. Tools scoring 0 are not matches;
//! matches are ordered by score, ties in catalog order. Only the first
//! [`MAX_TERMS`] distinct terms of a query count.

use serde_json::Value;

use crate::protocol::Tool;

/// Field weights (see the module docs).
const NAME: u32 = 6;
const TITLE: u32 = 4;
const PARAM_NAME: u32 = 3;
const DESCRIPTION: u32 = 2;
const PARAM_DESCRIPTION: u32 = 1;
/// Bonus when the query is exactly the tool's name.
const EXACT_NAME: u32 = 20;
/// Shortest query term that may match as a prefix.
const MIN_PREFIX: usize = 3;
/// Query terms past this many are ignored: a client controls the query,
/// and the cost of a search grows with its terms times the catalog.
pub(crate) const MAX_TERMS: usize = 32;

/// The terms of `text`, in order (with repeats).
pub(crate) fn terms(text: &str) -> Vec<String> {
    Terms::new(text).collect()
}

/// The terms of a text, cut one at a time (so a reader may stop early).
struct Terms<'a> {
    chars: std::str::Chars<'a>,
    /// A letter or digit read but not yet in a term: the first of the
    /// next term, after a camel-case boundary.
    carried: Option<char>,
}

impl<'a> Terms<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            chars: text.chars(),
            carried: None,
        }
    }
}

impl Iterator for Terms<'_> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        let mut current = String::new();
        let mut prev: Option<char> = None;
        let carried = self.carried.take();
        for c in carried.into_iter().chain(&mut self.chars) {
            if !c.is_alphanumeric() {
                if current.is_empty() {
                    continue;
                }
                return Some(current);
            }
            // A camel-case boundary: `aB` or `1B`.
            if c.is_uppercase() && prev.is_some_and(|p| p.is_lowercase() || p.is_numeric()) {
                self.carried = Some(c);
                return Some(current);
            }
            current.extend(c.to_lowercase());
            prev = Some(c);
        }
        (!current.is_empty()).then_some(current)
    }
}

/// A query made ready to score tools with: its distinct terms.
pub(crate) struct Query {
    /// The whole query, trimmed (for the exact-name bonus).
    whole: String,
    terms: Vec<String>,
}

impl Query {
    /// The query `text`.
    pub(crate) fn new(text: &str) -> Self {
        // Cut lazily, and no further than the last term that counts.
        let mut terms: Vec<String> = Vec::new();
        for term in Terms::new(text) {
            if !terms.contains(&term) {
                terms.push(term);
                if terms.len() == MAX_TERMS {
                    break;
                }
            }
        }
        Self {
            whole: text.trim().to_owned(),
            terms,
        }
    }

    /// True when the query has no term (it then matches every tool).
    pub(crate) fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The score of `tool` (0: not a match).
    pub(crate) fn score(&self, tool: &Tool) -> u32 {
        let name = terms(&tool.name);
        let title = tool.title.as_deref().map(terms).unwrap_or_default();
        let description = tool.description.as_deref().map(terms).unwrap_or_default();
        let (param_names, param_descriptions) = params(tool);
        let fields: [(&[String], u32); 5] = [
            (&name, NAME),
            (&title, TITLE),
            (&param_names, PARAM_NAME),
            (&description, DESCRIPTION),
            (&param_descriptions, PARAM_DESCRIPTION),
        ];
        let mut score: u32 = self
            .terms
            .iter()
            .map(|term| {
                fields
                    .iter()
                    .map(|(words, weight)| field_score(term, words, *weight))
                    .sum::<u32>()
            })
            .sum();
        if !self.whole.is_empty() && self.whole == tool.name {
            score += EXACT_NAME;
        }
        score
    }
}

/// What one field gives for one query term.
fn field_score(term: &str, words: &[String], weight: u32) -> u32 {
    if words.iter().any(|w| w == term) {
        2 * weight
    } else if term.chars().count() >= MIN_PREFIX && words.iter().any(|w| w.starts_with(term)) {
        weight
    } else {
        0
    }
}

/// The terms of the tool's parameter names and of their descriptions
/// (the top-level `properties` of its input schema).
fn params(tool: &Tool) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut descriptions = Vec::new();
    if let Some(Value::Object(properties)) = tool.input_schema.get("properties") {
        for (key, schema) in properties {
            names.extend(terms(key));
            if let Some(text) = schema.get("description").and_then(Value::as_str) {
                descriptions.extend(terms(text));
            }
        }
    }
    (names, descriptions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, schema: Value) -> Tool {
        let Value::Object(input_schema) = schema else {
            panic!("schema object")
        };
        Tool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
        }
    }

    #[test]
    fn terms_split_on_case_and_punctuation() {
        assert_eq!(terms("getWeather"), ["get", "weather"]);
        assert_eq!(terms("read_file-v2"), ["read", "file", "v2"]);
        assert_eq!(terms("HTTPServer ok"), ["httpserver", "ok"]);
        assert_eq!(terms("page2Text"), ["page2", "text"]);
        assert!(terms(" _- ").is_empty());
    }

    #[test]
    fn name_hits_outrank_description_hits() {
        let by_name = tool("weather_now", "Current conditions", json!({}));
        let by_text = tool("now", "The weather right now", json!({}));
        let q = Query::new("weather");
        assert!(q.score(&by_name) > q.score(&by_text));
        assert!(q.score(&by_text) > 0);
    }

    #[test]
    fn parameters_and_prefixes_count() {
        let t = tool(
            "lookup",
            "Looks things up",
            json!({"properties": {"cityName": {"type": "string", "description": "Where to forecast"}}}),
        );
        assert_eq!(Query::new("city").score(&t), 2 * PARAM_NAME);
        assert_eq!(Query::new("forec").score(&t), PARAM_DESCRIPTION);
        assert_eq!(Query::new("zz").score(&t), 0);
        assert_eq!(Query::new("lookup").score(&t), 2 * NAME + EXACT_NAME);
    }

    #[test]
    fn a_long_query_is_cut_to_its_first_terms() {
        let long: String = (0..10_000).map(|i| format!("w{i} ")).collect();
        let q = Query::new(&format!("{long} lookup"));
        assert_eq!(q.terms.len(), MAX_TERMS);
        let t = tool("lookup", "Looks things up", json!({}));
        assert_eq!(q.score(&t), 0, "`lookup` came after the cut");
        let repeated = Query::new(&"again ".repeat(10_000));
        assert_eq!(repeated.terms, ["again"]);
    }
}
