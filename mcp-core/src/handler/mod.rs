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
