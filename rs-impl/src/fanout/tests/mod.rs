//! In-crate tests of the fanout, for what needs its private parts: the ring buffer's layout
//! (Pekko's six cases), the complexity regression with its test-only quadratic variant, and the
//! randomized model-based test that starts positions near the `u64` wrap point. Behaviour
//! through the public API is in `rs-impl/tests/fanout.rs`.
// Tests use std locks and atomics directly; the facade ban targets the implementation.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod burst;
mod complexity;
mod model;
mod ring;

/// A small deterministic generator (SplitMix64), so the randomized tests replay exactly.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}
