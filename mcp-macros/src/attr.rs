//! `#[mcp_*(key = value, flag, ...)]` and `#[arg(...)]` parsing.
//!
//! Every problem is collected rather than stopping at the first: an unknown
//! key names the accepted ones (with a did-you-mean), a repeated key points
//! at the repeat, a value of the wrong kind says what the key takes. A key
//! whose value is wrong still counts as given, so it is not also reported as
//! missing.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Lit, LitStr, Token};

use crate::diag::Errors;

/// One parsed value.
pub(crate) enum Value {
    Str(LitStr),
    Bool(bool),
    Path(syn::Path),
    StrList(Vec<LitStr>),
    Int(syn::LitInt),
    /// Given, but of the wrong kind (already reported).
    Invalid,
}

/// The kind of value a key takes.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// `key = "text"`.
    Str,
    /// `key`, `key = true` or `key = false`.
    Flag,
    /// `key = "a::path"` (or `key = a::path`).
    Path,
    /// `key = ["scope", ...]`: OAuth scope tokens.
    Scopes,
    /// `key = 123`: a whole number.
    Int,
}

/// Parsed attribute arguments.
pub(crate) struct Args {
    values: HashMap<String, Value>,
}

/// `key` or `key = value`.
struct Entry {
    key: Ident,
    value: Option<Expr>,
}

fn parse_entry(input: ParseStream) -> syn::Result<Entry> {
    // `Ident::parse_any` accepts keywords, for `crate = "..."`.
    let key = input.call(Ident::parse_any)?;
    let value = if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        Some(input.parse::<Expr>()?)
    } else if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        let _: TokenStream = content.parse()?;
        return Err(syn::Error::new(
            key.span(),
            format!("write `{key} = value`, not `{key}(...)`"),
        ));
    } else {
        None
    };
    Ok(Entry { key, value })
}

/// Edit distance counting a transposition of neighbours as one edit
/// (optimal string alignment), for did-you-mean suggestions.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The accepted key `key` most likely meant: one it abbreviates
/// (`desc` → `description`), else the closest within a typo's distance.
fn suggestion<'a>(key: &str, names: &[&'a str]) -> Option<&'a str> {
    let key = key.replace('-', "_").to_lowercase();
    if key.len() >= 3 {
        if let Some(n) = names
            .iter()
            .find(|n| n.starts_with(&key) || key.starts_with(**n))
        {
            return Some(n);
        }
    }
    let unspaced = key.replace('_', "");
    names
        .iter()
        .map(|n| {
            (
                distance(&key, n).min(distance(&unspaced, &n.replace('_', ""))),
                *n,
            )
        })
        .filter(|(d, n)| *d <= if n.len() <= 4 { 1 } else { 2 })
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

fn str_value(key: &str, value: Option<&Expr>, span: Span) -> Result<LitStr, syn::Error> {
    match value {
        Some(Expr::Lit(e)) => match &e.lit {
            Lit::Str(s) => Ok(s.clone()),
            other => Err(syn::Error::new_spanned(
                other,
                format!("`{key}` takes a string literal: `{key} = \"...\"`"),
            )),
        },
        Some(other) => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` takes a string literal: `{key} = \"...\"`"),
        )),
        None => Err(syn::Error::new(
            span,
            format!("`{key}` needs a value: `{key} = \"...\"`"),
        )),
    }
}

fn flag_value(key: &str, value: Option<&Expr>) -> Result<bool, syn::Error> {
    match value {
        None => Ok(true),
        Some(Expr::Lit(e)) => match &e.lit {
            Lit::Bool(b) => Ok(b.value),
            other => Err(syn::Error::new_spanned(
                other,
                format!("`{key}` is a flag: write `{key}`, `{key} = true` or `{key} = false`"),
            )),
        },
        Some(other) => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` is a flag: write `{key}`, `{key} = true` or `{key} = false`"),
        )),
    }
}

fn path_value(key: &str, value: Option<&Expr>, span: Span) -> Result<syn::Path, syn::Error> {
    let hint = format!(
        "`{key}` takes the path of the `mcp-core` crate as a string, e.g. `{key} = \"my_framework::mcp\"`"
    );
    match value {
        Some(Expr::Path(p)) if p.qself.is_none() && p.attrs.is_empty() => Ok(p.path.clone()),
        Some(Expr::Lit(e)) => match &e.lit {
            Lit::Str(s) => s
                .parse::<syn::Path>()
                .map_err(|_| syn::Error::new_spanned(s, hint)),
            other => Err(syn::Error::new_spanned(other, hint)),
        },
        Some(other) => Err(syn::Error::new_spanned(other, hint)),
        None => Err(syn::Error::new(span, hint)),
    }
}

fn int_value(key: &str, value: Option<&Expr>, span: Span) -> Result<syn::LitInt, syn::Error> {
    let hint = format!("`{key}` takes a whole number: `{key} = 50_000`");
    match value {
        Some(Expr::Lit(syn::ExprLit {
            lit: Lit::Int(n), ..
        })) => Ok(n.clone()),
        Some(other) => Err(syn::Error::new_spanned(other, hint)),
        None => Err(syn::Error::new(span, hint)),
    }
}

/// `key = ["a", "b"]`, each an OAuth scope token (RFC 6749 §3.3: visible
/// ASCII but `"` and `\`, no spaces).
fn scopes_value(key: &str, value: Option<&Expr>, span: Span) -> Result<Vec<LitStr>, syn::Error> {
    let hint = format!("`{key}` takes an array of string literals: `{key} = [\"files:read\"]`");
    let Some(Expr::Array(array)) = value else {
        return Err(match value {
            Some(other) => syn::Error::new_spanned(other, hint),
            None => syn::Error::new(span, hint),
        });
    };
    array
        .elems
        .iter()
        .map(|e| match e {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) => {
                let v = s.value();
                let token = !v.is_empty()
                    && v.bytes()
                        .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E));
                if token {
                    Ok(s.clone())
                } else {
                    Err(syn::Error::new_spanned(
                        s,
                        format!(
                            "`{v}` is not an OAuth scope: a scope is one word of visible \
                             ASCII, without spaces, quotes or backslashes"
                        ),
                    ))
                }
            }
            other => Err(syn::Error::new_spanned(other, hint.clone())),
        })
        .collect()
}

/// `.with_scopes([...])` when `scopes` was given, else nothing.
pub(crate) fn scopes_call(args: &Args) -> TokenStream {
    match args.values.get("scopes") {
        Some(Value::StrList(scopes)) if !scopes.is_empty() => {
            quote::quote!(.with_scopes([#(#scopes),*]))
        }
        _ => TokenStream::new(),
    }
}

impl Args {
    /// Parses `tokens` for the attribute `what` (e.g. `#[mcp_tool(...)]`),
    /// accepting the keys in `accepted`.
    pub(crate) fn parse(
        tokens: TokenStream,
        what: &str,
        accepted: &[(&str, Kind)],
        errors: &mut Errors,
    ) -> Self {
        let mut values: HashMap<String, Value> = HashMap::new();
        let names: Vec<&str> = accepted.iter().map(|(k, _)| *k).collect();
        let parser = |input: ParseStream| {
            Punctuated::<Entry, Token![,]>::parse_terminated_with(input, parse_entry)
        };
        let entries = match parser.parse2(tokens) {
            Ok(entries) => entries,
            Err(e) => {
                errors.push(e);
                return Self { values };
            }
        };
        for Entry { key, value } in entries {
            let name = key.unraw().to_string();
            let Some((_, kind)) = accepted.iter().find(|(k, _)| *k == name) else {
                let did_you_mean = suggestion(&name, &names)
                    .map(|s| format!("did you mean `{s}`? "))
                    .unwrap_or_default();
                errors.spanned(
                    &key,
                    format!(
                        "unknown key `{name}` in {what}; {did_you_mean}accepted keys: {}",
                        names.join(", ")
                    ),
                );
                continue;
            };
            if values.contains_key(&name) {
                errors.spanned(
                    &key,
                    format!("`{name}` is given more than once in {what}; keep one"),
                );
                continue;
            }
            let parsed = match kind {
                Kind::Str => str_value(&name, value.as_ref(), key.span()).map(Value::Str),
                Kind::Flag => flag_value(&name, value.as_ref()).map(Value::Bool),
                Kind::Path => path_value(&name, value.as_ref(), key.span()).map(Value::Path),
                Kind::Scopes => scopes_value(&name, value.as_ref(), key.span()).map(Value::StrList),
                Kind::Int => int_value(&name, value.as_ref(), key.span()).map(Value::Int),
            };
            let parsed = parsed.unwrap_or_else(|e| {
                errors.push(e);
                Value::Invalid
            });
            values.insert(name, parsed);
        }
        Self { values }
    }

    /// True when `key` was given, even with a value of the wrong kind.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    pub(crate) fn str(&self, key: &str) -> Option<&LitStr> {
        match self.values.get(key) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn flag(&self, key: &str) -> Option<bool> {
        match self.values.get(key) {
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    pub(crate) fn int(&self, key: &str) -> Option<&syn::LitInt> {
        match self.values.get(key) {
            Some(Value::Int(n)) => Some(n),
            _ => None,
        }
    }

    pub(crate) fn path(&self, key: &str) -> Option<&syn::Path> {
        match self.values.get(key) {
            Some(Value::Path(p)) => Some(p),
            _ => None,
        }
    }
}

/// The runtime path the generated code uses: `::mcp_core` or the `crate = "..."` override.
pub(crate) fn krate(args: &Args) -> TokenStream {
    if let Some(p) = args.path("crate") {
        quote::quote!(#p)
    } else {
        quote::quote!(::mcp_core)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_keys_only() {
        let names = ["name", "title", "description", "read_only", "mime_type"];
        assert_eq!(suggestion("nmae", &names), Some("name"));
        assert_eq!(suggestion("readonly", &names), Some("read_only"));
        assert_eq!(suggestion("read-only", &names), Some("read_only"));
        assert_eq!(suggestion("mime", &names), Some("mime_type"));
        assert_eq!(suggestion("desc", &names), Some("description"));
        assert_eq!(suggestion("titel", &names), Some("title"));
        assert_eq!(suggestion("colour", &names), None);
    }
}
