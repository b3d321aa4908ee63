//! `#[mcp_prompt]`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ItemFn;

use crate::attr::{krate, Args, Kind};
use crate::diag::Errors;
use crate::docs::doc_text;
use crate::expand::{emit, not_a_function, Descriptor};
use crate::signature::{analyse, generic_of, is_named, respan, strip_param_attrs, Signature};
use crate::tool::fn_name_string;

const KEYS: &[(&str, Kind)] = &[
    ("name", Kind::Str),
    ("title", Kind::Str),
    ("description", Kind::Str),
    ("scopes", Kind::Scopes),
    ("crate", Kind::Path),
];

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => return not_a_function(Descriptor::Prompt, item, &e),
    };
    let mut errors = Errors::default();
    let args = Args::parse(attr, "#[mcp_prompt(...)]", KEYS, &mut errors);
    let attrs = strip_param_attrs(&mut func, &mut errors);
    let sig = analyse(&func, &attrs, "prompt", &mut errors);
    let krate = krate(&args);
    let fn_ident = func.sig.ident.clone();
    for arg in sig.plain() {
        let ty = &arg.param.ty;
        let ok = if arg.optional {
            generic_of(ty, "Option").is_some_and(|inner| is_named(inner, "String"))
        } else {
            is_named(ty, "String")
        };
        if !ok {
            errors.spanned(
                ty,
                format!("prompt argument `{}` must be `String` (required) or `Option<String>` (optional): clients send prompt arguments as strings; parse it in the function body", arg.name),
            );
        }
    }
    let name = args
        .str("name")
        .map_or_else(|| fn_name_string(&fn_ident), syn::LitStr::value);
    let description = args
        .str("description")
        .map(syn::LitStr::value)
        .or_else(|| doc_text(&func.attrs));
    emit(
        Descriptor::Prompt,
        &func,
        &name,
        &krate,
        || build(&args, &sig, &krate, &fn_ident, &name, description),
        sig.has_receiver,
        &errors,
    )
}

/// The body of `name::prompt()`.
fn build(
    args: &Args,
    sig: &Signature,
    krate: &TokenStream,
    fn_ident: &syn::Ident,
    name: &str,
    description: Option<String>,
) -> TokenStream {
    let ctx = format_ident!("__mcp_ctx");
    let plain = sig.plain();
    let fetch = plain.iter().map(|arg| {
        let local = &arg.param.local;
        let key = arg.name;
        if arg.optional {
            quote!(let #local = __mcp_args.remove(#key);)
        } else {
            quote! {
                let #local = __mcp_args.remove(#key).ok_or_else(|| {
                    #krate::protocol::ErrorObject::invalid_params(::std::format!("Missing required argument `{}`", #key))
                })?;
            }
        }
    });
    let arguments = plain.iter().map(|arg| {
        let key = arg.name;
        let required = !arg.optional;
        let with = arg.description.map(|d| quote!(.with_description(#d)));
        quote!(#krate::protocol::PromptArgument::new(#key, #required) #with)
    });
    let mut bind = sig.bind_injected(krate, &ctx);
    bind.extend(sig.bind_typed_injected(krate, &ctx, "PromptInjected", |_| false));
    let call = sig.call(fn_ident, &ctx);
    let mut chain = quote!(.with_arguments(::std::vec![#(#arguments),*]));
    if let Some(d) = description {
        chain.extend(quote!(.with_description(#d)));
    }
    if let Some(t) = args.str("title") {
        chain.extend(quote!(.with_title(#t)));
    }
    let ret = respan(krate, sig.ret_span);
    let turbofish = sig.ret_turbofish();
    let result = quote_spanned!(sig.ret_span=> #ret::__private::prompt_result #turbofish ());
    let def = respan(krate, sig.fn_span);
    let body = quote! {
        #(#fetch)*
        #bind
        __mcp_result.convert(#call)
    };
    let register = if sig.is_async {
        quote_spanned! {sig.fn_span=>
            #def::McpPromptDef::new(#name, move |mut __mcp_args: #krate::handler::PromptArgs, #ctx: #krate::InvokeContext| async move {
                #body
            })
        }
    } else {
        // A sync function runs on `tokio::task::spawn_blocking`, off the
        // runtime's worker threads, so it never stalls other requests.
        quote_spanned! {sig.fn_span=>
            #def::McpPromptDef::new(#name, move |mut __mcp_args: #krate::handler::PromptArgs, #ctx: #krate::InvokeContext| {
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
