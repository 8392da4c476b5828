//! What a study's figure is, as data: what it puts along x and draws as series, the
//! number it shows, how it draws, and the numbers the published study gave.

use super::cells::MetricRow;
use crate::report::table::thousands;

/// What a figure puts along its x axis or draws as its series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dim {
    /// The event type (create_order, read, …).
    EventType,
    /// One of the cells' labels (store, events, connections, …).
    Label(&'static str),
}

/// The number a figure shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    Mean,
    P99,
    P999,
    P9999,
    Max,
    OpsPerSecond,
    /// The measured phase's wall time.
    Seconds,
    Conflicts,
}

impl Metric {
    pub(super) fn name(self) -> &'static str {
        match self {
            Metric::Mean => "mean latency",
            Metric::P99 => "p99 latency",
            Metric::P999 => "p99.9 latency",
            Metric::P9999 => "p99.99 latency",
            Metric::Max => "max latency",
            Metric::OpsPerSecond => "throughput",
            Metric::Seconds => "total time",
            Metric::Conflicts => "conflicts",
        }
    }

    pub(super) fn unit(self) -> &'static str {
        match self {
            Metric::OpsPerSecond => "ops/s",
            Metric::Seconds => "s",
            Metric::Conflicts => "count",
            _ => "µs",
        }
    }

    pub(super) fn higher_is_better(self) -> bool {
        self == Metric::OpsPerSecond
    }

    pub(super) fn of(self, row: &MetricRow) -> f64 {
        match self {
            Metric::Mean => row.mean_us,
            Metric::P99 => row.p99_us,
            Metric::P999 => row.p999_us,
            Metric::P9999 => row.p9999_us,
            Metric::Max => row.max_us,
            Metric::OpsPerSecond => row.ops_s,
            Metric::Seconds => row.elapsed_s,
            Metric::Conflicts => row.conflicts as f64,
        }
    }

    /// A value as a sentence says it.
    pub(super) fn say(self, value: f64) -> String {
        match self {
            Metric::OpsPerSecond => format!("{} ops/s", thousands(value.round() as u64)),
            Metric::Seconds => format!("{value:.1} s"),
            Metric::Conflicts => thousands(value.round() as u64),
            _ if value >= 1_000_000.0 => format!("{:.2} s", value / 1_000_000.0),
            _ if value >= 1000.0 => format!("{:.2} ms", value / 1000.0),
            _ => format!("{value:.0} µs"),
        }
    }
}

/// How a figure draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// A group per x value, a bar per series (the mean of its cells, whiskers min to max).
    Bars,
    /// A line per series over a numeric x.
    Lines,
    /// A line per cell over the seconds of its run, from its intervals.csv (`all`):
    /// how steady the metric was.
    OverTime,
}

/// A number the published study gave, in the figure's unit.
#[derive(Debug, Clone, Copy)]
pub struct SeedValue {
    pub x: &'static str,
    pub series: &'static str,
    pub value: f64,
}

/// One figure of a study, as data.
#[derive(Debug, Clone, Copy)]
pub struct FigureSpec {
    /// The part whose cells it draws.
    pub part: &'static str,
    pub title: &'static str,
    pub shape: Shape,
    pub x: Dim,
    pub series: Dim,
    pub metric: Metric,
    /// The event types it draws (none: `all`, the whole run).
    pub events: &'static [&'static str],
    /// Only cells with these labels.
    pub only: &'static [(&'static str, &'static str)],
    /// The study's own numbers for this figure, where it gave any.
    pub seed: &'static [SeedValue],
    /// What the study itself said of it.
    pub seed_says: &'static str,
}

/// A part of a study: a question and the cells that answer it.
#[derive(Debug, Clone, Copy)]
pub struct PartSpec {
    pub id: &'static str,
    pub title: &'static str,
    pub about: &'static str,
}
