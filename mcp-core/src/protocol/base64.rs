//! Standard base64 (RFC 4648, with padding) for binary content and blobs,
//! and its unpadded URL-safe form, on the [`base64`](::base64) crate.

use ::base64::alphabet;
use ::base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ::base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use ::base64::engine::DecodePaddingMode;
use ::base64::Engine as _;

/// Standard alphabet, decoding padded or unpadded input (see [`decode`]).
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Encodes bytes as padded standard base64.
pub fn encode(input: &[u8]) -> String {
    STANDARD.encode(input)
}

/// Encodes bytes as unpadded URL-safe base64 (`-` and `_`).
pub fn encode_url(input: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(input)
}

/// Appends the unpadded URL-safe base64 of `input` to `out`.
pub(crate) fn encode_url_into(out: &mut String, input: &[u8]) {
    URL_SAFE_NO_PAD.encode_string(input, out);
}

/// Decodes unpadded URL-safe base64 in its canonical form only: `None` on
/// any invalid character, an impossible length, or unused bits that are not
/// zero (so one byte string has exactly one spelling).
pub fn decode_url(input: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(input).ok()
}

/// Decodes padded or unpadded standard base64; `None` on any invalid
/// character or an impossible length.
pub fn decode(input: &str) -> Option<Vec<u8>> {
    LENIENT.decode(input).ok()
}

/// Decodes padded standard base64 in its canonical form only (what an
/// encoder emits): `None` on missing or extra padding or unused bits that
/// are not zero. For the HTTP transport's `=?base64?…?=` header values.
#[cfg(any(feature = "http", test))]
pub(crate) fn decode_canonical(input: &str) -> Option<Vec<u8>> {
    STANDARD.decode(input).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn url_safe_is_the_standard_alphabet_swapped_and_unpadded() {
        for len in 0..12u8 {
            let bytes: Vec<u8> = (0..len)
                .map(|i| i.wrapping_mul(97).wrapping_add(0xfb))
                .collect();
            let expected: String = super::encode(&bytes)
                .trim_end_matches('=')
                .replace('+', "-")
                .replace('/', "_");
            let url = super::encode_url(&bytes);
            assert_eq!(url, expected);
            assert_eq!(super::decode_url(&url).as_deref(), Some(&bytes[..]));
        }
    }

    #[test]
    fn url_decoding_accepts_only_the_canonical_spelling() {
        // "f" is `Zg`; `Zh`, `Zi`, `Zj` differ only in unused bits.
        assert_eq!(super::decode_url("Zg").as_deref(), Some(&b"f"[..]));
        for other in ["Zh", "Zi", "Zj", "Zm9", "Z", "Zg==", "+/", "Zm8="] {
            assert_eq!(super::decode_url(other), None, "{other}");
        }
        assert_eq!(super::decode_url("Zm8").as_deref(), Some(&b"fo"[..]));
    }

    #[test]
    fn round_trips_all_lengths() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::encode(plain.as_bytes()), coded);
            assert_eq!(super::decode(coded).as_deref(), Some(plain.as_bytes()));
            assert_eq!(
                super::decode_canonical(coded).as_deref(),
                Some(plain.as_bytes())
            );
            let unpadded = coded.trim_end_matches('=');
            assert_eq!(super::decode(unpadded).as_deref(), Some(plain.as_bytes()));
        }
    }

    #[test]
    fn invalid_input_is_refused_not_a_panic() {
        for bad in ["Zm9v!", "Z", "Zm9vY", "Zg=a", "\u{e9}\u{e9}", "Zg==="] {
            assert_eq!(super::decode(bad), None, "{bad}");
        }
        for bad in ["Zg", "Zg=", "Zh==", "Zm9v!", "Zg===", "Z==="] {
            assert_eq!(super::decode_canonical(bad), None, "{bad}");
        }
    }
}
