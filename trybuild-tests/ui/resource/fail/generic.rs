use mcp_core::mcp_resource;

/// A value by key.
#[mcp_resource(uri = "kv://{key}")]
async fn value<K: std::str::FromStr + ToString>(key: K) -> String {
    key.to_string()
}

fn main() {
    let _ = value::resource();
}
