//! Every example's catalog matches its lockfile in `examples/locks/`, read
//! from the running example through `mcp_core::client` at both eras'
//! newest revisions (issue 17). A drift fails with every change classified;
//! `MCP_CATALOG=overwrite cargo test -p mcp-suite-tests --test catalog_locks` accepts it.

use std::path::Path;
use std::time::Duration;

use mcp_core::catalog::{self, Catalog};
use mcp_core::client::{ClientBuilder, Protocol};
use mcp_suite::example_command;

const GUARD: Duration = Duration::from_secs(60);

async fn catalog_of(example: &str, args: &[&str]) -> Catalog {
    let mut catalog = Catalog::default();
    for revision in catalog::DEFAULT_REVISIONS {
        let mut command = example_command(example).unwrap_or_else(|e| panic!("{example}: {e}"));
        command.args(args);
        let client = tokio::time::timeout(
            GUARD,
            ClientBuilder::new("catalog-locks", "1")
                .protocol(Protocol::pinned(revision))
                .connect_stdio(command),
        )
        .await
        .unwrap_or_else(|_| panic!("{example} {revision}: connect hung"))
        .unwrap_or_else(|e| panic!("{example} {revision}: {e}"));
        let surface = tokio::time::timeout(GUARD, Catalog::collect(&client))
            .await
            .unwrap_or_else(|_| panic!("{example} {revision}: listing hung"))
            .unwrap_or_else(|e| panic!("{example} {revision}: {e}"));
        client.close().await;
        catalog.revisions.insert((*revision).to_owned(), surface);
    }
    catalog
}

async fn check(example: &str, args: &[&str]) {
    let current = catalog_of(example, args).await;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/locks")
        .join(format!("{example}.lock.json"));
    if let Err(report) = catalog::lock::assert_catalog(&current, &path) {
        panic!("{report}");
    }
}

#[tokio::test]
async fn demo_matches_its_lockfile() {
    check("demo", &[]).await;
}

#[tokio::test]
async fn calendar_matches_its_lockfile() {
    check("calendar", &[]).await;
}

#[tokio::test]
async fn gateway_matches_its_lockfile() {
    check("gateway", &[]).await;
}

#[tokio::test]
async fn conformance_fixture_matches_its_lockfile() {
    check("conformance", &[]).await;
}
