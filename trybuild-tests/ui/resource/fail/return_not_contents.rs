use mcp_core::mcp_resource;

/// The counter.
#[mcp_resource(uri = "counter://value")]
async fn counter() -> u64 {
    7
}

fn main() {
    let _ = counter::resource();
}
