//! `#[mcp_resource]`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::ItemFn;

use crate::attr::{krate, Args, Kind};
use crate::diag::Errors;
use crate::docs::doc_text;
use crate::expand::{emit, not_a_function, Descriptor};
use crate::signature::{analyse, respan, strip_param_attrs, Signature, TypedArg};
use crate::tool::fn_name_string;

const KEYS: &[(&str, Kind)] = &[
    ("uri", Kind::Str),
    ("name", Kind::Str),
    ("title", Kind::Str),
    ("description", Kind::Str),
    ("mime_type", Kind::Str),
    ("scopes", Kind::Scopes),
    ("crate", Kind::Path),
];

/// The `{name}` / `{+name}` variables of a URI template, or an error message.
fn template_vars(uri: &str) -> Result<Vec<String>, String> {
    let mut vars: Vec<String> = Vec::new();
    let mut rest = uri;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err("unmatched `}` in the URI template".to_owned());
        }
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or_else(|| {
            "unclosed `{` in the URI template: close each variable, as in `file:///logs/{date}`"
                .to_owned()
        })?;
        let expr = &after[..close];
        let name = expr.strip_prefix('+').unwrap_or(expr);
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "unsupported template expression `{{{expr}}}`: use `{{name}}` or `{{+name}}` (a name of letters, digits and `_`)"
            ));
        }
        if vars.iter().any(|v| v == name) {
            return Err(format!(
                "the URI template uses `{{{name}}}` twice; each variable binds one argument"
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
        Err(e) => return not_a_function(Descriptor::Resource, item, &e),
    };
    let mut errors = Errors::default();
    let args = Args::parse(attr, "#[mcp_resource(...)]", KEYS, &mut errors);
    let attrs = strip_param_attrs(&mut func, &mut errors);
    let sig = analyse(&func, &attrs, "resource", &mut errors);
    let krate = krate(&args);
    let fn_ident = func.sig.ident.clone();
    let uri = args.str("uri").cloned();
    // `None` when the variables are unknown (no `uri`, or a malformed one):
    // the arguments are then not checked against them.
    let vars = match &uri {
        None => {
            if !args.has("uri") {
                errors.push(syn::Error::new(
                    Span::call_site(),
                    "#[mcp_resource] needs a `uri`: #[mcp_resource(uri = \"file:///notes\")] for a fixed resource, or a template such as #[mcp_resource(uri = \"file:///logs/{date}\")] whose variables are arguments",
                ));
            }
            None
        }
        Some(lit) => match template_vars(&lit.value()) {
            Ok(v) => Some(v),
            Err(e) => {
                errors.spanned(lit, e);
                None
            }
        },
    };
    let plain = sig.plain();
    let typed = sig.typed();
    if let (Some(vars), Some(lit)) = (&vars, &uri) {
        let uri_text = lit.value();
        for arg in &plain {
            if vars.iter().any(|v| v == arg.name) {
                continue;
            }
            let n = arg.name;
            let msg = if vars.is_empty() {
                format!("a fixed resource takes no arguments, and `{n}` is not a variable of the URI `{uri_text}`: add `{{{n}}}` to the `uri` to make it a template, or remove the argument")
            } else {
                format!(
                    "argument `{n}` is not a variable of the URI template `{uri_text}` (its variables: {}); add `{{{n}}}` to the `uri` or remove the argument",
                    vars.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
                )
            };
            errors.push(syn::Error::new(arg.param.pat_span, msg));
        }
        for v in vars {
            let named = |n: &str| n == v.as_str();
            if !plain.iter().any(|a| named(a.name))
                && !typed.iter().any(|a| a.ident.is_some() && named(a.name))
            {
                errors.spanned(
                    lit,
                    format!("URI template variable `{v}` has no matching argument: add `{v}: String` (or any `FromStr` type) to `{fn_ident}`"),
                );
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
    let is_template = vars.as_ref().is_some_and(|v| !v.is_empty());
    emit(
        Descriptor::Resource,
        &func,
        &name,
        &krate,
        || {
            build(
                &args,
                &sig,
                &krate,
                &fn_ident,
                &name,
                description,
                &uri.map(|l| l.value()).unwrap_or_default(),
                is_template,
                vars.as_deref().unwrap_or_default(),
            )
        },
        sig.has_receiver,
        &errors,
    )
}

/// The body of `name::resource()`.
#[allow(clippy::too_many_arguments)]
fn build(
    args: &Args,
    sig: &Signature,
    krate: &TokenStream,
    fn_ident: &syn::Ident,
    name: &str,
    description: Option<String>,
    uri: &str,
    is_template: bool,
    vars: &[String],
) -> TokenStream {
    // A parameter the compiler classifies is a variable when the template
    // names it, and must be injected otherwise.
    let is_var = |a: &TypedArg<'_>| a.ident.is_some() && vars.iter().any(|v| v == a.name);
    let ctx = format_ident!("__mcp_ctx");
    let ctor = if is_template {
        quote!(template)
    } else {
        quote!(new)
    };
    let typed = sig.typed();
    let vars_args = sig.plain().into_iter().map(|a| (a.param, a.name)).chain(
        typed
            .iter()
            .filter(|a| is_var(a))
            .map(|a| (a.param, a.name)),
    );
    let parse = vars_args.map(|(param, key)| {
        let local = &param.local;
        let ty = &param.ty;
        let span = ty.span();
        let k = respan(krate, span);
        let fetch = quote_spanned!(span=> #k::__private::template_arg::<#ty>);
        quote!(let #local = #fetch(&__mcp_req, #key)?;)
    });
    let mut bind = sig.bind_injected(krate, &ctx);
    bind.extend(sig.bind_typed_injected(krate, &ctx, "ResourceInjected", is_var));
    let call = sig.call(fn_ident, &ctx);
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
    let ret = respan(krate, sig.ret_span);
    let turbofish = sig.ret_turbofish();
    let result = quote_spanned!(sig.ret_span=> #ret::__private::resource_result #turbofish ());
    let def = respan(krate, sig.fn_span);
    let body = quote! {
        #(#parse)*
        #bind
        __mcp_result.convert(#call)
    };
    let register = if sig.is_async {
        quote_spanned! {sig.fn_span=>
            #def::McpResourceDef::#ctor(#uri, #name, move |__mcp_req: #krate::handler::ResourceRequest, #ctx: #krate::InvokeContext| async move {
                #body
            })
        }
    } else {
        // A sync function runs on `tokio::task::spawn_blocking`, off the
        // runtime's worker threads, so it never stalls other requests.
        quote_spanned! {sig.fn_span=>
            #def::McpResourceDef::#ctor(#uri, #name, move |__mcp_req: #krate::handler::ResourceRequest, #ctx: #krate::InvokeContext| {
                #def::__private::blocking(move || { #body })
            })
        }
    };
    let states = sig.state_probes(krate);
    let scopes = crate::attr::scopes_call(args);
    quote! {
        let __mcp_result = #result;
        #krate::__private::DeclareState::declare_state(#register #chain, &[#(#states),*])#scopes
    }
}

#[cfg(test)]
mod tests {
    use super::template_vars;

    #[test]
    fn template_variables() {
        assert_eq!(template_vars("notes://project"), Ok(vec![]));
        assert_eq!(
            template_vars("logs://{day}/{+path}"),
            Ok(vec!["day".to_owned(), "path".to_owned()])
        );
        assert!(template_vars("logs://{day").is_err());
        assert!(template_vars("logs://day}").is_err());
        assert!(template_vars("logs://{a b}").is_err());
        assert!(template_vars("logs://{a}/{a}").is_err());
    }
}
