//! `#[mcp_resource]`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ItemFn;

use crate::attr::{krate, Args, Kind};
use crate::diag::Errors;
use crate::docs::doc_text;
use crate::signature::{analyse, strip_param_attrs};
use crate::tool::fn_name_string;

const KEYS: &[(&str, Kind)] = &[
    ("uri", Kind::Str),
    ("name", Kind::Str),
    ("title", Kind::Str),
    ("description", Kind::Str),
    ("mime_type", Kind::Str),
    ("crate", Kind::Path),
];

/// The `{name}` / `{+name}` variables of a URI template, or an error message.
fn template_vars(uri: &str) -> Result<Vec<String>, String> {
    let mut vars = Vec::new();
    let mut rest = uri;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| "unclosed `{` in the URI template".to_owned())?;
        let expr = &after[..close];
        let name = expr.strip_prefix('+').unwrap_or(expr);
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "unsupported template expression `{{{expr}}}`: use `{{name}}` or `{{+name}}`"
            ));
        }
        vars.push(name.to_owned());
        rest = &after[close + 1..];
    }
    Ok(vars)
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let e =
                syn::Error::new(e.span(), "#[mcp_resource] goes on a function").to_compile_error();
            return quote!(#e #item);
        }
    };
    let mut errors = Errors::default();
    let attr_span = proc_macro2::Span::call_site();
    let args = Args::parse(attr, KEYS, &mut errors);
    let descriptions = strip_param_attrs(&mut func, &mut errors);
    let sig = analyse(&func, &descriptions, "resource", &mut errors);
    let krate = krate(&args);
    let fn_ident = func.sig.ident.clone();
    let uri = args.str("uri").cloned();
    let vars = match &uri {
        None => {
            errors.push(syn::Error::new(
                attr_span,
                "#[mcp_resource] needs a `uri`, e.g. #[mcp_resource(uri = \"file:///notes\")] or a template #[mcp_resource(uri = \"file:///logs/{date}\")]",
            ));
            Vec::new()
        }
        Some(lit) => match template_vars(&lit.value()) {
            Ok(v) => v,
            Err(e) => {
                errors.spanned(lit, e);
                Vec::new()
            }
        },
    };
    let plain: Vec<_> = sig.plain().collect();
    for (param, name, _, _) in &plain {
        let n = name.to_string();
        if !vars.contains(&n) {
            let msg = if vars.is_empty() {
                format!("argument `{n}` has no URI template variable: a fixed resource takes no arguments; add `{{{n}}}` to the `uri` to make it a template")
            } else {
                format!(
                    "argument `{n}` matches no variable of the URI template (variables: {})",
                    vars.join(", ")
                )
            };
            errors.spanned(&param.ty, msg);
            let _ = param;
        }
    }
    if let Some(lit) = &uri {
        for v in &vars {
            if !plain.iter().any(|(_, name, _, _)| *name == v.as_str()) {
                errors.spanned(lit, format!("URI template variable `{v}` has no matching function argument; add `{v}: String` (or any `FromStr` type)"));
            }
        }
    }
    let name = args
        .str("name")
        .map_or_else(|| fn_name_string(&fn_ident), syn::LitStr::value);
    let description = args
        .str("description")
        .map(syn::LitStr::value)
        .or_else(|| doc_text(&func.attrs));
    let vis = &func.vis;
    let doc = format!("MCP resource `{name}`: `{fn_ident}::resource()` returns its descriptor.");
    let body = if errors.is_empty() {
        let ctx = format_ident!("__mcp_ctx");
        let uri = uri.map(|l| l.value()).unwrap_or_default();
        let ctor = if vars.is_empty() {
            quote!(new)
        } else {
            quote!(template)
        };
        let parse = plain.iter().map(|(param, name, _, _)| {
            let local = &param.local;
            let ty = &param.ty;
            let key = name.to_string();
            quote_spanned! {syn::spanned::Spanned::span(ty)=>
                let #local: #ty = #krate::__private::template_var::<#ty>(&__mcp_req.vars, #key)?;
            }
        });
        let bind = sig.bind_injected(&krate, &ctx);
        let call = sig.call(&fn_ident, &ctx);
        let mut chain = quote!();
        if let Some(d) = description {
            chain.extend(quote!(.with_description(#d)));
        }
        if let Some(m) = args.str("mime_type") {
            chain.extend(quote!(.with_mime_type(#m)));
        }
        if let Some(t) = args.str("title") {
            chain.extend(quote!(.with_title(#t)));
        }
        let convert = quote_spanned! {sig.ret_span=>
            #krate::IntoResourceContents::into_contents(#call)
        };
        quote! {
            #krate::McpResourceDef::#ctor(#uri, #name, |__mcp_req: #krate::ResourceRequest, #ctx: #krate::InvokeContext| async move {
                #(#parse)*
                #bind
                #convert
            })
            #chain
        }
    } else {
        quote!(::core::unimplemented!())
    };
    let errs = errors.to_compile_errors();
    quote! {
        #func

        #[doc = #doc]
        #[allow(non_camel_case_types, dead_code, clippy::all, clippy::pedantic)]
        #vis enum #fn_ident {}

        #[allow(dead_code, clippy::all, clippy::pedantic)]
        impl #fn_ident {
            #[doc = #doc]
            #vis fn resource() -> #krate::McpResourceDef {
                #body
            }
        }

        #errs
    }
}
