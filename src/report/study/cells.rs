//! A study's cells as its page reads them: each one's labels, status and numbers per
//! event type, from its result folder's summary.

use std::path::PathBuf;

use super::facts::CellFacts;
use crate::numbers::thousands;
use crate::report::intervals::IntervalRow;
use crate::report::sweep::SearchAnswer;
use crate::stats::{LatencySummary, Summary};
use crate::verify::Verdict;

/// One event type (or `all`) of a finished cell.
#[derive(Debug, Clone, Default)]
pub struct MetricRow {
    pub event_type: String,
    /// Its latencies are response times (the run was paced, `--rate`): from when each
    /// operation was due, the queue included, as an objective under a rate is judged.
    pub response: bool,
    pub ops: u64,
    pub errors: u64,
    pub conflicts: u64,
    /// The errors by kind ("conflict", "timeout"), as the cells' table explains them.
    pub errors_by_kind: Vec<(String, u64)>,
    /// Of `all`: verify's lost updates and resurrected deletes, writes lost without an
    /// error (0 where verify did not run).
    pub lost_silently: u64,
    pub elapsed_s: f64,
    pub ops_s: f64,
    pub mean_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub p9999_us: f64,
    pub max_us: f64,
}

impl MetricRow {
    fn of(summary: &Summary, s: &LatencySummary) -> MetricRow {
        let times = s.response.as_deref().unwrap_or(s);
        MetricRow {
            event_type: s.event_type.clone(),
            response: s.response.is_some(),
            ops: s.count,
            errors: s.errors,
            conflicts: s.errors_by_kind.get("conflict").copied().unwrap_or(0),
            errors_by_kind: s
                .errors_by_kind
                .iter()
                .map(|(k, n)| (k.clone(), *n))
                .collect(),
            elapsed_s: summary.elapsed_s,
            ops_s: s.throughput_ops_s,
            mean_us: times.mean_us,
            p99_us: times.percentile("p99"),
            p999_us: times.percentile("p99.9"),
            p9999_us: times.percentile("p99.99"),
            max_us: times.max_us,
            lost_silently: 0,
        }
    }

    /// `all` first, then each event type that ran.
    pub fn rows_of(summary: &Summary) -> Vec<MetricRow> {
        std::iter::once(&summary.overall)
            .chain(&summary.events)
            .map(|s| MetricRow::of(summary, s))
            .collect()
    }
}

/// Where a study's cell stands, as its page says it.
#[derive(Debug, Clone, PartialEq)]
pub enum CellStatus {
    NotRun,
    /// Its folder holds no finished run or load: a resumed study runs it again.
    CutShort,
    /// It failed, for the reason given (its first line), and the study went on; a
    /// resumed study runs it again.
    Failed(String),
    /// Its folder lacks the file its numbers come from (named).
    Lacks(&'static str),
    /// The file its numbers come from is there but cannot be read as hatshop wrote it
    /// (changed since, or not a file): why, in one line.
    Unreadable(String),
    /// A run that finished, and what verify said of its store (`None`: not verified).
    Ran(Option<Verdict>),
    /// A load that finished, and whether the rows read back matched (`None`: not read
    /// back).
    Loaded(Option<bool>),
    /// A search for the highest rate under the objective that reached its answer.
    Searched(SearchAnswer),
}

impl std::fmt::Display for CellStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CellStatus::NotRun => f.write_str("not run"),
            CellStatus::CutShort => f.write_str("cut short: runs again on resume"),
            CellStatus::Failed(why) => write!(f, "failed: {why}; runs again on resume"),
            CellStatus::Lacks(file) => write!(f, "no {file}"),
            CellStatus::Unreadable(why) => write!(f, "not counted: {why}"),
            CellStatus::Ran(None) => f.write_str("finished, not verified"),
            CellStatus::Ran(Some(Verdict::Exact)) => f.write_str("finished, verify exact"),
            CellStatus::Ran(Some(Verdict::Differs(n))) => {
                write!(f, "finished, verify found {} differences", thousands(*n))
            }
            CellStatus::Ran(Some(Verdict::Unfinished)) => {
                f.write_str("finished, verify could not finish")
            }
            CellStatus::Loaded(None) => f.write_str("finished"),
            CellStatus::Loaded(Some(true)) => f.write_str("finished, rows read back"),
            CellStatus::Loaded(Some(false)) => f.write_str("finished, rows read back differ"),
            CellStatus::Searched(answer) => write!(
                f,
                "searched: {}",
                crate::report::sweep::answers_said(&[answer.highest_under])
            ),
        }
    }
}

/// One cell of a study as its page shows it.
#[derive(Debug, Clone)]
pub struct CellResult {
    pub id: String,
    pub part: String,
    /// What the cell is, most telling first (store, workload, the swept values).
    pub labels: Vec<(String, String)>,
    /// The command it ran, as a person would type it.
    pub command: String,
    /// Its result folder, relative to the study's.
    pub dir: PathBuf,
    pub status: CellStatus,
    /// Whether its numbers stand in the figures (it ran its plan).
    pub counted: bool,
    pub rows: Vec<MetricRow>,
    /// What its run.json says of where and how it ran (none for a cell not run).
    pub facts: Option<CellFacts>,
    /// Its intervals.csv (none for a load): what a point's spread within one run is
    /// tested on.
    pub intervals: Vec<IntervalRow>,
}

impl CellResult {
    /// Its own page, relative to the study's folder: a run's report, a search's page of
    /// its rates.
    pub(super) fn own_page(&self) -> PathBuf {
        match self.status {
            CellStatus::Searched(_) => self.dir.join("sweep.html"),
            _ => self.dir.join("report.html"),
        }
    }

    pub(super) fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the cell has every label a figure's `only` asks for (a value may list
    /// alternatives, `A|B`).
    pub(super) fn matches(&self, only: &[(String, String)]) -> bool {
        only.iter().all(|(key, wanted)| {
            self.label(key)
                .is_some_and(|value| wanted.split('|').any(|w| w == value))
        })
    }

    /// The cell's name on the page.
    pub fn name(&self) -> String {
        cell_name(&self.labels)
    }
}

/// A cell named by its labels, most telling first: a number says what it counts
/// ("cassandra · updates · events 500").
pub fn cell_name(labels: &[(String, String)]) -> String {
    labels
        .iter()
        .map(|(key, value)| {
            if value.parse::<f64>().is_ok() {
                format!("{} {value}", key.replace('_', " "))
            } else {
                value.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_says_what_verify_came_to() {
        let said = |status: CellStatus| status.to_string();
        assert_eq!(
            said(CellStatus::Ran(Some(Verdict::Exact))),
            "finished, verify exact"
        );
        assert_eq!(
            said(CellStatus::Ran(Some(Verdict::Differs(1_204)))),
            "finished, verify found 1,204 differences"
        );
        assert_eq!(
            said(CellStatus::Ran(Some(Verdict::Unfinished))),
            "finished, verify could not finish"
        );
        assert_eq!(said(CellStatus::Lacks("load.json")), "no load.json");
        assert_eq!(
            said(CellStatus::Loaded(Some(false))),
            "finished, rows read back differ"
        );
    }
}
