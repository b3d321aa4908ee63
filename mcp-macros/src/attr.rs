//! `#[mcp_*(key = value, flag, ...)]` parsing: unknown keys list the accepted
//! ones, repeated keys point at the repeat.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{LitBool, LitStr};

use crate::diag::Errors;

/// One parsed value.
pub(crate) enum Value {
    Str(LitStr),
    Bool(bool),
    Path(syn::Path),
}

/// Parsed attribute arguments.
pub(crate) struct Args {
    values: HashMap<String, Value>,
}

/// The kind of value a key takes.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Str,
    Flag,
    Path,
}

impl Args {
    pub(crate) fn parse(
        tokens: TokenStream,
        accepted: &[(&str, Kind)],
        errors: &mut Errors,
    ) -> Self {
        let mut values: HashMap<String, Value> = HashMap::new();
        let names: Vec<&str> = accepted.iter().map(|(k, _)| *k).collect();
        let parser = syn::meta::parser(|meta: ParseNestedMeta| {
            let key = meta.path.get_ident().map_or_else(
                || quote::ToTokens::to_token_stream(&meta.path).to_string(),
                ToString::to_string,
            );
            let Some((_, kind)) = accepted.iter().find(|(k, _)| *k == key) else {
                return Err(meta.error(format!(
                    "unknown key `{key}`; accepted keys: {}",
                    names.join(", ")
                )));
            };
            if values.contains_key(&key) {
                return Err(meta.error(format!("`{key}` is given more than once")));
            }
            let value = match kind {
                Kind::Str => Value::Str(meta.value()?.parse::<LitStr>()?),
                Kind::Path => {
                    let lit: LitStr = meta.value()?.parse()?;
                    Value::Path(lit.parse::<syn::Path>()?)
                }
                Kind::Flag => {
                    if meta.input.peek(syn::Token![=]) {
                        let lit: LitBool = meta.value()?.parse()?;
                        Value::Bool(lit.value)
                    } else {
                        Value::Bool(true)
                    }
                }
            };
            values.insert(key, value);
            Ok(())
        });
        if let Err(e) = parser.parse2(tokens) {
            errors.push(e);
        }
        Self { values }
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

    pub(crate) fn path(&self, key: &str) -> Option<&syn::Path> {
        match self.values.get(key) {
            Some(Value::Path(p)) => Some(p),
            _ => None,
        }
    }
}

/// The runtime path the generated code uses: `::mcp_core` or the `crate = "..."` override.
pub(crate) fn krate(args: &Args) -> TokenStream {
    match args.path("crate") {
        Some(p) => quote::quote!(#p),
        None => quote::quote!(::mcp_core),
    }
}
