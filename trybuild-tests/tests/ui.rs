//! Compile-pass and compile-fail tests of `#[mcp_tool]`, `#[mcp_resource]`
//! and `#[mcp_prompt]`. Regenerate the `.stderr` snapshots with
//! `TRYBUILD=overwrite cargo test -p trybuild-tests --test ui` and review them.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for kind in ["tool", "resource", "prompt"] {
        t.pass(format!("ui/{kind}/pass/*.rs"));
        t.compile_fail(format!("ui/{kind}/fail/*.rs"));
    }
}
