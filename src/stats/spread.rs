//! A figure's spread over several samples of it: median, min, max, mean and standard
//! deviation, as hyperfine and sysbench give them.

use serde::{Deserialize, Serialize};

/// A figure over several samples (repeats, lanes): median, min and max, and mean ±
/// standard deviation (as hyperfine gives them).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Absent in folders written before it (read as 0).
    #[serde(default)]
    pub mean: f64,
    /// The sample standard deviation (n − 1); 0 for one sample.
    #[serde(default)]
    pub stddev: f64,
}

impl Spread {
    /// Median, spread, mean and standard deviation of the finite values.
    pub fn of(values: &[f64]) -> Spread {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() {
            return Spread::default();
        }
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let squares: f64 = sorted.iter().map(|v| (v - mean).powi(2)).sum();
        Spread {
            median,
            min: sorted[0],
            max: sorted[n - 1],
            mean,
            stddev: if n > 1 {
                (squares / (n - 1) as f64).sqrt()
            } else {
                0.0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_middle_pair_s_mean() {
        assert_eq!(
            Spread::of(&[3.0, 1.0, 2.0]),
            Spread {
                median: 2.0,
                min: 1.0,
                max: 3.0,
                mean: 2.0,
                stddev: 1.0
            }
        );
        assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 10.0]).median, 3.0);
        assert_eq!(Spread::of(&[]).max, 0.0);
    }
}
