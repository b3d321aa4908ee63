use crate::client::DEFAULT_CACHE_BYTES;
use serde_json::json;

use super::*;

fn cache(max_bytes: usize) -> Cache {
    Cache::new(&CacheOptions::new().max_bytes(max_bytes))
}

fn params(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn raw(ttl: u64, scope: &str, body: &str) -> Box<RawValue> {
    let text =
        json!({"contents": body, "ttlMs": ttl, "cacheScope": scope, "resultType": "complete"});
    RawValue::from_string(text.to_string()).expect("raw")
}

/// Looks `uri` up for `options`; on a miss stores `answer` (if any).
fn read(cache: &Cache, uri: &str, options: &RequestOptions, answer: Option<Box<RawValue>>) -> bool {
    match cache.lookup("resources/read", &params(json!({"uri": uri})), options) {
        Lookup::Hit(_) => true,
        Lookup::Miss(ticket) => {
            if let Some(answer) = answer {
                cache.store(ticket, &answer);
            }
            false
        }
        Lookup::Uncached => panic!("a read is cacheable"),
    }
}

#[test]
fn private_entries_stay_in_their_partition_and_public_ones_do_not() {
    let cache = cache(DEFAULT_CACHE_BYTES);
    let alice = RequestOptions::new().cache_principal("alice");
    let bob = RequestOptions::new().cache_principal("bob");
    assert!(!read(
        &cache,
        "a://p",
        &alice,
        Some(raw(60_000, "private", "p"))
    ));
    assert!(read(&cache, "a://p", &alice, None));
    assert!(!read(&cache, "a://p", &bob, None), "not bob's");
    assert!(
        !read(&cache, "a://p", &RequestOptions::new(), None),
        "not the client's own"
    );
    let token_a = RequestOptions::new().header("Authorization", "Bearer a");
    let token_b = RequestOptions::new().header("authorization", "Bearer b");
    assert!(!read(
        &cache,
        "a://t",
        &token_a,
        Some(raw(60_000, "private", "t"))
    ));
    assert!(read(&cache, "a://t", &token_a, None));
    assert!(!read(&cache, "a://t", &token_b, None), "another token");
    // No scope at all is read as private.
    let unscoped =
        RawValue::from_string(json!({"contents": 1, "ttlMs": 60_000}).to_string()).expect("raw");
    assert!(!read(&cache, "a://u", &alice, Some(unscoped)));
    assert!(!read(&cache, "a://u", &bob, None));
    assert!(!read(
        &cache,
        "a://s",
        &alice,
        Some(raw(60_000, "public", "s"))
    ));
    assert!(read(&cache, "a://s", &bob, None), "public serves everyone");
}

#[test]
fn a_hit_makes_an_entry_the_most_recently_used() {
    let one = raw(60_000, "public", &"x".repeat(200));
    let size = one.get().len() + ENTRY_OVERHEAD + "a://1".len();
    // Room for two entries, not three.
    let cache = cache(2 * size + size / 2);
    let me = RequestOptions::new();
    read(&cache, "a://1", &me, Some(one.clone()));
    read(&cache, "a://2", &me, Some(one.clone()));
    assert!(read(&cache, "a://1", &me, None), "used again");
    read(&cache, "a://3", &me, Some(one));
    assert!(read(&cache, "a://1", &me, None), "kept: used last");
    assert!(
        !read(&cache, "a://2", &me, None),
        "evicted: least recently used"
    );
    assert!(cache.state().bytes <= 2 * size + size / 2);
}

#[test]
fn notifications_drop_what_they_name_and_in_flight_answers() {
    let cache = cache(DEFAULT_CACHE_BYTES);
    let me = RequestOptions::new();
    read(&cache, "a://1", &me, Some(raw(60_000, "public", "1")));
    read(&cache, "a://2", &me, Some(raw(60_000, "public", "2")));
    cache.on_notification("notifications/resources/updated", &json!({"uri": "a://1"}));
    assert!(!read(&cache, "a://1", &me, None));
    assert!(read(&cache, "a://2", &me, None), "another URI stays");

    // An answer whose request began before the notification is not kept.
    let Lookup::Miss(ticket) = cache.lookup("tools/list", &Map::new(), &me) else {
        panic!("a first listing misses");
    };
    cache.on_notification("notifications/tools/list_changed", &Value::Null);
    cache.store(ticket, &raw(60_000, "public", "tools"));
    assert!(matches!(
        cache.lookup("tools/list", &Map::new(), &me),
        Lookup::Miss(_)
    ));
}

#[test]
fn only_known_parameters_and_complete_results_are_kept() {
    let cache = cache(DEFAULT_CACHE_BYTES);
    let me = RequestOptions::new();
    let extra = params(json!({"cursor": "c", "filter": "x"}));
    assert!(matches!(
        cache.lookup("tools/list", &extra, &me),
        Lookup::Uncached
    ));
    assert!(matches!(
        cache.lookup("tools/call", &Map::new(), &me),
        Lookup::Uncached
    ));
    assert!(matches!(
        cache.lookup("resources/read", &Map::new(), &me),
        Lookup::Uncached
    ));
    let pending = RawValue::from_string(
        json!({"resultType": "input_required", "ttlMs": 60_000, "cacheScope": "public"})
            .to_string(),
    )
    .expect("raw");
    assert!(!read(&cache, "a://1", &me, Some(pending)));
    assert!(
        !read(&cache, "a://1", &me, None),
        "an interim result is not kept"
    );
    let off = Cache::new(&CacheOptions::disabled());
    assert!(matches!(
        off.lookup("tools/list", &Map::new(), &me),
        Lookup::Uncached
    ));
}

#[test]
fn forgetting_a_listing_drops_all_its_pages_and_nothing_else() {
    let cache = cache(DEFAULT_CACHE_BYTES);
    let me = RequestOptions::new();
    for cursor in [None, Some("c1")] {
        let p = cursor.map_or_else(Map::new, |c| params(json!({"cursor": c})));
        let Lookup::Miss(ticket) = cache.lookup("tools/list", &p, &me) else {
            panic!("a first listing misses");
        };
        cache.store(ticket, &raw(60_000, "public", "page"));
        assert!(matches!(
            cache.lookup("tools/list", &p, &me),
            Lookup::Hit(_)
        ));
    }
    read(&cache, "a://1", &me, Some(raw(60_000, "public", "1")));
    cache.forget("tools/list");
    let page2 = params(json!({"cursor": "c1"}));
    assert!(matches!(
        cache.lookup("tools/list", &page2, &me),
        Lookup::Miss(_)
    ));
    assert!(matches!(
        cache.lookup("tools/list", &Map::new(), &me),
        Lookup::Miss(_)
    ));
    assert!(read(&cache, "a://1", &me, None), "reads stay");
}
