//! Which existing order an event targets: uniform, zipfian (a few orders are hot),
//! latest (recently created orders are hot) or sysbench's `special` (the middle of the
//! range is hot).
//!
//! Zipf draws use rejection-inversion (Hörmann and Derflinger 1996, as in Apache
//! Commons RNG): O(1) per draw with no table, so the number of live orders may change
//! between draws, as it does while orders are created and deleted.

use serde::{Deserialize, Serialize};

use super::rng::StreamRng;

/// How targets are chosen among the orders that exist at that point of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum KeyDistribution {
    #[default]
    Uniform,
    /// Rank 1 is the oldest live order.
    Zipfian,
    /// Rank 1 is the newest live order.
    Latest,
    /// sysbench's default (`--rand-type=special`), so a race reads what
    /// `oltp_point_select` reads: a quarter of the draws on a bell over the whole
    /// range, the rest uniform in its middle 1 %.
    Special,
}

impl KeyDistribution {
    /// An index into a list of `n > 0` live orders kept in creation order.
    pub fn pick_index(self, rng: &mut StreamRng, n: usize, exponent: f64) -> usize {
        match self {
            KeyDistribution::Uniform => rng.below(n as u64) as usize,
            KeyDistribution::Zipfian => zipf_rank(rng, n as u64, exponent) as usize - 1,
            KeyDistribution::Latest => n - zipf_rank(rng, n as u64, exponent) as usize,
            KeyDistribution::Special => special_index(rng, n),
        }
    }
}

/// sysbench 1.0's `special` draw over `0..n` with its defaults (`--rand-spec-res=75`,
/// `--rand-spec-pct=1`, `--rand-spec-iter=12`), step for step.
fn special_index(rng: &mut StreamRng, n: usize) -> usize {
    let span = (n - 1) as f64;
    let first = rng.unit_f64();
    let index = if first < 0.25 {
        // The mean of 12 uniform draws: a bell centred on the middle.
        let sum: f64 = (0..12).map(|_| rng.unit_f64()).sum();
        sum / 12.0 * span
    } else {
        // sysbench places these with the first draw again, within the middle 1 %.
        first * (span * 0.01 + 1.0) + span / 2.0 - span * 0.005
    };
    (index as usize).min(n - 1)
}

/// A rank in `1..=n` with probability proportional to `1 / rank^exponent`.
pub fn zipf_rank(rng: &mut StreamRng, n: u64, exponent: f64) -> u64 {
    if n == 1 {
        return 1;
    }
    let s = exponent;
    let h_integral_x1 = h_integral(1.5, s) - 1.0;
    let h_integral_n = h_integral(n as f64 + 0.5, s);
    let squeeze = 2.0 - h_integral_inverse(h_integral(2.5, s) - h(2.0, s), s);
    loop {
        let u = h_integral_n + rng.unit_f64() * (h_integral_x1 - h_integral_n);
        let x = h_integral_inverse(u, s);
        let k = ((x + 0.5) as u64).clamp(1, n);
        let kf = k as f64;
        if kf - x <= squeeze || u >= h_integral(kf + 0.5, s) - h(kf, s) {
            return k;
        }
    }
}

fn h(x: f64, s: f64) -> f64 {
    libm::exp(-s * libm::log(x))
}

fn h_integral(x: f64, s: f64) -> f64 {
    let log_x = libm::log(x);
    expm1_over_x((1.0 - s) * log_x) * log_x
}

fn h_integral_inverse(x: f64, s: f64) -> f64 {
    let t = (x * (1.0 - s)).max(-1.0);
    libm::exp(log1p_over_x(t) * x)
}

/// `expm1(x) / x`, continuous at 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        libm::expm1(x) / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

/// `log1p(x) / x`, continuous at 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        libm::log1p(x) / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_ranks_follow_the_power_law() {
        let mut rng = StreamRng::from_seed(3);
        let n = 100;
        let mut counts = vec![0u32; n as usize + 1];
        let draws = 200_000;
        for _ in 0..draws {
            counts[zipf_rank(&mut rng, n, 0.99) as usize] += 1;
        }
        assert_eq!(counts[0], 0);
        let norm: f64 = (1..=n).map(|k| 1.0 / (k as f64).powf(0.99)).sum();
        for k in [1usize, 2, 10, 50] {
            let expected = draws as f64 / (k as f64).powf(0.99) / norm;
            let got = counts[k] as f64;
            assert!(
                (got - expected).abs() / expected < 0.08,
                "rank {k}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn latest_prefers_the_newest() {
        let mut rng = StreamRng::from_seed(4);
        let newest = (0..10_000)
            .filter(|_| KeyDistribution::Latest.pick_index(&mut rng, 1000, 0.99) == 999)
            .count();
        assert!(newest > 1000, "newest picked {newest} times");
    }

    #[test]
    fn special_puts_three_draws_in_four_in_the_middle_percent() {
        let mut rng = StreamRng::from_seed(6);
        let (n, draws) = (100_000, 100_000);
        let picks: Vec<usize> = (0..draws)
            .map(|_| KeyDistribution::Special.pick_index(&mut rng, n, 0.99))
            .collect();
        let share = |keep: &dyn Fn(usize) -> bool| {
            picks.iter().filter(|&&i| keep(i)).count() as f64 / draws as f64
        };
        // 75 % in the middle 1 %, plus the bell's own share of it (about 1 %).
        let middle = share(&|i| (49_500..50_500).contains(&i));
        assert!((0.74..0.78).contains(&middle), "{middle}");
        // The bell is symmetric: about half of its quarter falls below the middle.
        let below = share(&|i| i < 49_500);
        assert!((0.11..0.135).contains(&below), "{below}");
        assert!(share(&|i| i < 20_000) < 0.001);
    }

    #[test]
    fn every_distribution_stays_in_range() {
        let mut rng = StreamRng::from_seed(5);
        for dist in [
            KeyDistribution::Uniform,
            KeyDistribution::Zipfian,
            KeyDistribution::Latest,
            KeyDistribution::Special,
        ] {
            for n in [1usize, 2, 3, 17] {
                for _ in 0..1000 {
                    assert!(dist.pick_index(&mut rng, n, 0.99) < n);
                }
            }
        }
    }
}
