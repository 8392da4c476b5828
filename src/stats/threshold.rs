//! `--threshold`: a bound a run's numbers must keep, as k6's thresholds are (`p99<5ms`,
//! `errors<1%`, `throughput>5000`), on one event type or all, judged on the run's
//! summary once it ends. The command line's text is read in `cli`; here it is judged.

use serde::{Deserialize, Serialize};

use super::{LatencySummary, Summary};
use crate::numbers::{percent, time_text};

/// One bound: `scope:stat op bound`, kept as the user wrote it for every message.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As given (`create_order:p99<5ms`).
    pub text: String,
    /// An event type's name, or `all`.
    pub scope: String,
    pub stat: Stat,
    pub op: Op,
    /// µs for a latency, a share (0–1) for errors, operations per second for throughput.
    pub bound: f64,
}

/// What a threshold bounds.
#[derive(Debug, Clone, PartialEq)]
pub enum Stat {
    Latency(Clock, LatencyStat),
    /// Failed operations over all measured ones.
    ErrorShare,
    /// All measured operations per second, failed ones included.
    Throughput,
}

/// Which time of an operation: response time (from when it was due, under `--rate`)
/// unless `service.` asks for the time from sent to answered. Without `--rate` the two
/// are one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Clock {
    Response,
    Service,
}

/// Which figure of a latency ladder.
#[derive(Debug, Clone, PartialEq)]
pub enum LatencyStat {
    Mean,
    Stddev,
    Max,
    /// The label summary.json keys it by (`p99.9`) and the percent.
    Percentile(String, f64),
}

/// The comparison the measured value must pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Below,
    AtMost,
    Above,
    AtLeast,
}

impl Op {
    fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Op::Below => value < bound,
            Op::AtMost => value <= bound,
            Op::Above => value > bound,
            Op::AtLeast => value >= bound,
        }
    }
}

/// A threshold judged on a run: what was measured and whether it kept the bound.
/// run.json keeps one per `--threshold`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ThresholdVerdict {
    /// As given.
    pub threshold: String,
    pub kept: bool,
    /// The measured value, in the bound's unit (µs, a share, ops/s); absent where
    /// there was nothing to measure (no operation of the event type succeeded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<f64>,
    /// One line for a person: what was measured against the bound.
    pub said: String,
}

impl Threshold {
    /// The percentile it reads, which the summary must hold (label, percent).
    pub fn percentile(&self) -> Option<(String, f64)> {
        match &self.stat {
            Stat::Latency(_, LatencyStat::Percentile(label, p)) => Some((label.clone(), *p)),
            _ => None,
        }
    }

    /// The verdict on `summary`. A bound with nothing to measure is not kept: an
    /// unchecked bound is no evidence.
    pub fn judge(&self, summary: &Summary) -> ThresholdVerdict {
        let row = match self.scope.as_str() {
            "all" => Some(&summary.overall),
            name => summary.events.iter().find(|e| e.event_type == name),
        };
        let measured = row.and_then(|row| self.measure(row));
        let ops = match self.scope.as_str() {
            "all" => "operation".to_string(),
            name => format!("{name} operation"),
        };
        let said = match (row, measured) {
            (None, _) => format!("no {ops} was measured"),
            (Some(_), None) => format!("no {ops} succeeded"),
            (Some(row), Some(value)) => self.against(row, value),
        };
        ThresholdVerdict {
            threshold: self.text.clone(),
            kept: measured.is_some_and(|v| self.op.holds(v, self.bound)),
            measured,
            said,
        }
    }

    /// The value the bound is held to, from one row of the summary.
    fn measure(&self, row: &LatencySummary) -> Option<f64> {
        match &self.stat {
            Stat::ErrorShare => (row.count > 0).then(|| row.errors as f64 / row.count as f64),
            Stat::Throughput => Some(row.throughput_ops_s),
            Stat::Latency(clock, stat) => {
                let ladder = match clock {
                    Clock::Response => row.response.as_deref().unwrap_or(row),
                    Clock::Service => row,
                };
                (ladder.ok > 0).then(|| match stat {
                    LatencyStat::Mean => ladder.mean_us,
                    LatencyStat::Stddev => ladder.stddev_us,
                    LatencyStat::Max => ladder.max_us,
                    LatencyStat::Percentile(label, _) => ladder.percentile(label),
                })
            }
        }
    }

    /// `response p99 of create_order was 7.20 ms, 44 % over (bound < 5.00 ms)`; the
    /// clock is named only where the run had two (`--rate`), and a percentile resting
    /// on few samples says so.
    fn against(&self, row: &LatencySummary, value: f64) -> String {
        let (what, shown, bound) = match &self.stat {
            Stat::ErrorShare => (
                "error share".to_string(),
                percent(value),
                percent(self.bound),
            ),
            Stat::Throughput => (
                "throughput".to_string(),
                format!("{value:.0} ops/s"),
                format!("{:.0} ops/s", self.bound),
            ),
            Stat::Latency(clock, stat) => {
                let clock = match (clock, &row.response) {
                    (Clock::Response, Some(_)) => "response ",
                    (Clock::Service, Some(_)) => "service ",
                    (_, None) => "",
                };
                let (stat, thin) = match stat {
                    LatencyStat::Mean => ("mean", false),
                    LatencyStat::Stddev => ("stddev", false),
                    LatencyStat::Max => ("max", false),
                    LatencyStat::Percentile(label, _) => (label.as_str(), row.is_thin(label)),
                };
                let thin = if thin {
                    ", resting on fewer than 10 samples beyond it"
                } else {
                    ""
                };
                (
                    format!("{clock}{stat}"),
                    format!("{}{thin}", time_text(value)),
                    time_text(self.bound),
                )
            }
        };
        format!(
            "{what} of {} was {shown}{} (bound {} {bound})",
            self.scope,
            self.off_by(value),
            self.op.symbol()
        )
    }

    /// How far a broken bound was missed: `, 44 % over`, `, 12.5× the bound`.
    fn off_by(&self, value: f64) -> String {
        if self.op.holds(value, self.bound) || self.bound == 0.0 {
            return String::new();
        }
        let ratio = value / self.bound;
        if ratio >= 2.0 {
            return format!(", {ratio:.1}× the bound");
        }
        let off = (ratio - 1.0).abs() * 100.0;
        let side = if value > self.bound { "over" } else { "under" };
        format!(", {off:.0} % {side}")
    }
}

impl Op {
    /// As written: `<`, `<=`, `>`, `>=`.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Below => "<",
            Op::AtMost => "<=",
            Op::Above => ">",
            Op::AtLeast => ">=",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::RunStats;

    fn summary_of(latencies_us: &[u64], errors: u64) -> Summary {
        let mut stats = RunStats::new(1);
        for us in latencies_us {
            stats.event(0).record_ok(us * 1_000);
        }
        for _ in 0..errors {
            stats
                .event(0)
                .record_error("timeout", None, 1_000, "too slow");
        }
        stats.summary(&["read"], 1.0)
    }

    fn threshold(scope: &str, stat: Stat, op: Op, bound: f64) -> Threshold {
        Threshold {
            text: "t".into(),
            scope: scope.into(),
            stat,
            op,
            bound,
        }
    }

    #[test]
    fn a_latency_bound_is_kept_or_broken_by_how_much() {
        let summary = summary_of(&[100, 200, 300, 400, 1_000], 0);
        let max = |bound| {
            threshold(
                "all",
                Stat::Latency(Clock::Response, LatencyStat::Max),
                Op::Below,
                bound,
            )
        };
        let kept = max(2_000.0).judge(&summary);
        assert!(kept.kept, "{kept:?}");
        let broken = max(500.0).judge(&summary);
        assert!(!broken.kept);
        assert_eq!(
            broken.said,
            "max of all was 1.00 ms, 2.0× the bound (bound < 500.0 µs)"
        );
    }

    #[test]
    fn error_share_and_throughput_are_judged_on_all_operations() {
        let summary = summary_of(&[100; 9], 1);
        let errors = threshold("read", Stat::ErrorShare, Op::Below, 0.05).judge(&summary);
        assert!(!errors.kept);
        assert_eq!(errors.measured, Some(0.1));
        let throughput = threshold("all", Stat::Throughput, Op::AtLeast, 10.0).judge(&summary);
        assert!(throughput.kept, "{throughput:?}");
    }

    #[test]
    fn a_bound_with_nothing_to_measure_is_not_kept() {
        let summary = summary_of(&[], 3);
        let mean = threshold(
            "all",
            Stat::Latency(Clock::Service, LatencyStat::Mean),
            Op::Below,
            1e9,
        );
        let verdict = mean.judge(&summary);
        assert!(!verdict.kept);
        assert_eq!(verdict.said, "no operation succeeded");
        let absent = threshold("delete_order", Stat::Throughput, Op::Above, 0.0);
        assert_eq!(
            absent.judge(&summary).said,
            "no delete_order operation was measured"
        );
    }
}
