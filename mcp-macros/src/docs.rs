//! Doc comments → descriptions.

use syn::{Attribute, Expr, Lit, Meta};

/// The text of `///` comments (`#[doc = "..."]`), trimmed and joined.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(expr) => match &expr.lit {
                    Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    // Strip the common leading space rustdoc leaves after `///`.
    let text = lines
        .iter()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim().to_owned();
    (!text.is_empty()).then_some(text)
}
