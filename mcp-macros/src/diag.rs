//! Error accumulation: collect every problem, then emit them all with the
//! user's item so one mistake gives one error.

use proc_macro2::TokenStream;
use quote::ToTokens;

/// Collects errors while a macro validates its input.
#[derive(Default)]
pub(crate) struct Errors {
    errors: Option<syn::Error>,
}

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.errors {
            Some(all) => all.combine(error),
            None => self.errors = Some(error),
        }
    }

    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.errors.is_none()
    }

    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}
