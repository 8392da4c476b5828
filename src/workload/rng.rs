//! The one random number generator of the event stream: xoshiro256** (Blackman and
//! Vigna, 2018), seeded through SplitMix64.
//!
//! It is written out here rather than taken from a crate so that the stream can never
//! change under us with a dependency update: the same seed gives the same numbers on
//! every machine and every hatshop build. Floating point goes through `libm` (a pure
//! Rust libm) for the same reason.

/// SplitMix64: expands one `u64` seed into well-mixed state words.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256**: fast, small state, passes BigCrush.
#[derive(Debug, Clone)]
pub struct StreamRng {
    s: [u64; 4],
}

impl StreamRng {
    /// A generator whose whole state follows from `seed`.
    pub fn from_seed(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        StreamRng { s }
    }

    #[cfg(test)]
    fn from_state(s: [u64; 4]) -> Self {
        StreamRng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` by multiply-shift (Lemire); `n` must be > 0.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A uniform integer in `lo..=hi`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// A uniform float in `[0, 1)` from the top 53 bits.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro_matches_the_reference_algorithm() {
        // Worked by hand from the reference C code for state {1, 2, 3, 4}.
        let mut rng = StreamRng::from_state([1, 2, 3, 4]);
        assert_eq!(rng.next_u64(), 11520);
        assert_eq!(rng.next_u64(), 0);
    }

    #[test]
    fn splitmix_matches_the_reference_algorithm() {
        // First output of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        let mut state = 0;
        assert_eq!(splitmix64(&mut state), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn same_seed_same_numbers_other_seed_other_numbers() {
        let a: Vec<u64> = (0..8)
            .scan(StreamRng::from_seed(7), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..8)
            .scan(StreamRng::from_seed(7), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..8)
            .scan(StreamRng::from_seed(8), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = StreamRng::from_seed(1);
        let mut seen = [0u32; 5];
        for _ in 0..10_000 {
            seen[rng.below(5) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 1_800 && n < 2_200), "{seen:?}");
    }
}
