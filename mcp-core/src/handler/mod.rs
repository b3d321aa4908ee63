//! The handler layer: descriptors of tools, resources and prompts (what
//! is advertised plus the function that runs), argument checking, schemas,
//! URI templates and application state.

pub(crate) mod args;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod state;
pub(crate) mod tool;
pub(crate) mod tool_error;
pub(crate) mod uri_template;

/// Appends `scopes` to a descriptor's, dropping repeats (the `with_scopes`
/// of tools, resources and prompts).
pub(crate) fn add_scopes<I, S>(into: &mut Vec<String>, scopes: I)
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    for scope in scopes {
        let scope = scope.into();
        if !into.contains(&scope) {
            into.push(scope);
        }
    }
}
