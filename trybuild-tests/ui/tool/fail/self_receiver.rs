use mcp_core::mcp_tool;

struct Counter {
    count: u64,
}

impl Counter {
    /// Read the counter.
    #[mcp_tool]
    async fn read(&self) -> String {
        self.count.to_string()
    }
}

fn main() {
    let _ = Counter { count: 1 }.read();
}
