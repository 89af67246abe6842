//! Stable lane selection: Kafka's `murmur2` over a key's bytes, then
//! `toPositive(h) % lanes` (Kafka's default partitioner).

/// Kafka's `Utils.murmur2`: MurmurHash2 (32 bits) with Kafka's fixed seed `0x9747b28c`,
/// reading the bytes as little-endian 4-byte words. Specified, unseeded and the same on every
/// platform, run, process and version: golden values from Kafka's own `UtilsTest` pin it.
///
/// # Examples
///
/// ```
/// use rs_impl::lanes::murmur2;
/// assert_eq!(murmur2(b"foobar") as i32, -790_332_482); // Kafka's UtilsTest
/// ```
pub fn murmur2(data: &[u8]) -> u32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let len = data.len();
    // Java's `seed ^ length` on an int: the length's low 32 bits.
    let mut h = SEED ^ (len as u32);
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        if rest.len() == 3 {
            h ^= u32::from(rest[2]) << 16;
        }
        if rest.len() >= 2 {
            h ^= u32::from(rest[1]) << 8;
        }
        h ^= u32::from(rest[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h
}

/// The lane of a key hash among `lanes`: Kafka's `toPositive(h) % lanes`
/// (`h & 0x7fffffff`, so the result agrees with Kafka's partitioner for the same bytes).
///
/// # Examples
///
/// ```
/// use rs_impl::lanes::{lane_of, murmur2};
/// assert_eq!(lane_of(murmur2(b"foobar"), 10), 6);
/// assert_eq!(lane_of(murmur2(b"foobar"), 50), 16);
/// ```
#[inline]
pub fn lane_of(hash: u32, lanes: usize) -> usize {
    ((hash & 0x7fff_ffff) as usize) % lanes.max(1)
}

/// A key that selects a lane: its bytes, hashed with [`murmur2`].
///
/// The encodings are fixed (never `Hash`, whose encoding std leaves unspecified, and never a
/// seeded hasher): strings by their UTF-8 bytes, byte slices as they are, integers by their
/// **big-endian** bytes at their own width (what Kafka's `IntegerSerializer` and
/// `LongSerializer` write, so an `i32` or `i64` key lands where a Kafka producer would put
/// it), `usize`/`isize` as 64 bits, `bool` and `char` as `u8` and `u32`. A key already hashed
/// is a [`KeyHash`] (for a key borrowed from the element: `|m: &Msg| KeyHash::of(&m.name)`).
///
/// # Examples
///
/// ```
/// use rs_impl::lanes::{murmur2, LaneKey};
/// assert_eq!("foobar".lane_hash(), murmur2(b"foobar"));
/// assert_eq!(7u32.lane_hash(), murmur2(&[0, 0, 0, 7]));
/// assert_eq!(String::from("21").lane_hash() as i32, -973_932_308);
/// ```
pub trait LaneKey {
    /// The key's [`murmur2`] hash.
    fn lane_hash(&self) -> u32;
}

impl LaneKey for str {
    fn lane_hash(&self) -> u32 {
        murmur2(self.as_bytes())
    }
}

impl LaneKey for [u8] {
    fn lane_hash(&self) -> u32 {
        murmur2(self)
    }
}

impl<const N: usize> LaneKey for [u8; N] {
    fn lane_hash(&self) -> u32 {
        murmur2(self)
    }
}

impl LaneKey for String {
    fn lane_hash(&self) -> u32 {
        murmur2(self.as_bytes())
    }
}

impl LaneKey for Vec<u8> {
    fn lane_hash(&self) -> u32 {
        murmur2(self)
    }
}

impl<K: LaneKey + ?Sized> LaneKey for &K {
    fn lane_hash(&self) -> u32 {
        (**self).lane_hash()
    }
}

impl<K: LaneKey + ?Sized> LaneKey for Box<K> {
    fn lane_hash(&self) -> u32 {
        (**self).lane_hash()
    }
}

macro_rules! int_keys {
    ($($t:ty),*) => {$(
        impl LaneKey for $t {
            #[inline]
            fn lane_hash(&self) -> u32 {
                murmur2(&self.to_be_bytes())
            }
        }
    )*};
}

int_keys!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128);

impl LaneKey for usize {
    #[inline]
    fn lane_hash(&self) -> u32 {
        (*self as u64).lane_hash()
    }
}

impl LaneKey for isize {
    #[inline]
    fn lane_hash(&self) -> u32 {
        (*self as i64).lane_hash()
    }
}

impl LaneKey for bool {
    fn lane_hash(&self) -> u32 {
        u8::from(*self).lane_hash()
    }
}

impl LaneKey for char {
    fn lane_hash(&self) -> u32 {
        u32::from(*self).lane_hash()
    }
}

/// A key hashed already: its [`lane_hash`](LaneKey::lane_hash) is itself. Lets a key
/// function hash a key it borrows from the element (a closure cannot return a borrow of its
/// argument through `Fn(&T) -> Q`).
///
/// # Examples
///
/// ```
/// use rs_impl::lanes::{murmur2, KeyHash, LaneKey};
/// struct Msg { to: String }
/// let key = |m: &Msg| KeyHash::of(m.to.as_str());
/// assert_eq!(key(&Msg { to: "foobar".into() }).lane_hash(), murmur2(b"foobar"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyHash(pub u32);

impl KeyHash {
    /// The hash of `key`.
    ///
    /// # Examples
    ///
    /// See [`KeyHash`].
    pub fn of<K: LaneKey + ?Sized>(key: &K) -> Self {
        KeyHash(key.lane_hash())
    }
}

impl LaneKey for KeyHash {
    #[inline]
    fn lane_hash(&self) -> u32 {
        self.0
    }
}

#[cfg(all(test, not(rs_loom)))]
mod tests {
    use super::*;

    /// Kafka's `UtilsTest.testMurmur2` (org.apache.kafka.common.utils), as signed ints.
    #[test]
    fn murmur2_matches_kafkas_golden_values() {
        let cases: [(&[u8], i32); 6] = [
            (b"21", -973_932_308),
            (b"foobar", -790_332_482),
            (b"a-little-bit-long-string", -985_981_536),
            (b"a-little-bit-longer-string", -1_486_304_829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58_897_971,
            ),
            (b"abc", 479_470_107),
        ];
        for (bytes, want) in cases {
            assert_eq!(
                murmur2(bytes) as i32,
                want,
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn lanes_follow_kafkas_partitioner() {
        // toPositive(-790332482) = 1357151166
        assert_eq!(lane_of(murmur2(b"foobar"), 10), 6);
        assert_eq!(lane_of(murmur2(b"foobar"), 50), 16);
        assert_eq!(lane_of(u32::MAX, 7), (0x7fff_ffff_usize) % 7);
        assert_eq!(lane_of(123, 1), 0);
    }

    #[test]
    fn key_encodings_are_fixed() {
        assert_eq!("abc".lane_hash() as i32, 479_470_107);
        assert_eq!(b"abc".lane_hash(), "abc".lane_hash());
        assert_eq!(vec![b'a', b'b', b'c'].lane_hash(), "abc".lane_hash());
        assert_eq!(1u32.lane_hash(), murmur2(&[0, 0, 0, 1]));
        assert_eq!((-1i64).lane_hash(), murmur2(&[0xff; 8]));
        assert_eq!(5usize.lane_hash(), 5u64.lane_hash());
        assert_eq!(KeyHash::of("abc").lane_hash(), "abc".lane_hash());
        assert_eq!((&&"abc").lane_hash(), "abc".lane_hash());
        // Pinned here so that an accidental change of the integer encoding shows.
        assert_eq!(0u64.lane_hash(), murmur2(&[0; 8]));
    }
}
