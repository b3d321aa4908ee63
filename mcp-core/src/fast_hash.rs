//! The hasher of the tables a request looks up on its way through: the
//! in-flight and pending request ids of a session, the tool, resource and
//! prompt registries.

/// A fast hasher for `HashMap`s on the per-request path: foldhash's fast
/// variant, seeded at random per table.
///
/// Weaker against crafted collisions than std's SipHash, and enough here:
/// the tables that use it are either filled by the server alone (the
/// registries: a client's name is only ever looked up, so a crafted one
/// costs that one lookup) or small and bounded by the concurrency limits
/// (the id tables: even crafted collisions only cost a short scan).
/// SipHash's stronger guarantee is not worth its cost on every request.
pub(crate) type FastHash = foldhash::fast::RandomState;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RequestId;
    use std::collections::{HashMap, HashSet};
    use std::hash::BuildHasher;

    #[test]
    fn id_hashes_spread_and_tables_find_every_id() {
        let build = FastHash::default();
        let ids: Vec<RequestId> = (0..2000i64)
            .map(RequestId::Number)
            .chain((0..2000).map(|i| RequestId::String(format!("req-{i}-{}", "x".repeat(i % 17)))))
            .collect();
        let hashes: HashSet<u64> = ids.iter().map(|id| build.hash_one(id)).collect();
        assert_eq!(hashes.len(), ids.len(), "no two of these ids may collide");
        // Low bits decide the bucket: they must vary too.
        let buckets: HashSet<u64> = ids.iter().map(|id| build.hash_one(id) & 1023).collect();
        assert!(
            buckets.len() > 900,
            "only {} of 1024 buckets used",
            buckets.len()
        );
        let mut map: HashMap<RequestId, usize, FastHash> = HashMap::default();
        for (i, id) in ids.iter().enumerate() {
            map.insert(id.clone(), i);
        }
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(map.get(id), Some(&i));
        }
        assert_eq!(
            build.hash_one(RequestId::Number(7)),
            build.hash_one(RequestId::Number(7))
        );
        assert_ne!(
            build.hash_one(RequestId::Number(7)),
            build.hash_one(RequestId::String("7".into()))
        );
    }

    #[test]
    fn names_that_share_a_prefix_or_differ_in_length_hash_apart() {
        let build = FastHash::default();
        let names = [
            "echo",
            "echo2",
            "echo\0",
            "get_weather",
            "get_weather_v2",
            "",
            "a",
        ];
        let hashes: HashSet<u64> = names.iter().map(|n| build.hash_one(*n)).collect();
        assert_eq!(hashes.len(), names.len());
        let long: Vec<String> = (0..1000)
            .map(|i| format!("tool_with_a_long_common_prefix_{i}"))
            .collect();
        let hashes: HashSet<u64> = long.iter().map(|n| build.hash_one(n)).collect();
        assert_eq!(hashes.len(), long.len());
    }
}
