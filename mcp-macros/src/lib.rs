//! Attribute macros for [`mcp-core`](https://docs.rs/mcp-core): `#[mcp_tool]`,
//! `#[mcp_resource]` and `#[mcp_prompt]`.
//!
//! Depend on `mcp-core` (which re-exports these with its default `macros`
//! feature) rather than on this crate directly. Each macro leaves the
//! function as written, so it stays callable and unit-testable, and adds a
//! companion type of the same name whose associated function returns the
//! descriptor: `echo::tool()`, `week::resource()`, `greet::prompt()`.
//!
//! The documentation of each macro lists every key it accepts, its
//! parameters and its return types. The long texts live in `docs/*.md`; their
//! examples are doctests (`cargo test -p mcp-macros --doc`).

mod attr;
mod diag;
mod docs;
mod expand;
mod prompt;
mod resource;
mod result_limit;
mod signature;
mod tool;
mod tool_ui;

use proc_macro::TokenStream;

#[doc = include_str!("../docs/tool.md")]
#[proc_macro_attribute]
pub fn mcp_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

#[doc = include_str!("../docs/resource.md")]
#[proc_macro_attribute]
pub fn mcp_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(attr.into(), item.into()).into()
}

#[doc = include_str!("../docs/prompt.md")]
#[proc_macro_attribute]
pub fn mcp_prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    prompt::expand(attr.into(), item.into()).into()
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    type Expand = fn(TokenStream, TokenStream) -> TokenStream;

    fn cases() -> Vec<(Expand, TokenStream, TokenStream)> {
        vec![
            (
                crate::tool::expand,
                quote!(crate = "renamed_core", title = "T"),
                quote!(
                    async fn add(a: i64, b: Option<i64>, s: State<X>) -> String {
                        todo!()
                    }
                ),
            ),
            (
                crate::tool::expand,
                quote!(crate = "renamed_core"),
                quote!(
                    fn search(args: Args, ctx: &InvokeContext) -> Json<Out> {
                        todo!()
                    }
                ),
            ),
            (
                crate::resource::expand,
                quote!(uri = "logs://{day}", crate = "renamed_core"),
                quote!(
                    fn log(day: u32) -> String {
                        todo!()
                    }
                ),
            ),
            (
                crate::prompt::expand,
                quote!(crate = "renamed_core"),
                quote!(
                    fn plan(who: String, ctx: InvokeContext) -> String {
                        todo!()
                    }
                ),
            ),
        ]
    }

    /// With `crate = "..."`, generated code names neither `mcp_core` nor
    /// `serde`/`schemars` except through the given path: a crate that only
    /// depends on a re-export of mcp-core compiles.
    #[test]
    fn renamed_crate_is_the_only_runtime_path() {
        for (expand, attr, item) in cases() {
            let out = expand(attr, item).to_string();
            assert!(!out.contains("compile_error"), "{out}");
            assert!(!out.contains("mcp_core"), "{out}");
            let rest = out
                .replace("renamed_core :: __private :: serde", "")
                .replace("renamed_core :: __private :: schemars", "")
                .replace("\"renamed_core::__private::serde\"", "")
                .replace("\"renamed_core::__private::schemars\"", "")
                .replace("# [serde (crate", "")
                .replace("# [schemars (crate", "")
                .replace("# [schemars (description", "");
            assert!(
                !rest.contains("serde") && !rest.contains("schemars"),
                "{rest}"
            );
        }
    }

    #[test]
    fn default_runtime_path_is_absolute() {
        let out = crate::tool::expand(
            quote!(),
            quote!(
                fn ping() {}
            ),
        )
        .to_string();
        assert!(
            out.contains(":: mcp_core :: __private :: tool_def"),
            "{out}"
        );
    }

    /// A mistake still emits the function and its companion, so code using
    /// `echo::tool()` does not add a second error.
    #[test]
    fn errors_keep_the_function_and_the_companion() {
        let out = crate::tool::expand(
            quote!(name = 5),
            quote!(
                async fn echo(text: String) -> String {
                    text
                }
            ),
        )
        .to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("async fn echo (text : String)"), "{out}");
        assert!(out.contains("enum echo { }"), "{out}");
        assert!(
            out.contains("fn tool () -> :: mcp_core :: McpToolDef"),
            "{out}"
        );
    }

    /// A method (it takes `self`) gets no companion type: a type cannot be
    /// declared inside an `impl` block, and that would be a second error.
    #[test]
    fn methods_get_no_companion() {
        let out = crate::tool::expand(
            quote!(),
            quote!(
                fn read(&self) -> String {
                    todo!()
                }
            ),
        )
        .to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(!out.contains("enum read"), "{out}");
    }
}
