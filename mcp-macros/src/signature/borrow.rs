//! Borrowed client argument types, found by their spelling.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{GenericArgument, PathArguments, Type};

/// The span of a borrow inside a client argument type: a reference or a
/// lifetime other than `'static`, anywhere in it (`Option<&str>`,
/// `Vec<&T>`, `Cow<'a, str>`, `(&str, u32)`).
pub(super) fn borrow_in(ty: &Type) -> Option<TokenStream> {
    match ty {
        Type::Reference(r) => Some(quote!(#r)),
        Type::Group(g) => borrow_in(&g.elem),
        Type::Paren(p) => borrow_in(&p.elem),
        Type::Array(a) => borrow_in(&a.elem),
        Type::Slice(s) => borrow_in(&s.elem),
        Type::Tuple(t) => t.elems.iter().find_map(borrow_in),
        Type::Path(p) => p.path.segments.iter().find_map(|seg| match &seg.arguments {
            PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
                GenericArgument::Type(t) => borrow_in(t),
                GenericArgument::Lifetime(l) if l.ident != "static" => Some(quote!(#l)),
                _ => None,
            }),
            _ => None,
        }),
        _ => None,
    }
}

/// `borrow_in` for the type arguments of a path type only: `Wrapper<&str>`
/// is borrowed, while `&Ctx` and `CtxRef<'_>` may be an injected context.
pub(super) fn borrow_in_arguments(ty: &Type) -> Option<TokenStream> {
    match ty {
        Type::Path(p) => p.path.segments.iter().find_map(|seg| match &seg.arguments {
            PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
                GenericArgument::Type(t) => borrow_in(t),
                _ => None,
            }),
            _ => None,
        }),
        Type::Group(g) => borrow_in_arguments(&g.elem),
        Type::Paren(p) => borrow_in_arguments(&p.elem),
        _ => None,
    }
}

pub(super) const OWNED: &str = "arguments from the client must be owned types: use `String` instead of `&str`, `Vec<T>` instead of `&[T]`, `T` instead of `&T` (also inside `Option`, `Vec`, tuples, ...)";
