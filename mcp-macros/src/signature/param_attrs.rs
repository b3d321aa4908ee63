//! The macros' own parameter attributes: `#[arg(description = "...")]`,
//! `///` comments and `#[args]`.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn};

use crate::attr::{Args, Kind};
use crate::diag::Errors;
use crate::docs::doc_text;

/// What the macro's own attributes say about one parameter.
#[derive(Default)]
pub(crate) struct ParamAttrs {
    /// From `#[arg(description = "...")]` or a `///` comment.
    pub(crate) description: Option<String>,
    /// The `#[args]` attribute: the parameter is the whole arguments object.
    pub(crate) whole: Option<Span>,
}

/// Removes `#[arg(...)]`, `#[args]` and doc attributes from parameters
/// (they are ours), returning what they say of each parameter in order.
pub(crate) fn strip_param_attrs(func: &mut ItemFn, errors: &mut Errors) -> Vec<ParamAttrs> {
    let mut out = Vec::new();
    for input in &mut func.sig.inputs {
        let attrs = match input {
            FnArg::Typed(t) => &mut t.attrs,
            FnArg::Receiver(r) => &mut r.attrs,
        };
        let mut description = doc_text(attrs);
        let mut whole = None;
        for attr in attrs.iter() {
            if attr.path().is_ident("args") {
                match &attr.meta {
                    syn::Meta::Path(_) => whole = Some(attr.span()),
                    other => errors.spanned(
                        other,
                        "write `#[args]` alone: it takes the whole arguments object as this parameter's type",
                    ),
                }
                continue;
            }
            if !attr.path().is_ident("arg") {
                continue;
            }
            match &attr.meta {
                syn::Meta::List(list) => {
                    let args = Args::parse(
                        list.tokens.clone(),
                        "#[arg(...)]",
                        &[("description", Kind::Str)],
                        errors,
                    );
                    if let Some(lit) = args.str("description") {
                        description = Some(lit.value());
                    }
                }
                other => errors.spanned(
                    other,
                    "write `#[arg(description = \"...\")]` (or a `///` comment on the argument); to take the whole arguments object as one struct, write `#[args]`",
                ),
            }
        }
        attrs.retain(|a| {
            !a.path().is_ident("arg") && !a.path().is_ident("args") && !a.path().is_ident("doc")
        });
        out.push(ParamAttrs { description, whole });
    }
    out
}
