//! What a study's figure is, as data: what it puts along x and draws as series, the
//! number it shows, how it draws, and the numbers the published study gave. A study
//! file (`studies/*.toml`) writes them as they are named here.

use serde::Deserialize;

use super::cells::MetricRow;
use super::facts::Fact;
use crate::numbers::thousands;

/// What a figure puts along its x axis or draws as its series: in a study file,
/// `"event type"` or a label's name.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "String")]
pub enum Dim {
    /// The event type (create_order, read, …).
    EventType,
    /// One of the cells' labels (store, events, connections, …).
    Label(String),
}

impl From<String> for Dim {
    fn from(name: String) -> Dim {
        if name == "event type" {
            Dim::EventType
        } else {
            Dim::Label(name)
        }
    }
}

/// The number a figure shows.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    Mean,
    P99,
    #[serde(rename = "p99.9")]
    P999,
    #[serde(rename = "p99.99")]
    P9999,
    Max,
    #[serde(rename = "throughput")]
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

    /// The label summary.json and `--threshold` give it, for a percentile.
    pub(super) fn percentile_label(self) -> Option<&'static str> {
        match self {
            Metric::P99 => Some("p99"),
            Metric::P999 => Some("p99.9"),
            Metric::P9999 => Some("p99.99"),
            _ => None,
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
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedValue {
    pub x: String,
    pub series: String,
    pub value: f64,
}

/// One figure of a study, as data; a study file writes only what differs from the
/// default (bars of the mean latency by event type, a series per store).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FigureSpec {
    /// The part it stands in, and whose cells it draws.
    pub part: String,
    /// Other parts whose cells it draws too (a baseline run once for several figures).
    pub also: Vec<String>,
    pub title: String,
    pub shape: Shape,
    pub x: Dim,
    pub series: Dim,
    pub metric: Metric,
    /// The event types it draws (none: `all`, the whole run).
    pub events: Vec<String>,
    /// Only cells with these labels; a value may list alternatives, `A|B`.
    #[serde(deserialize_with = "label_pairs")]
    pub only: Vec<(String, String)>,
    /// The study's own numbers for this figure, where it gave any.
    pub seed: Vec<SeedValue>,
    /// What the study itself said of it.
    pub seed_says: String,
    /// A bound the study gave for every point of it ("even the slowest data point was
    /// less than 15 ms"), in the figure's unit: ours is said beside it.
    pub seed_max: Option<f64>,
    /// Groups of series that do the same work (at RF 3, CL TWO and QUORUM each wait for
    /// two replicas): no best or worst is named between two of one group.
    pub alike: Vec<Vec<String>>,
    /// What must hold for the figure to answer the study's question, checked from its
    /// own cells.
    pub premises: Vec<Premise>,
}

/// What a figure rests on beyond its numbers, checked from its cells.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
    pub fn draws(&self, part: &str) -> bool {
        self.part == part || self.also.iter().any(|also| also == part)
    }
}

/// A figure with nothing chosen: a study file writes only what differs from it.
impl Default for FigureSpec {
    fn default() -> FigureSpec {
        FigureSpec {
            part: String::new(),
            also: Vec::new(),
            title: String::new(),
            shape: Shape::Bars,
            x: Dim::EventType,
            series: Dim::Label("store".into()),
            metric: Metric::Mean,
            events: Vec::new(),
            only: Vec::new(),
            seed: Vec::new(),
            seed_says: String::new(),
            seed_max: None,
            alike: Vec::new(),
            premises: Vec::new(),
        }
    }
}

/// Labels a figure keeps, in the order the file gives them (`{ store = "A|B" }`).
fn label_pairs<'de, D: serde::Deserializer<'de>>(
    given: D,
) -> Result<Vec<(String, String)>, D::Error> {
    let pairs = indexmap::IndexMap::<String, String>::deserialize(given)?;
    Ok(pairs.into_iter().collect())
}

/// A part of a study: a question and the cells that answer it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartSpec {
    pub id: String,
    pub title: String,
    pub about: String,
    /// hatshop's own addition, not an experiment of the published study: the page
    /// marks it so.
    #[serde(default)]
    pub addition: bool,
}

/// One row of the table a study's page opens with: the published study's setup
/// against ours, ours filled from the cells' own records where they hold it.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "SetupLine")]
pub struct SetupRow {
    pub what: String,
    pub seed: String,
    pub ours: Ours,
    /// Why ours differs, where we had to change it.
    pub why: String,
}

/// Where a setup row's "ours" comes from.
#[derive(Debug, Clone)]
pub enum Ours {
    /// Said once for the whole study.
    Text(String),
    /// Read from every cell's run.json: each value its cells had.
    Fact(Fact),
}

/// A setup row as a study file writes it: ours is a fact every cell's record holds
/// (`here`) or words said once (`text`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetupLine {
    what: String,
    seed: String,
    here: Option<String>,
    text: Option<String>,
    #[serde(default)]
    why: String,
}

impl TryFrom<SetupLine> for SetupRow {
    type Error = String;

    fn try_from(line: SetupLine) -> Result<SetupRow, String> {
        let ours = match (line.here, line.text) {
            (Some(fact), None) => Ours::Fact(fact.parse()?),
            (None, Some(text)) => Ours::Text(text),
            _ => {
                return Err(format!(
                    "setup row '{}': give either `here` (a fact of each cell's record) or `text`",
                    line.what
                ));
            }
        };
        Ok(SetupRow {
            what: line.what,
            seed: line.seed,
            ours,
            why: line.why,
        })
    }
}
