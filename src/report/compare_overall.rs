//! Each run's whole-run figure against run #1's, tested as its latency is (latte's
//! "throughput ± its confidence interval against a baseline"): its throughput, and
//! under `--rate` its response p99, what an objective on a paced run bounds. Welch's
//! t-test on each interval's figure, or on each repeat's when every run was repeated,
//! and the ratio with its 95 % interval.

use super::loaded_run::LoadedRun;
use super::significance::{ALPHA, TTest, effective_samples, ratio_interval, welch};
use crate::numbers::{format_us, thousands};

/// Which whole-run figure is compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Overall {
    /// All operations per second over the measured phase.
    Throughput,
    /// All operations' response time p99 (from when each was due), under `--rate`.
    ResponseP99,
}

impl Overall {
    /// Its name in a sentence.
    pub fn name(self) -> &'static str {
        match self {
            Overall::Throughput => "throughput",
            Overall::ResponseP99 => "response p99",
        }
    }

    /// Whether every run has it: response time needs every run paced.
    pub fn applies(self, runs: &[LoadedRun]) -> bool {
        match self {
            Overall::Throughput => true,
            Overall::ResponseP99 => runs.iter().all(|r| r.summary.overall.response.is_some()),
        }
    }

    /// A value of it as the tables say it.
    pub fn said(self, value: f64) -> String {
        match self {
            Overall::Throughput => format!("{} ops/s", thousands(value.round() as u64)),
            Overall::ResponseP99 => format!("{} µs", format_us(value)),
        }
    }

    /// A run's figure over its measured phase (its median over repeats).
    fn of(self, summary: &crate::stats::Summary) -> f64 {
        match self {
            Overall::Throughput => summary.overall.throughput_ops_s,
            Overall::ResponseP99 => summary
                .overall
                .response
                .as_ref()
                .map_or(f64::NAN, |r| r.percentile("p99")),
        }
    }

    /// An interval's figure.
    fn of_interval(self, row: &super::intervals::IntervalRow) -> Option<f64> {
        match self {
            Overall::Throughput => Some(row.throughput_ops_s),
            Overall::ResponseP99 => row.response_p99_us.filter(|_| row.ops > row.errors),
        }
    }
}

/// One run's figure against run #1's.
pub struct OverallComparison {
    pub of: Overall,
    pub run: usize,
    pub value: f64,
    /// This run's figure over run #1's; `None` where run #1 has none to divide by.
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
pub fn samples_named(runs: &[LoadedRun], of: Overall) -> String {
    match (by_repeat(runs), of) {
        (true, _) => format!("each repeat's {}", of.name()),
        (false, Overall::Throughput) => {
            "each interval's throughput but the last, which the run's end cut short".into()
        }
        (false, Overall::ResponseP99) => "each interval's response p99".into(),
    }
}

/// The samples of a run: its repeats', where every run has them, else its intervals'
/// (a throughput's but the last, which the run's end cut short).
fn samples(run: &LoadedRun, by_repeat: bool, of: Overall) -> Vec<f64> {
    if by_repeat {
        return run
            .repeats
            .iter()
            .map(|s| of.of(s))
            .filter(|v| v.is_finite())
            .collect();
    }
    let series = run.series("all");
    let whole = match of {
        Overall::Throughput => series.len().saturating_sub(1),
        Overall::ResponseP99 => series.len(),
    };
    series[..whole]
        .iter()
        .filter_map(|r| of.of_interval(r))
        .collect()
}

/// Every run's figure against run #1's.
pub fn compare_overall(runs: &[LoadedRun], of: Overall) -> Vec<OverallComparison> {
    let by_repeat = by_repeat(runs);
    let base = samples(&runs[0], by_repeat, of);
    let base_value = of.of(&runs[0].summary);
    runs.iter()
        .enumerate()
        .map(|(i, run)| {
            let these = samples(run, by_repeat, of);
            let value = of.of(&run.summary);
            let ratio = (base_value > 0.0 && value.is_finite()).then(|| value / base_value);
            OverallComparison {
                of,
                run: i,
                value,
                ratio,
                test: welch(&base, &these),
                interval: ratio.and_then(|r| ratio_interval(&base, &these, r)),
                samples: (effective_samples(&base), effective_samples(&these)),
            }
        })
        .collect()
}

impl OverallComparison {
    /// `significant: 0.52× run #1's throughput (p < 0.001, 95 % CI 0.49–0.55×)`, or
    /// why it cannot say.
    pub fn verdict(&self) -> String {
        if self.run == 0 {
            return "baseline".into();
        }
        let Some(ratio) = self.ratio else {
            return format!("run #1 has no {} to compare with", self.of.name());
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
            Some(t) => format!(
                "significant: {ratio:.2}× run #1's {} {}",
                self.of.name(),
                why(&t)
            ),
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
