//! The advisory lock ids of a transaction's keys, computed by the instance.
//!
//! A key's lock id is PostgreSQL's `hashtextextended(schema || chr(31) || collection ||
//! chr(31) || id, 0)`: the 64-bit variant of Bob Jenkins' lookup3 hash that PostgreSQL
//! applies to a text's bytes (`hash_bytes_extended` in its `src/common/hashfn.c`; text in a
//! deterministic collation, which every database default is, hashes as its bytes). Computing
//! it here spares the server a statement that hashes, groups and sorts the keys of every
//! commit, and keeps every instance, of this version or of one that had the server compute
//! it, on the same lock for the same key.
//!
//! Locks are taken in one order by every transaction (ascending lock id, as PostgreSQL orders
//! `bigint`), so two transactions never wait for each other the wrong way round.

/// A key's lock: its id, and whether it is taken exclusive (the key is written) or shared
/// (the key is only expected at a revision).
pub(super) type KeyLock = (i64, bool);

/// `locks` in the order they are taken, each id once: the arrays the commit statements take.
pub(super) fn ordered(locks: &mut [KeyLock]) -> (Vec<i64>, Vec<bool>) {
    // Exclusive after shared for one id, so the last of a run is exclusive if any is.
    locks.sort_unstable();
    let mut ids: Vec<i64> = Vec::with_capacity(locks.len());
    let mut exclusive: Vec<bool> = Vec::with_capacity(locks.len());
    for &(id, written) in locks.iter() {
        if ids.last() == Some(&id) {
            if let Some(last) = exclusive.last_mut() {
                *last |= written;
            }
        } else {
            ids.push(id);
            exclusive.push(written);
        }
    }
    (ids, exclusive)
}

/// The lock id of the key `collection`/`id` of the store in `schema`.
pub(super) fn lock_id(schema: &str, collection: &str, id: &str) -> i64 {
    const SEPARATOR: &[u8] = &[31];
    hash_text_extended(&[
        schema.as_bytes(),
        SEPARATOR,
        collection.as_bytes(),
        SEPARATOR,
        id.as_bytes(),
    ])
}

/// PostgreSQL's `hash_bytes_extended(bytes, len, 0)` over the concatenation of `parts`, as
/// the `bigint` `hashtextextended` answers.
fn hash_text_extended(parts: &[&[u8]]) -> i64 {
    let mut bytes = parts.iter().flat_map(|part| part.iter().copied());
    let length: usize = parts.iter().map(|part| part.len()).sum();
    // PostgreSQL takes the length as a 32-bit integer; a text longer than 4 GiB cannot be a
    // key, and wrapping keeps this total anyway.
    let initial = 0x9e37_79b9_u32
        .wrapping_add(length as u32)
        .wrapping_add(3_923_095);
    let (mut a, mut b, mut c) = (initial, initial, initial);
    // With seed 0 the state is not perturbed further.
    let mut left = length;
    while left >= 12 {
        a = a.wrapping_add(word(&mut bytes, 4));
        b = b.wrapping_add(word(&mut bytes, 4));
        c = c.wrapping_add(word(&mut bytes, 4));
        mix(&mut a, &mut b, &mut c);
        left -= 12;
    }
    // The last 11 bytes or fewer, little-endian; the lowest byte of `c` is left for the
    // length, so `c` takes bytes 9 to 11 shifted up by one.
    a = a.wrapping_add(word(&mut bytes, left.min(4)));
    b = b.wrapping_add(word(&mut bytes, left.saturating_sub(4).min(4)));
    c = c.wrapping_add(word(&mut bytes, left.saturating_sub(8)) << 8);
    last(&mut a, &mut b, &mut c);
    // The unsigned result (`b` high, `c` low) read as PostgreSQL's signed `bigint`.
    ((u64::from(b) << 32) | u64::from(c)) as i64
}

/// The next `count` (at most 4) bytes as a little-endian word.
fn word(bytes: &mut impl Iterator<Item = u8>, count: usize) -> u32 {
    (0..count).fold(0, |word, shift| {
        word | (u32::from(bytes.next().unwrap_or(0)) << (8 * shift))
    })
}

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c) ^ c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c) ^ c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

/// lookup3's `final`.
fn last(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hashtextextended(s || chr(31) || c || chr(31) || i, 0)` as PostgreSQL 15 answered it
    /// for these keys: texts of 2 to 81 bytes, every remainder past a 12-byte block, and
    /// characters of several bytes.
    const SERVER: &[(&str, &str, &str, i64)] = &[
        ("", "", "", -2633406418315610568),
        ("a", "b", "c", -2135616684709555636),
        (
            "toggle_admin",
            "feature-environments",
            "bench15development",
            5843565041388914142,
        ),
        (
            "bench",
            "api-keys",
            "4fa7e9dcec6f18df81c88f3dbc3c91794d4cf2c05fcc52fc85aa1c927be3a5b6",
            -2184324726222361040,
        ),
        ("s", "projects", "default", -5530957082075896918),
        ("schema_x", "features", "fé✓ü-日本", -1901447911708717752),
        ("ab", "c", "defghi", -3600777525405652684),
        ("ab", "c", "defghij", -330040226574552481),
        ("ab", "c", "defghijk", -8449560862949904989),
        ("ab", "c", "defghijkl", 5649728214004351130),
        ("ab", "c", "defghijklm", 690075494793077109),
    ];

    #[test]
    fn lock_ids_are_the_ones_the_server_computes() {
        for &(schema, collection, id, expected) in SERVER {
            assert_eq!(
                lock_id(schema, collection, id),
                expected,
                "{schema}/{collection}/{id}"
            );
        }
    }

    #[test]
    fn locks_are_taken_by_ascending_id_once_each_exclusive_when_any_key_is_written() {
        let mut locks: Vec<KeyLock> = [
            ("projects", "default", false),
            ("features", "f", true),
            ("projects", "default", true),
            ("projects", "default", false),
            ("environments", "development", false),
        ]
        .into_iter()
        .map(|(collection, id, written)| (lock_id("s", collection, id), written))
        .collect();
        let (ids, exclusive) = ordered(&mut locks);
        let mut expected = [
            (lock_id("s", "projects", "default"), true),
            (lock_id("s", "features", "f"), true),
            (lock_id("s", "environments", "development"), false),
        ];
        expected.sort();
        assert_eq!(ids, expected.iter().map(|l| l.0).collect::<Vec<_>>());
        assert_eq!(exclusive, expected.iter().map(|l| l.1).collect::<Vec<_>>());
    }
}
