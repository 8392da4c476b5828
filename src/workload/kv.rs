//! Key-value records: a key's text form and the bytes of each of its versions.
//!
//! The client never keeps a value: the bytes of version `v` of key `k` are derived from
//! `(k, v)` alone, with a 16-byte header that names them, so a read can be judged
//! (`current`, `stale`, `missing`, or wrong) from the version the stream says it must
//! see. Keys look like YCSB's (`user` and 16 hex digits of a scrambled index), so that
//! consecutive keys land far apart in every index and on every node.

use super::domain::KeyId;
use super::rng::{StreamRng, splitmix64};

/// The header: key (8 bytes), version (4), size (4), little-endian.
pub const HEADER: usize = 16;
/// Values are at most this large (a MariaDB MEDIUMBLOB holds 16 MiB).
pub const MAX_VALUE_SIZE: u32 = 8 << 20;

/// The text form of a key, on the stack: `user` + 16 hex digits, and the index it
/// was made from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct KeyText {
    text: [u8; 20],
    /// Kept beside the text: a store keyed by index (pgbench's, sysbench's tables)
    /// would otherwise parse every key back from its text.
    index: KeyId,
}

impl KeyText {
    /// The key's text: `user` and 16 hex digits of the scrambled id, YCSB's key shape.
    pub fn of(key: KeyId) -> KeyText {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = *b"user0000000000000000";
        let mut n = scramble(key);
        for slot in text[4..].iter_mut().rev() {
            *slot = HEX[(n & 0xF) as usize];
            n >>= 4;
        }
        KeyText { text, index: key }
    }

    /// The key's text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.text).expect("ASCII")
    }

    /// The index the key was made from: what [`Self::parse`] reads from its text.
    pub fn index(&self) -> KeyId {
        self.index
    }

    /// The key a text names, if it is one of ours.
    pub fn parse(text: &str) -> Option<KeyId> {
        let hex = text.strip_prefix("user")?;
        if hex.len() != 16 {
            return None;
        }
        // Byte by byte: `from_str_radix`, decoding chars, cost about half as much
        // again (bench/NOTES.md), and `verify` reads every key a store holds this way.
        let mut n = 0u64;
        for &digit in hex.as_bytes() {
            let value = match digit {
                b'0'..=b'9' => digit - b'0',
                b'a'..=b'f' => digit - b'a' + 10,
                b'A'..=b'F' => digit - b'A' + 10,
                _ => return None,
            };
            n = n << 4 | u64::from(value);
        }
        Some(unscramble(n))
    }
}

impl std::fmt::Debug for KeyText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// MurmurHash3's finaliser: a bijection, so every index has its own key.
fn scramble(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

fn unscramble(mut x: u64) -> u64 {
    // Inverses of the multipliers modulo 2^64; x ^= x >> 33 is its own inverse.
    x ^= x >> 33;
    x = x.wrapping_mul(0x9cb4_b2f8_1293_37db);
    x ^= x >> 33;
    x = x.wrapping_mul(0x4f74_430c_22a5_4005);
    x ^ (x >> 33)
}

/// Writes the bytes of `version` of `key` into `out` (cleared first).
pub fn fill_value(out: &mut Vec<u8>, key: KeyId, version: u32, size: u32) {
    let size = (size as usize).max(HEADER);
    out.clear();
    out.reserve(size);
    out.extend_from_slice(&key.to_le_bytes());
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(size as u32).to_le_bytes());
    let mut rng = body_rng(key, version);
    while out.len() + 8 <= size {
        out.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    let tail = size - out.len();
    out.extend_from_slice(&rng.next_u64().to_le_bytes()[..tail]);
}

/// The generator of the bytes after the header of `version` of `key`.
fn body_rng(key: KeyId, version: u32) -> StreamRng {
    let mut seed = key ^ (u64::from(version) << 40) ^ 0x0068_6174_7368_6f70;
    StreamRng::from_seed(splitmix64(&mut seed))
}

/// The version `bytes` are of, if they are every byte of a version of `key`.
pub fn intact_version(key: KeyId, bytes: &[u8]) -> Option<u32> {
    header_version(key, bytes).filter(|&version| body_is(key, version, bytes))
}

/// Whether the bytes after a header that names `key` and `version` are that version's.
/// They are made again word by word as they are compared, not written out first: every
/// read a run checks comes through here.
fn body_is(key: KeyId, version: u32, bytes: &[u8]) -> bool {
    let Some(body) = bytes.get(HEADER..) else {
        return false;
    };
    let mut rng = body_rng(key, version);
    let mut words = body.chunks_exact(8);
    let whole = words
        .by_ref()
        .all(|word| *word == rng.next_u64().to_le_bytes());
    let tail = words.remainder();
    whole && *tail == rng.next_u64().to_le_bytes()[..tail.len()]
}

/// The value a key holds at `version`: made again from both, never kept.
pub fn value(key: KeyId, version: u32, size: u32) -> Vec<u8> {
    let mut out = Vec::new();
    fill_value(&mut out, key, version, size);
    out
}

/// What a read returned, against what the stream says it must.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadVerdict {
    Current,
    /// An older version of the key, intact.
    Stale {
        version: u32,
    },
    /// Nothing, where the key must exist.
    Missing,
    /// Bytes that are no version of this key (or a version from the future).
    Wrong(String),
}

/// Judges a read of `key` that must return `expected`.
pub fn judge_read(key: KeyId, expected: u32, got: Option<&[u8]>) -> ReadVerdict {
    let Some(bytes) = got else {
        return ReadVerdict::Missing;
    };
    let Some(version) = header_version(key, bytes) else {
        return ReadVerdict::Wrong(format!(
            "key {}: {} bytes that are not a value of this key",
            KeyText::of(key).as_str(),
            bytes.len()
        ));
    };
    if !body_is(key, version, bytes) {
        return ReadVerdict::Wrong(format!(
            "key {}: version {version} with corrupted bytes",
            KeyText::of(key).as_str()
        ));
    }
    match version.cmp(&expected) {
        std::cmp::Ordering::Equal => ReadVerdict::Current,
        std::cmp::Ordering::Less => ReadVerdict::Stale { version },
        std::cmp::Ordering::Greater => ReadVerdict::Wrong(format!(
            "key {}: version {version}, newer than the {expected} the stream has written",
            KeyText::of(key).as_str()
        )),
    }
}

/// The version a value's header names, if the header belongs to `key` and its size.
pub fn header_version(key: KeyId, bytes: &[u8]) -> Option<u32> {
    if bytes.len() < HEADER {
        return None;
    }
    let stored_key = u64::from_le_bytes(bytes[0..8].try_into().ok()?);
    let version = u32::from_le_bytes(bytes[8..12].try_into().ok()?);
    let size = u32::from_le_bytes(bytes[12..16].try_into().ok()?);
    (stored_key == key && size as usize == bytes.len()).then_some(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_spread() {
        for key in [0u64, 1, 2, 1_000_000, u64::MAX] {
            let text = KeyText::of(key);
            assert_eq!(text.as_str().len(), 20);
            assert_eq!(KeyText::parse(text.as_str()), Some(key));
            assert_eq!(text.index(), key);
        }
        assert_ne!(KeyText::of(1).as_str()[4..6], KeyText::of(2).as_str()[4..6]);
        assert_eq!(KeyText::parse("order17"), None);
        let upper = KeyText::of(77)
            .as_str()
            .to_uppercase()
            .replacen("USER", "user", 1);
        assert_eq!(KeyText::parse(&upper), Some(77));
        for not_ours in [
            "user000000000000001g",
            "user+00000000000001f",
            "user00000000000001f",
        ] {
            assert_eq!(KeyText::parse(not_ours), None, "{not_ours}");
        }
    }

    #[test]
    fn values_are_deterministic_and_name_their_version() {
        for size in [16u32, 17, 100, 1500, 15_000] {
            let a = value(9, 3, size);
            assert_eq!(a.len(), size as usize);
            assert_eq!(a, value(9, 3, size));
            if size > HEADER as u32 {
                assert_ne!(a[HEADER..], value(9, 4, size)[HEADER..]);
            }
            assert_eq!(header_version(9, &a), Some(3));
            assert_eq!(header_version(8, &a), None);
        }
    }

    #[test]
    fn reads_are_judged_by_version() {
        let v2 = value(5, 2, 1500);
        assert_eq!(judge_read(5, 2, Some(&v2)), ReadVerdict::Current);
        assert_eq!(
            judge_read(5, 3, Some(&v2)),
            ReadVerdict::Stale { version: 2 }
        );
        assert_eq!(judge_read(5, 3, None), ReadVerdict::Missing);
        assert!(matches!(judge_read(5, 1, Some(&v2)), ReadVerdict::Wrong(_)));
        let mut corrupt = v2.clone();
        corrupt[700] ^= 1;
        assert!(matches!(
            judge_read(5, 2, Some(&corrupt)),
            ReadVerdict::Wrong(m) if m.contains("corrupted")
        ));
        assert!(matches!(judge_read(6, 2, Some(&v2)), ReadVerdict::Wrong(_)));
    }

    /// Every byte counts, the last ones of a size that is not a whole number of words
    /// included.
    #[test]
    fn a_value_is_intact_only_byte_for_byte() {
        for size in [16u32, 17, 23, 24, 25, 84, 100, 1500] {
            let bytes = value(9, 4, size);
            assert_eq!(intact_version(9, &bytes), Some(4), "size {size}");
            for at in [16, size as usize - 1] {
                if at < HEADER || at >= bytes.len() {
                    continue;
                }
                let mut spoiled = bytes.clone();
                spoiled[at] ^= 0x80;
                assert_eq!(intact_version(9, &spoiled), None, "size {size}, byte {at}");
            }
            assert_eq!(intact_version(8, &bytes), None, "another key's header");
        }
    }
}
