//! A counting global allocator around [`System`]: live bytes, peak live
//! bytes, cumulative bytes and allocation count. Included with `#[path]` by
//! the growth example and the stdio budget test (each binary its own
//! counters); not every includer uses every item.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A [`System`] wrapper that counts live, peak and cumulative bytes.
struct Counting;

/// Bytes currently allocated.
pub static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Highest value of [`LIVE`] since the last [`reset_peak`].
pub static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Bytes ever allocated (reallocations count their new size).
pub static TOTAL: AtomicU64 = AtomicU64::new(0);
/// Number of allocations (reallocations included).
pub static COUNT: AtomicU64 = AtomicU64::new(0);

/// Records `size` newly allocated bytes.
fn on_alloc(size: usize) {
    let now = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
    TOTAL.fetch_add(size as u64, Ordering::Relaxed);
    COUNT.fetch_add(1, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` unchanged; the counters are
// plain atomics and never allocate.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            on_alloc(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            on_alloc(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Counted as "new block, then old block freed": a moving
            // realloc briefly holds both.
            on_alloc(new_size);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

/// The process allocator: counts every allocation.
#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes currently allocated.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Starts a new peak window at the current live size; returns that size.
pub fn reset_peak() -> usize {
    let now = live();
    PEAK.store(now, Ordering::Relaxed);
    now
}

/// The most bytes allocated since [`reset_peak`] returned `base`, above it.
pub fn peak_above(base: usize) -> usize {
    PEAK.load(Ordering::Relaxed).saturating_sub(base)
}
