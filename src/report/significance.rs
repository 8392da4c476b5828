//! Is a difference between two runs more than noise? Welch's t-test on the per-interval
//! mean latencies (as latte does), with the p-value from Student's t distribution,
//! computed through the regularized incomplete beta function (Numerical Recipes, 6.4).
//!
//! Consecutive intervals are not independent (a slow second tends to follow a slow
//! second): each side counts as its effective sample size, n (1 − r) / (1 + r) with r
//! the lag-1 autocorrelation of its interval means, so autocorrelated noise is not
//! taken for a difference.

/// The outcome of a two-sided Welch t-test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    pub t: f64,
    pub df: f64,
    pub p_value: f64,
}

/// The level below which a difference is called significant.
pub const ALPHA: f64 = 0.05;

fn mean_and_variance(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// Fewer effective samples than this on either side: no test.
pub const MIN_EFFECTIVE: f64 = 2.0;

/// The number of independent samples that `xs` is worth: n (1 − r) / (1 + r), with r
/// the lag-1 autocorrelation (a negative r counts as 0, never as more samples).
pub fn effective_samples(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    if xs.len() < 3 {
        return n;
    }
    let mean = xs.iter().sum::<f64>() / n;
    let spread: f64 = xs.iter().map(|x| (x - mean).powi(2)).sum();
    if spread == 0.0 {
        return n;
    }
    let lagged: f64 = xs.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    let r = (lagged / spread).clamp(0.0, 0.99);
    n * (1.0 - r) / (1.0 + r)
}

/// Needs at least [`MIN_EFFECTIVE`] effective samples on each side.
pub fn welch(a: &[f64], b: &[f64]) -> Option<TTest> {
    let (na, nb) = (effective_samples(a), effective_samples(b));
    if a.len() < 2 || b.len() < 2 || na < MIN_EFFECTIVE || nb < MIN_EFFECTIVE {
        return None;
    }
    let (ma, va) = mean_and_variance(a);
    let (mb, vb) = mean_and_variance(b);
    let se2 = va / na + vb / nb;
    if se2 == 0.0 {
        let p_value = if ma == mb { 1.0 } else { 0.0 };
        return Some(TTest {
            t: if ma == mb { 0.0 } else { f64::INFINITY },
            df: na + nb - 2.0,
            p_value,
        });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    let p_value = incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0);
    Some(TTest { t, df, p_value })
}

/// The interval, at 1 − [`ALPHA`], of `b`'s mean over `a`'s set around `ratio` (the
/// ratio of the runs' own means): the samples' relative standard errors, each side as
/// its effective sample size, taken on the log of the ratio (so the interval is
/// symmetric in "× faster" and "× slower"), with Welch's degrees of freedom. `None`
/// where the test would have too few samples or a mean of 0.
pub fn ratio_interval(a: &[f64], b: &[f64], ratio: f64) -> Option<(f64, f64)> {
    let (na, nb) = (effective_samples(a), effective_samples(b));
    if a.len() < 2 || b.len() < 2 || na < MIN_EFFECTIVE || nb < MIN_EFFECTIVE {
        return None;
    }
    let (ma, va) = mean_and_variance(a);
    let (mb, vb) = mean_and_variance(b);
    if ma <= 0.0 || mb <= 0.0 || !ratio.is_finite() || ratio <= 0.0 {
        return None;
    }
    let (ua, ub) = (va / (na * ma * ma), vb / (nb * mb * mb));
    if ua + ub == 0.0 {
        return Some((ratio, ratio));
    }
    let df = (ua + ub).powi(2) / (ua * ua / (na - 1.0) + ub * ub / (nb - 1.0));
    let half = t_critical(df, ALPHA) * (ua + ub).sqrt();
    Some((ratio * (-half).exp(), ratio * half.exp()))
}

/// Student's t with `df` degrees of freedom beyond which a two-sided test has
/// probability `alpha`: found by bisection on the p-value.
pub fn t_critical(df: f64, alpha: f64) -> f64 {
    let p = |t: f64| incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    let (mut low, mut high) = (0.0, 1e4);
    for _ in 0..200 {
        let mid = (low + high) / 2.0;
        if p(mid) > alpha {
            low = mid;
        } else {
            high = mid;
        }
    }
    (low + high) / 2.0
}

fn ln_gamma(x: f64) -> f64 {
    // Lanczos approximation (g = 7, n = 9).
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = COEFFICIENTS[0];
    let t = x + 7.5;
    for (i, c) in COEFFICIENTS.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut lentz = Lentz {
        c: 1.0,
        d: 1.0 / away_from_zero(1.0 - qab * x / qap),
    };
    let mut h = lentz.d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        h *= lentz.step(m * (b - m) * x / ((qam + m2) * (a + m2)));
        let delta = lentz.step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)));
        h *= delta;
        if (delta - 1.0).abs() < 1e-12 {
            break;
        }
    }
    h
}

/// The running terms of Lentz's method for a continued fraction.
struct Lentz {
    c: f64,
    d: f64,
}

impl Lentz {
    /// Takes in the next coefficient; the factor the fraction's value changes by.
    fn step(&mut self, aa: f64) -> f64 {
        self.d = 1.0 / away_from_zero(1.0 + aa * self.d);
        self.c = away_from_zero(1.0 + aa / self.c);
        self.d * self.c
    }
}

/// `v`, or a tiny number in its place near zero (Lentz's guard against dividing by 0).
fn away_from_zero(v: f64) -> f64 {
    const TINY: f64 = 1e-300;
    if v.abs() < TINY { TINY } else { v }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_match_student_t_tables() {
        // Two-sided p for t = 2.0 with 10 degrees of freedom is 0.0734; t = 2.228 is the 5 % point.
        assert!((incomplete_beta(5.0, 0.5, 10.0 / 14.0) - 0.0734).abs() < 5e-4);
        assert!((incomplete_beta(5.0, 0.5, 10.0 / (10.0 + 2.228f64.powi(2))) - 0.05).abs() < 5e-4);
    }

    #[test]
    fn t_critical_values_match_student_t_tables() {
        for (df, t) in [(1.0, 12.706), (4.0, 2.776), (10.0, 2.228), (30.0, 2.042)] {
            assert!((t_critical(df, 0.05) - t).abs() < 1e-3, "df {df}");
        }
    }

    #[test]
    fn a_ratio_s_interval_holds_it_and_narrows_with_the_noise() {
        let a = [10.0, 12.0, 11.0, 13.0, 9.0, 10.5, 11.5, 10.0];
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        let (low, high) = ratio_interval(&a, &b, 2.0).unwrap();
        assert!(low < 2.0 && 2.0 < high, "{low}–{high}");
        // As wide on either side in "× slower" as in "× faster".
        assert!(((2.0 / low) - (high / 2.0)).abs() < 1e-9);
        let quiet: Vec<f64> = a.iter().map(|x| 11.0 + (x - 11.0) / 10.0).collect();
        let quiet_b: Vec<f64> = quiet.iter().map(|x| x * 2.0).collect();
        let (q_low, q_high) = ratio_interval(&quiet, &quiet_b, 2.0).unwrap();
        assert!(q_high - q_low < (high - low) / 5.0, "{q_low}–{q_high}");
        assert!(ratio_interval(&a, &[1.0], 2.0).is_none());
        assert_eq!(
            ratio_interval(&[5.0, 5.0], &[10.0, 10.0], 2.0),
            Some((2.0, 2.0))
        );
    }

    #[test]
    fn the_same_samples_differ_by_nothing() {
        let a = [10.0, 12.0, 11.0, 13.0, 9.0];
        let t = welch(&a, &a).unwrap();
        assert_eq!(t.t, 0.0);
        assert!((t.p_value - 1.0).abs() < 1e-9);
    }

    #[test]
    fn autocorrelated_samples_count_as_fewer() {
        // A slow drift: each interval close to the one before.
        let drift: Vec<f64> = (0..40).map(|i| 100.0 + i as f64).collect();
        assert!(
            effective_samples(&drift) < 2.0,
            "{}",
            effective_samples(&drift)
        );
        // Alternating noise is negatively correlated: it counts as n, not more.
        let alternating: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 1.0 } else { 2.0 })
            .collect();
        assert_eq!(effective_samples(&alternating), 40.0);
        // Two drifting runs a little apart: independent samples would call it
        // significant; their effective sizes leave nothing to test.
        let shifted: Vec<f64> = drift.iter().map(|x| x + 5.0).collect();
        assert!(welch(&drift, &shifted).is_none());
    }

    #[test]
    fn clearly_apart_samples_are_significant() {
        let a = [10.0, 12.0, 11.0, 13.0, 9.0, 10.5];
        let b = [20.0, 22.0, 21.0, 23.0, 19.0, 20.5];
        assert!(welch(&a, &b).unwrap().p_value < 1e-6);
        assert!(welch(&a, &[1.0]).is_none());
    }
}
