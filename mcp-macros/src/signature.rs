//! Inspecting the annotated function: receiver, parameters, return type.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{FnArg, GenericArgument, Ident, ItemFn, Pat, PathArguments, ReturnType, Type};

use crate::diag::Errors;
use crate::docs::doc_text;

/// What one parameter is.
pub(crate) enum ParamKind {
    /// The invoke context, by value or by reference.
    Context { by_ref: bool },
    /// `State<T>`: injected application state.
    State { inner: Type },
    /// A plain argument from the client.
    Plain {
        name: Ident,
        optional: bool,
        description: Option<String>,
    },
}

/// One parameter, in signature order.
pub(crate) struct Param {
    pub(crate) kind: ParamKind,
    pub(crate) ty: Type,
    /// The local the generated code binds this parameter to.
    pub(crate) local: Ident,
}

/// The analysed signature.
pub(crate) struct Signature {
    pub(crate) params: Vec<Param>,
    pub(crate) is_async: bool,
    pub(crate) ret_span: proc_macro2::Span,
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// The `T` of `Name<T>` when the type's last path segment is `Name`.
pub(crate) fn generic_of<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let seg = last_segment(ty)?;
    if seg.ident != name {
        return None;
    }
    match &seg.arguments {
        PathArguments::AngleBracketed(args) if args.args.len() == 1 => match args.args.first() {
            Some(GenericArgument::Type(t)) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// True when the type's last path segment is `name` with no generics.
pub(crate) fn is_named(ty: &Type, name: &str) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == name && s.arguments.is_empty())
}

/// Removes `#[arg(...)]` and doc attributes from parameters (they are ours),
/// returning the description of each parameter in order.
pub(crate) fn strip_param_attrs(func: &mut ItemFn, errors: &mut Errors) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for input in &mut func.sig.inputs {
        let attrs = match input {
            FnArg::Typed(t) => &mut t.attrs,
            FnArg::Receiver(r) => &mut r.attrs,
        };
        let mut description = doc_text(attrs);
        for attr in attrs.iter().filter(|a| a.path().is_ident("arg")) {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("description") {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    description = Some(lit.value());
                    Ok(())
                } else {
                    Err(meta.error("unknown key in #[arg(...)]; accepted keys: description"))
                }
            });
            if let Err(e) = result {
                errors.push(e);
            }
        }
        attrs.retain(|a| !a.path().is_ident("arg") && !a.path().is_ident("doc"));
        out.push(description);
    }
    out
}

/// Checks the function shape shared by all three macros and classifies its parameters.
pub(crate) fn analyse(
    func: &ItemFn,
    descriptions: &[Option<String>],
    what: &str,
    errors: &mut Errors,
) -> Signature {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() {
        errors.spanned(
            &sig.generics,
            format!("an MCP {what} cannot be generic: its schema must be known at compile time; use concrete types"),
        );
    }
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        errors.spanned(unsafety, format!("an MCP {what} cannot be an `unsafe fn`"));
    }
    if let Some(constness) = &sig.constness {
        errors.spanned(constness, format!("an MCP {what} cannot be a `const fn`"));
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, format!("an MCP {what} cannot be variadic"));
    }
    let mut params = Vec::new();
    let mut contexts = 0;
    for (i, input) in sig.inputs.iter().enumerate() {
        let typed = match input {
            FnArg::Receiver(r) => {
                errors.spanned(
                    r,
                    format!(
                        "an MCP {what} cannot take `self`; write a free function and receive application state as an argument `State(value): State<T>` registered with `McpServer::builder().state(value)`"
                    ),
                );
                continue;
            }
            FnArg::Typed(t) => t,
        };
        let ty = (*typed.ty).clone();
        let local = format_ident!("__mcp_arg{}", i);
        let by_ref_ctx = match &ty {
            Type::Reference(r) if is_named(&r.elem, "InvokeContext") => Some(true),
            t if is_named(t, "InvokeContext") => Some(false),
            _ => None,
        };
        if let Some(by_ref) = by_ref_ctx {
            contexts += 1;
            if contexts > 1 {
                errors.spanned(typed, "the invoke context can be received only once");
            }
            params.push(Param {
                kind: ParamKind::Context { by_ref },
                ty,
                local,
            });
            continue;
        }
        if let Some(inner) = generic_of(&ty, "State") {
            params.push(Param {
                kind: ParamKind::State {
                    inner: inner.clone(),
                },
                ty: ty.clone(),
                local,
            });
            continue;
        }
        let name = match &*typed.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                errors.spanned(
                    other,
                    "unsupported argument pattern: name the argument (`text: String`); its name becomes the JSON property",
                );
                continue;
            }
        };
        if let Type::Reference(r) = &ty {
            errors.spanned(
                r,
                "arguments from the client must be owned types: use `String` instead of `&str`, `Vec<T>` instead of `&[T]`",
            );
            continue;
        }
        if let Type::ImplTrait(t) = &ty {
            errors.spanned(
                t,
                "`impl Trait` arguments are not supported: use a concrete type",
            );
            continue;
        }
        let optional = generic_of(&ty, "Option").is_some();
        let name_str = name.to_string();
        let name = syn::Ident::new(name_str.trim_start_matches("r#"), name.span());
        params.push(Param {
            kind: ParamKind::Plain {
                name,
                optional,
                description: descriptions.get(i).cloned().flatten(),
            },
            ty,
            local,
        });
    }
    let ret_span = match &sig.output {
        ReturnType::Default => sig.ident.span(),
        ReturnType::Type(_, ty) => syn::spanned::Spanned::span(ty),
    };
    Signature {
        params,
        is_async: sig.asyncness.is_some(),
        ret_span,
    }
}

impl Signature {
    /// Statements that bind injected parameters (`State<T>`) from `ctx`.
    pub(crate) fn bind_injected(&self, krate: &TokenStream, ctx: &Ident) -> TokenStream {
        let binds = self.params.iter().filter_map(|p| match &p.kind {
            ParamKind::State { inner } => {
                let local = &p.local;
                Some(quote! {
                    let #local = match #krate::__private::state::<#inner>(&#ctx) {
                        ::core::result::Result::Ok(value) => value,
                        ::core::result::Result::Err(error) => ::core::panic!("{}", error.message),
                    };
                })
            }
            _ => None,
        });
        quote!(#(#binds)*)
    }

    /// The call of the user's function with every parameter in order.
    pub(crate) fn call(&self, func: &Ident, ctx: &Ident) -> TokenStream {
        let args = self.params.iter().map(|p| match &p.kind {
            ParamKind::Context { by_ref: true } => quote!(&#ctx),
            ParamKind::Context { by_ref: false } => quote!(::core::clone::Clone::clone(&#ctx)),
            _ => {
                let local = &p.local;
                quote!(#local)
            }
        });
        let call = quote!(#func(#(#args),*));
        if self.is_async {
            quote!(#call.await)
        } else {
            call
        }
    }

    pub(crate) fn plain(&self) -> impl Iterator<Item = (&Param, &Ident, bool, Option<&String>)> {
        self.params.iter().filter_map(|p| match &p.kind {
            ParamKind::Plain {
                name,
                optional,
                description,
            } => Some((p, name, *optional, description.as_ref())),
            _ => None,
        })
    }
}
