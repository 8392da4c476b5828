//! What a study's figure is, as data: what it puts along x and draws as series, the
//! number it shows, how it draws, and the numbers the published study gave.

use super::cells::MetricRow;
use super::facts::Fact;
use crate::numbers::thousands;

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
    /// Writes lost without an error: verify's lost updates and deleted orders a racing
    /// update wrote back (what a last-write-wins store does where Galera reports a
    /// conflict).
    LostSilently,
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
            Metric::LostSilently => "writes lost silently",
        }
    }

    pub(super) fn unit(self) -> &'static str {
        match self {
            Metric::OpsPerSecond => "ops/s",
            Metric::Seconds => "s",
            Metric::Conflicts | Metric::LostSilently => "count",
            _ => "µs",
        }
    }

    /// The share of operations beyond a tail percentile (none for other metrics): what
    /// the value rests on is that share of the operations.
    pub(super) fn beyond_share(self) -> Option<f64> {
        match self {
            Metric::P99 => Some(0.01),
            Metric::P999 => Some(0.001),
            Metric::P9999 => Some(0.0001),
            _ => None,
        }
    }

    /// Whether it counts events (said point by point, never as a share of a mean).
    pub(super) fn is_count(self) -> bool {
        matches!(self, Metric::Conflicts | Metric::LostSilently)
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
            Metric::LostSilently => row.lost_silently as f64,
        }
    }

    /// A value as a sentence says it.
    pub(super) fn say(self, value: f64) -> String {
        match self {
            Metric::OpsPerSecond => format!("{} ops/s", thousands(value.round() as u64)),
            Metric::Seconds => format!("{value:.1} s"),
            Metric::Conflicts | Metric::LostSilently => thousands(value.round() as u64),
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
    /// A bulk load's traced batches over its time: the client's and the server's.
    BatchTimes,
    /// A bulk load's server time per pass: the mean of its traced batches and the max.
    ServerMeanMax,
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
    /// The part it stands in, and whose cells it draws.
    pub part: &'static str,
    /// Other parts whose cells it draws too (a baseline run once for several figures).
    pub also: &'static [&'static str],
    pub title: &'static str,
    pub shape: Shape,
    pub x: Dim,
    pub series: Dim,
    pub metric: Metric,
    /// The event types it draws (none: `all`, the whole run).
    pub events: &'static [&'static str],
    /// Only cells with these labels; a value may list alternatives, `A|B`.
    pub only: &'static [(&'static str, &'static str)],
    /// The study's own numbers for this figure, where it gave any.
    pub seed: &'static [SeedValue],
    /// What the study itself said of it.
    pub seed_says: &'static str,
    /// A bound the study gave for every point of it ("even the slowest data point was
    /// less than 15 ms"), in the figure's unit: ours is said beside it.
    pub seed_max: Option<f64>,
    /// Groups of series that do the same work (at RF 3, CL TWO and QUORUM each wait for
    /// two replicas): no best or worst is named between two of one group.
    pub alike: &'static [&'static [&'static str]],
    /// What must hold for the figure to answer the study's question, checked from its
    /// own cells.
    pub premises: &'static [Premise],
}

/// What a figure rests on beyond its numbers, checked from its cells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Premise {
    /// Each node added (at its CPU budget) adds capacity, as another machine would:
    /// no series' throughput falls from its fewest nodes to its most.
    NodesAddCapacity,
    /// The data set exceeds what a node may cache, so reads wait on the disk as the
    /// study's did.
    DataBeyondCache,
}

impl FigureSpec {
    /// Whether it draws the cells of `part`.
    pub(super) fn draws(&self, part: &str) -> bool {
        self.part == part || self.also.contains(&part)
    }
}

/// A figure with nothing chosen: catalogs write only what differs from it.
pub const FIGURE: FigureSpec = FigureSpec {
    part: "",
    also: &[],
    title: "",
    shape: Shape::Bars,
    x: Dim::EventType,
    series: Dim::Label("store"),
    metric: Metric::Mean,
    events: &[],
    only: &[],
    seed: &[],
    seed_says: "",
    seed_max: None,
    alike: &[],
    premises: &[],
};

/// A part of a study: a question and the cells that answer it.
#[derive(Debug, Clone, Copy)]
pub struct PartSpec {
    pub id: &'static str,
    pub title: &'static str,
    pub about: &'static str,
    /// hatshop's own addition, not an experiment of the published study: the page
    /// marks it so.
    pub addition: bool,
}

/// One row of the table a study's page opens with: the published study's setup
/// against ours, ours filled from the cells' own records where they hold it.
#[derive(Debug, Clone, Copy)]
pub struct SetupRow {
    pub what: &'static str,
    pub seed: &'static str,
    pub ours: Ours,
    /// Why ours differs, where we had to change it.
    pub why: &'static str,
}

/// Where a setup row's "ours" comes from.
#[derive(Debug, Clone, Copy)]
pub enum Ours {
    /// Said once for the whole study.
    Text(&'static str),
    /// Read from every cell's run.json: each value its cells had.
    Fact(Fact),
}
