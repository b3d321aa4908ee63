//! The one source of randomness in mcp-core: the operating system's, through
//! the `getrandom` crate. Session ids and the default requestState sealing
//! key come from here; nothing in the crate makes its own randomness.
//!
//! There is no fallback. If the OS source fails (a sandbox without
//! `getrandom(2)` and without `/dev/urandom`, say), [`fill`] panics at the
//! point of use: a server must never run with predictable session ids or
//! sealing keys, and no caller has a clean way to go on without them.

/// Fills `buf` with bytes from the OS random source.
///
/// # Panics
/// When the OS random source fails; see the [module docs](self).
pub(crate) fn fill(buf: &mut [u8]) {
    if let Err(e) = getrandom::fill(buf) {
        panic!(
            "mcp-core: the OS random source failed ({e}); refusing to run with \
             predictable session ids or requestState keys"
        );
    }
}

/// `N` bytes from the OS random source; panics as [`fill`] does.
pub(crate) fn bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    fill(&mut buf);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_differ_and_fill_the_buffer() {
        let a: [u8; 32] = bytes();
        let b: [u8; 32] = bytes();
        assert_ne!(a, b);
        assert_ne!(a, [0u8; 32]);
        let mut odd = [0u8; 33];
        fill(&mut odd);
        assert_ne!(odd, [0u8; 33]);
    }
}
