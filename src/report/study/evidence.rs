//! What a figure's point rests on, and whether two points stand apart beyond the noise.
//! A point with cells of its own (repeats) rests on their values; a point of one cell
//! on batch means of that cell's intervals, batches of about equal operation counts
//! (so an interval that held five operations weighs as little as it should). A winner
//! is named only where Welch's test on enough of them on each side says so.

use super::cells::CellResult;
use super::points::Points;
use super::spec::{Dim, FigureSpec, Metric};
use crate::numbers::counted;
use crate::report::figure::Figure;
use crate::report::intervals::IntervalRow;
pub(super) use crate::report::intervals::{MIN_BATCHES, batch_means};
use crate::report::significance::{ALPHA, TTest, welch};

/// Fewer repeats than this on a side and no winner is named: two repeats give Welch's
/// test one or two degrees of freedom, too few to find all but huge differences.
pub(super) const MIN_REPEATS: usize = 3;

/// What a point's value rests on.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Evidence {
    /// One value per repeat (a cell of its own each).
    Repeats(Vec<f64>),
    /// Batch means of one run's intervals.
    Batches(Vec<f64>),
    /// One run whose spread within it this metric cannot give (a total time, a max,
    /// a percentile of its few slowest operations).
    OneRun,
}

impl Evidence {
    /// "3 repeats", "12 batches of one run", "one run": for the figure's table.
    pub(super) fn said(&self) -> String {
        match self {
            Evidence::Repeats(v) => counted(v.len() as u64, "repeat"),
            Evidence::Batches(v) if v.is_empty() => "one run without intervals".into(),
            Evidence::Batches(v) => format!("{} of one run", counted(v.len() as u64, "batch")),
            Evidence::OneRun => "one run".into(),
        }
    }

    /// The samples a test takes; none for one run.
    fn samples(&self) -> Option<&[f64]> {
        match self {
            Evidence::Repeats(v) | Evidence::Batches(v) => Some(v),
            Evidence::OneRun => None,
        }
    }

    /// Whether a test may stand on it.
    fn enough(&self) -> bool {
        match self {
            Evidence::Repeats(v) => v.len() >= MIN_REPEATS,
            Evidence::Batches(v) => v.len() >= MIN_BATCHES,
            Evidence::OneRun => false,
        }
    }
}

/// Whether two points differ beyond the noise.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Verdict {
    /// Welch's test found a difference.
    Apart(TTest),
    /// It found none.
    Noise(TTest),
    /// There is not enough to test, and why.
    TooShort(String),
}

impl Verdict {
    /// The p-value in a sentence's parentheses: "p < 0.0001", "p = 0.0123", "p = 0.41".
    pub(super) fn p(test: &TTest) -> String {
        crate::numbers::p_value_text(test.p_value)
    }
}

/// Tests `a` against `b`, named `names` where a sentence must say which is short.
pub(super) fn judge(a: &Evidence, b: &Evidence, names: [&str; 2]) -> Verdict {
    let kinds_differ = std::mem::discriminant(a) != std::mem::discriminant(b);
    if kinds_differ && !matches!((a, b), (Evidence::OneRun, _) | (_, Evidence::OneRun)) {
        return Verdict::TooShort("one was repeated and the other not".into());
    }
    let short: Vec<String> = [a, b]
        .iter()
        .zip(names)
        .filter(|(e, _)| !e.enough())
        .map(|(e, name)| format!("{name} rests on {}", e.said()))
        .collect();
    if !short.is_empty() {
        let need = match (a, b) {
            (Evidence::Batches(_), Evidence::Batches(_)) => {
                format!("at least {MIN_BATCHES} batches on each side")
            }
            _ => format!("at least {MIN_REPEATS} repeats on each side"),
        };
        return Verdict::TooShort(format!("{}; a winner needs {need}", short.join(", ")));
    }
    let (Some(x), Some(y)) = (a.samples(), b.samples()) else {
        return Verdict::TooShort("one run has no samples to test".into());
    };
    match welch(x, y) {
        Some(test) if test.p_value < ALPHA => Verdict::Apart(test),
        Some(test) => Verdict::Noise(test),
        None => Verdict::TooShort(
            "their batches move together, worth fewer than two independent samples".into(),
        ),
    }
}

/// What the point at `key` rests on.
pub(super) fn evidence(
    spec: &FigureSpec,
    points: &Points,
    cells: &[CellResult],
    key: (usize, usize),
) -> Evidence {
    let (Some(values), Some(indexes)) = (points.values.get(&key), points.cells.get(&key)) else {
        return Evidence::OneRun;
    };
    let mut distinct = indexes.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() > 1 && distinct.len() == values.len() {
        return Evidence::Repeats(values.clone());
    }
    let (Some(event_type), [index]) = (event_type(spec, points, key), distinct.as_slice()) else {
        return Evidence::OneRun;
    };
    let series: Vec<&IntervalRow> = cells[*index]
        .intervals
        .iter()
        .filter(|r| r.event_type == event_type)
        .collect();
    match spec.metric {
        Metric::Mean => Evidence::Batches(batch_means(&series)),
        // The last interval is cut short by the run's end: its rate is not a second's.
        Metric::OpsPerSecond => Evidence::Batches(
            series[..series.len().saturating_sub(1)]
                .iter()
                .map(|r| r.throughput_ops_s)
                .collect(),
        ),
        _ => Evidence::OneRun,
    }
}

/// The event type behind a point: the x or the series where either is one, else the
/// figure's one event type (or `all`).
fn event_type<'p>(
    spec: &'p FigureSpec,
    points: &'p Points,
    key: (usize, usize),
) -> Option<&'p str> {
    match (&spec.x, &spec.series, spec.events.as_slice()) {
        (Dim::EventType, _, _) => Some(&points.xs[key.0]),
        (_, Dim::EventType, _) => Some(&points.series[key.1]),
        (_, _, []) => Some("all"),
        (_, _, [one]) => Some(one),
        _ => None,
    }
}

/// A column with what each point rests on ("12 batches of one run", "3 repeats"),
/// the samples its sentence's test was given.
pub(super) fn with_evidence(
    figure: &mut Figure,
    spec: &FigureSpec,
    points: &Points,
    cells: &[CellResult],
) {
    figure.table.columns.push("rests on".into());
    let number = |text: &str| text.replace(',', "").parse::<f64>().ok();
    for row in &mut figure.table.rows {
        let s = points.series.iter().position(|s| Some(s) == row.first());
        let x = points.xs.iter().position(|x| {
            Some(x) == row.get(1)
                || number(x).is_some_and(|n| row.get(1).and_then(|r| number(r)) == Some(n))
        });
        let said = x.zip(s).map_or(String::new(), |key| {
            evidence(spec, points, cells, key).said()
        });
        row.push(said);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_is_said_with_its_count() {
        assert_eq!(Evidence::Repeats(vec![1.0]).said(), "1 repeat");
    }

    fn interval(ops: u64, mean_us: f64) -> IntervalRow {
        IntervalRow {
            event_type: "all".into(),
            ops,
            mean_us,
            throughput_ops_s: ops as f64,
            ..IntervalRow::default()
        }
    }

    #[test]
    fn batches_hold_about_equal_operations_and_a_tiny_interval_weighs_little() {
        let rows = [
            interval(1000, 10.0),
            interval(5, 1000.0),
            interval(995, 10.0),
        ];
        let refs: Vec<&IntervalRow> = rows.iter().collect();
        let means = batch_means(&refs);
        // Batches of about 667 operations: intervals are not split, so the five slow
        // operations join the next interval's batch and move its mean by a few µs.
        assert_eq!(means.len(), 2);
        assert!(means.iter().all(|m| *m < 20.0), "{means:?}");
    }

    #[test]
    fn no_winner_on_too_few_samples_and_one_on_enough() {
        let few = Evidence::Batches(vec![1.0, 2.0]);
        let many_low = Evidence::Batches((0..12).map(|i| 100.0 + (i % 3) as f64).collect());
        let many_high = Evidence::Batches((0..12).map(|i| 200.0 + (i % 3) as f64).collect());
        match judge(&few, &many_high, ["a", "b"]) {
            Verdict::TooShort(why) => assert_eq!(
                why,
                "a rests on 2 batches of one run; a winner needs at least 10 batches on each side"
            ),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            judge(&many_low, &many_high, ["a", "b"]),
            Verdict::Apart(_)
        ));
        assert!(matches!(
            judge(&many_low, &many_low, ["a", "b"]),
            Verdict::Noise(_)
        ));
        match judge(&Evidence::OneRun, &Evidence::OneRun, ["a", "b"]) {
            Verdict::TooShort(why) => assert_eq!(
                why,
                "a rests on one run, b rests on one run; a winner needs at least 3 repeats \
                 on each side"
            ),
            other => panic!("{other:?}"),
        }
    }
}
