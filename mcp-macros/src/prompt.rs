//! `#[mcp_prompt]`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ItemFn;

use crate::attr::{krate, Args, Kind};
use crate::diag::Errors;
use crate::docs::doc_text;
use crate::signature::{analyse, generic_of, is_named, strip_param_attrs};
use crate::tool::fn_name_string;

const KEYS: &[(&str, Kind)] = &[
    ("name", Kind::Str),
    ("title", Kind::Str),
    ("description", Kind::Str),
    ("crate", Kind::Path),
];

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let e =
                syn::Error::new(e.span(), "#[mcp_prompt] goes on a function").to_compile_error();
            return quote!(#e #item);
        }
    };
    let mut errors = Errors::default();
    let args = Args::parse(attr, KEYS, &mut errors);
    let descriptions = strip_param_attrs(&mut func, &mut errors);
    let sig = analyse(&func, &descriptions, "prompt", &mut errors);
    let krate = krate(&args);
    let fn_ident = func.sig.ident.clone();
    let plain: Vec<_> = sig.plain().collect();
    for (param, name, optional, _) in &plain {
        let ok = if *optional {
            generic_of(&param.ty, "Option").is_some_and(|inner| is_named(inner, "String"))
        } else {
            is_named(&param.ty, "String")
        };
        if !ok {
            errors.spanned(
                &param.ty,
                format!("prompt argument `{name}` must be `String` (required) or `Option<String>` (optional): prompt arguments are strings"),
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
    let vis = &func.vis;
    let doc = format!("MCP prompt `{name}`: `{fn_ident}::prompt()` returns its descriptor.");
    let body = if errors.is_empty() {
        let ctx = format_ident!("__mcp_ctx");
        let fetch = plain.iter().map(|(param, name, optional, _)| {
            let local = &param.local;
            let key = name.to_string();
            if *optional {
                quote!(let #local = __mcp_args.remove(#key);)
            } else {
                quote! {
                    let #local = __mcp_args.remove(#key).ok_or_else(|| {
                        #krate::ErrorObject::invalid_params(::std::format!("Missing required argument `{}`", #key))
                    })?;
                }
            }
        });
        let arguments = plain.iter().map(|(_, name, optional, description)| {
            let key = name.to_string();
            let required = !*optional;
            let with = description.map(|d| quote!(.with_description(#d)));
            quote!(#krate::PromptArgument::new(#key, #required) #with)
        });
        let bind = sig.bind_injected(&krate, &ctx);
        let call = sig.call(&fn_ident, &ctx);
        let mut chain = quote!(.with_arguments(::std::vec![#(#arguments),*]));
        if let Some(d) = description {
            chain.extend(quote!(.with_description(#d)));
        }
        if let Some(t) = args.str("title") {
            chain.extend(quote!(.with_title(#t)));
        }
        let convert = quote_spanned! {sig.ret_span=>
            #krate::IntoPromptResult::into_prompt_result(#call)
        };
        quote! {
            #krate::McpPromptDef::new(#name, |mut __mcp_args: #krate::PromptArgs, #ctx: #krate::InvokeContext| async move {
                #(#fetch)*
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
            #vis fn prompt() -> #krate::McpPromptDef {
                #body
            }
        }

        #errs
    }
}
