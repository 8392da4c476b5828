//! Each run's throughput against run #1's, tested as its latency is (latte's
//! "throughput ± its confidence interval against a baseline"): Welch's t-test on each
//! interval's throughput of all operations, or on each repeat's throughput when both
//! runs were repeated, and the ratio with its 95 % interval.

use super::loaded_run::LoadedRun;
use super::significance::{ALPHA, TTest, effective_samples, ratio_interval, welch};

/// One run's throughput against run #1's.
pub struct ThroughputComparison {
    pub run: usize,
    /// All operations per second over the measured phase.
    pub ops_s: f64,
    /// This run's throughput over run #1's; `None` where run #1 did nothing.
    pub ratio: Option<f64>,
    pub test: Option<TTest>,
    /// The ratio's 95 % confidence interval, from the test's samples.
    pub interval: Option<(f64, f64)>,
    /// The independent samples the test had: run #1's and this run's.
    pub samples: (f64, f64),
}

/// Whether the test is across repeats: only where every run was repeated.
fn by_repeat(runs: &[LoadedRun]) -> bool {
    runs.iter().all(|r| r.repeats.len() >= 2)
}

/// What the test's samples are, for the line that says it.
pub fn samples_named(runs: &[LoadedRun]) -> &'static str {
    if by_repeat(runs) {
        "each repeat's throughput"
    } else {
        "each interval's throughput but the last, which the run's end cut short"
    }
}

/// The throughput samples of a run: its repeats', where both sides have them, else
/// its intervals' but the last (which the run's end cut short).
fn samples(run: &LoadedRun, by_repeat: bool) -> Vec<f64> {
    if by_repeat {
        return run
            .repeats
            .iter()
            .map(|s| s.overall.throughput_ops_s)
            .collect();
    }
    let series = run.series("all");
    let whole = series.len().saturating_sub(1);
    series[..whole].iter().map(|r| r.throughput_ops_s).collect()
}

/// Every run's throughput against run #1's.
pub fn compare_throughput(runs: &[LoadedRun]) -> Vec<ThroughputComparison> {
    let by_repeat = by_repeat(runs);
    let base = samples(&runs[0], by_repeat);
    let base_ops_s = runs[0].summary.overall.throughput_ops_s;
    runs.iter()
        .enumerate()
        .map(|(i, run)| {
            let these = samples(run, by_repeat);
            let ops_s = run.summary.overall.throughput_ops_s;
            let ratio = (base_ops_s > 0.0).then(|| ops_s / base_ops_s);
            ThroughputComparison {
                run: i,
                ops_s,
                ratio,
                test: welch(&base, &these),
                interval: ratio.and_then(|r| ratio_interval(&base, &these, r)),
                samples: (effective_samples(&base), effective_samples(&these)),
            }
        })
        .collect()
}

impl ThroughputComparison {
    /// `significant: 0.52× run #1's throughput (p < 0.001, 95 % CI 0.49–0.55×)`, or
    /// why it cannot say.
    pub fn verdict(&self) -> String {
        if self.run == 0 {
            return "baseline".into();
        }
        let Some(ratio) = self.ratio else {
            return "run #1 did nothing to compare with".into();
        };
        // `(p = 0.41, 95 % CI 0.90–1.02×)`
        let why = |t: &TTest| {
            let mut parts = vec![p_text(t.p_value)];
            if let Some((low, high)) = self.interval {
                parts.push(format!("95 % CI {low:.2}–{high:.2}×"));
            }
            format!("({})", parts.join(", "))
        };
        match self.test {
            None => format!(
                "{ratio:.2}×, too short to test (#1 has {}, #{} has {} independent samples; 2 needed)",
                self.samples.0.floor() as u64,
                self.run + 1,
                self.samples.1.floor() as u64
            ),
            Some(t) if t.p_value >= ALPHA => {
                format!("{ratio:.2}×, no significant difference {}", why(&t))
            }
            Some(t) => format!("significant: {ratio:.2}× run #1's throughput {}", why(&t)),
        }
    }
}

/// A p-value as a reader takes it: `p < 0.001` rather than a string of zeros.
fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}
