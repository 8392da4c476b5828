//! Runs side by side: per event type throughput and latency of each run, the ratio to
//! the first run, and whether the difference in latency is significant (Welch's t-test
//! on per-interval means, or on the repeats' means when both runs were repeated). As a
//! terminal table here; the page is compare_page.rs, the exports compare_export.rs.

use std::fmt::Write;

use super::compare_overall::{Overall, compare_overall, samples_named as overall_samples_named};
use super::differences;
use super::loaded_run::LoadedRun;
use super::run_table::{self, latency_text};
use super::significance::{ALPHA, MIN_EFFECTIVE, TTest, effective_samples, ratio_interval, welch};
use super::table::{self, Cell, Column, Form, Table, Value};
use crate::numbers::thousands;
use crate::stats::LatencySummary;
use crate::workload::{EventSource, WorkloadSpec};

/// One cell of the comparison: a run's numbers for one event type, against run #1.
pub struct Comparison<'a> {
    pub run: usize,
    pub summary: &'a LatencySummary,
    /// Mean latency relative to run #1 (1.0 for run #1 itself); `None` when either has
    /// no successful operation, so no mean to divide.
    pub ratio: Option<f64>,
    pub test: Option<TTest>,
    /// The ratio's 95 % confidence interval, from the test's samples.
    pub interval: Option<(f64, f64)>,
    /// Without a test: the runs (1-based) with too few effective intervals, and theirs.
    pub too_few: Vec<(usize, f64)>,
    /// The independent samples the test stood on, run #1's and this run's, and what
    /// they are ("intervals" or "repeats").
    pub samples: (f64, f64, &'static str),
}

/// Fewer independent samples than this on a side, and a test that finds no
/// difference says that it could easily have missed one.
const FEW_SAMPLES: f64 = 5.0;

/// A count of effective samples as a reader takes it: whole, rounded down.
fn whole(n: f64) -> u64 {
    n.floor() as u64
}

impl Comparison<'_> {
    /// The comparison in words: baseline, faster or slower, or why it cannot say, with
    /// what to do about it.
    pub fn verdict(&self) -> String {
        match self.verdict_and_advice() {
            (verdict, Some((_, advice))) => format!("{verdict}: {advice}"),
            (verdict, None) => verdict,
        }
    }

    /// The verdict alone, for a table row, and the advice that goes under the table
    /// once, however many rows share it.
    pub fn verdict_and_advice(&self) -> (String, Option<Advice>) {
        (self.short_verdict(), self.advice())
    }

    /// What to do where the verdict cannot say much.
    fn advice(&self) -> Option<Advice> {
        if self.run == 0 || self.ratio.is_none() {
            return None;
        }
        match self.test {
            None if !self.too_few.is_empty() => Some(TOO_FEW_ADVICE),
            Some(t) if t.p_value >= ALPHA && self.samples.0.min(self.samples.1) < FEW_SAMPLES => {
                Some(FEW_SAMPLES_ADVICE)
            }
            _ => None,
        }
    }

    fn short_verdict(&self) -> String {
        if self.run == 0 {
            return "baseline".into();
        }
        let Some(ratio) = self.ratio else {
            return if self.summary.ok == 0 {
                format!(
                    "no successful operation in run #{} to compare",
                    self.run + 1
                )
            } else {
                "no successful operation in run #1 to compare with".into()
            };
        };
        match self.test {
            None if self.too_few.is_empty() => "no spread to test".into(),
            None => {
                let runs: Vec<String> = self
                    .too_few
                    .iter()
                    .map(|(run, n)| format!("#{run} has {}", whole(*n)))
                    .collect();
                format!(
                    "too short to test ({}; {MIN_EFFECTIVE} needed)",
                    runs.join(", ")
                )
            }
            Some(t) if t.p_value >= ALPHA => {
                let (base, this, kind) = self.samples;
                if base.min(this) < FEW_SAMPLES {
                    format!(
                        "no significant difference in latency, from few samples (#1 has {}, #{} has {} independent {kind})",
                        whole(base),
                        self.run + 1,
                        whole(this)
                    )
                } else {
                    match self.interval {
                        Some((low, high)) => {
                            format!("no significant difference (ratio {low:.2}–{high:.2} at 95 %)")
                        }
                        None => "no significant difference".into(),
                    }
                }
            }
            Some(_) if ratio >= 1.0 => format!(
                "significant: {ratio:.2}× slower{}",
                interval_text(self.interval)
            ),
            Some(_) => format!(
                "significant: {:.2}× faster{}",
                1.0 / ratio,
                interval_text(self.interval.map(|(low, high)| (1.0 / high, 1.0 / low)))
            ),
        }
    }
}

/// ` (95 % CI 1.10–1.31×)`, or nothing without an interval.
fn interval_text(interval: Option<(f64, f64)>) -> String {
    interval.map_or_else(String::new, |(low, high)| {
        format!(" (95 % CI {low:.2}–{high:.2}×)")
    })
}

/// What to do about a verdict that cannot say much: the rows it is for, and the advice.
type Advice = (&'static str, &'static str);

/// For the rows whose runs were too short to test.
const TOO_FEW_ADVICE: Advice = (
    "too short to test",
    "too few independent intervals; run longer or shorten --interval",
);
/// For the rows whose test had little to go on.
const FEW_SAMPLES_ADVICE: Advice = (
    "no significant difference from few samples",
    "a real one could hide here; run longer or --repeat",
);

/// The advice under a table, each once, in the order the rows first need it.
pub(super) fn advice_of(verdicts: impl Iterator<Item = Option<Advice>>) -> Vec<String> {
    let mut advice: Vec<Advice> = Vec::new();
    for line in verdicts.flatten() {
        if !advice.contains(&line) {
            advice.push(line);
        }
    }
    advice
        .into_iter()
        .map(|(rows, what)| format!("{rows}: {what}"))
        .collect()
}

/// Event types present in any run, in the order of the first, then `all`.
pub fn event_types(runs: &[LoadedRun]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for run in runs {
        for e in &run.summary.events {
            if !names.contains(&e.event_type) {
                names.push(e.event_type.clone());
            }
        }
    }
    names.push("all".into());
    names
}

pub(super) fn summary_of<'a>(run: &'a LoadedRun, event_type: &str) -> Option<&'a LatencySummary> {
    if event_type == "all" {
        return Some(&run.summary.overall);
    }
    run.summary
        .events
        .iter()
        .find(|e| e.event_type == event_type)
}

/// The per-interval mean latencies (µs) of an event type: the samples of the t-test.
fn interval_means(run: &LoadedRun, event_type: &str) -> Vec<f64> {
    run.series(event_type)
        .iter()
        .filter(|r| r.ops > r.errors)
        .map(|r| r.mean_us)
        .collect()
}

/// The mean latency (µs) of an event type in each repeat of a repeat folder.
fn repeat_means(run: &LoadedRun, event_type: &str) -> Vec<f64> {
    run.repeats
        .iter()
        .filter_map(|s| {
            if event_type == "all" {
                Some(&s.overall)
            } else {
                s.events.iter().find(|e| e.event_type == event_type)
            }
        })
        .filter(|e| e.ok > 0)
        .map(|e| e.mean_us)
        .collect()
}

/// Each run's throughput and latency against the first run, for one event type.
pub fn compare<'a>(runs: &'a [LoadedRun], event_type: &str) -> Vec<Comparison<'a>> {
    let Some(base) = summary_of(&runs[0], event_type) else {
        return Vec::new();
    };
    // Repeats are independent samples: when both sides have them, the test is across
    // repeats, and autocorrelation within a run does not enter.
    let base_repeats = repeat_means(&runs[0], event_type);
    let base_samples = interval_means(&runs[0], event_type);
    runs.iter()
        .enumerate()
        .filter_map(|(i, run)| {
            let summary = summary_of(run, event_type)?;
            let ratio = (base.ok > 0 && summary.ok > 0).then(|| summary.mean_us / base.mean_us);
            let repeats = repeat_means(run, event_type);
            let (test, interval, too_few, samples) =
                if base_repeats.len() >= 2 && repeats.len() >= 2 {
                    let samples = (
                        effective_samples(&base_repeats),
                        effective_samples(&repeats),
                        "repeats",
                    );
                    let interval = ratio.and_then(|r| ratio_interval(&base_repeats, &repeats, r));
                    (
                        welch(&base_repeats, &repeats),
                        interval,
                        Vec::new(),
                        samples,
                    )
                } else {
                    let these = interval_means(run, event_type);
                    let too_few = [(1, &base_samples), (i + 1, &these)]
                        .into_iter()
                        .map(|(run, xs)| (run, effective_samples(xs)))
                        .filter(|(_, n)| *n < MIN_EFFECTIVE)
                        .collect();
                    let samples = (
                        effective_samples(&base_samples),
                        effective_samples(&these),
                        "intervals",
                    );
                    let interval = ratio.and_then(|r| ratio_interval(&base_samples, &these, r));
                    (welch(&base_samples, &these), interval, too_few, samples)
                };
            Some(Comparison {
                run: i,
                summary,
                ratio,
                test,
                interval,
                too_few,
                samples,
            })
        })
        .collect()
}

/// What the t-test's samples are: repeats when every run was repeated.
pub(super) fn samples_named(runs: &[LoadedRun]) -> &'static str {
    if runs.iter().all(|r| r.repeats.len() >= 2) {
        "each repeat's mean latency (the runs were repeated)"
    } else {
        "per-interval mean latencies"
    }
}

/// Open loop: per event type and run, the response-time row (from when each operation
/// was due) and its mean over the first run's; empty when no run had `--rate`.
pub(super) fn response_rows(
    runs: &[LoadedRun],
) -> Vec<(String, usize, &LatencySummary, Option<f64>)> {
    if !runs.iter().any(|r| r.summary.overall.response.is_some()) {
        return Vec::new();
    }
    let mut rows = Vec::new();
    for event_type in event_types(runs) {
        let base = summary_of(&runs[0], &event_type).and_then(|s| s.response.as_deref());
        for (i, run) in runs.iter().enumerate() {
            if let Some(response) = summary_of(run, &event_type).and_then(|s| s.response.as_deref())
            {
                let ratio = base
                    .filter(|b| b.mean_us > 0.0)
                    .map(|b| response.mean_us / b.mean_us);
                rows.push((event_type.clone(), i, response, ratio));
            }
        }
    }
    rows
}

/// How the compared runs' event streams relate.
#[derive(Debug, PartialEq)]
pub enum Streams {
    /// The same events, hash for hash.
    Same,
    /// One generated stream (one spec, one seed) that each run replayed as far as its
    /// `--duration` let it: the events each handed out, in run order.
    OneCut(Vec<u64>),
    /// One seeded stream of one shape, each run a later stretch of it on the tables a
    /// run before it left (`--reuse-load`): the same mix, not the same events.
    OneGoingOn,
    /// Different events: the runs did different work.
    Different,
}

impl Streams {
    /// What the terminal says of them: a note for one stream cut in different places, a
    /// warning for different work, nothing for the same stream.
    pub fn sentence(&self) -> Option<String> {
        match self {
            Streams::Same => None,
            Streams::OneCut(counts) => Some(format!(
                "note: these runs replayed one event stream (one spec, one seed), each as far as its --duration or --min-duration took it ({})",
                events_each(counts)
            )),
            Streams::OneGoingOn => Some(GOING_ON.into()),
            Streams::Different => Some(
                "warning: these runs replayed different event streams (plan_sha256 differ)".into(),
            ),
        }
    }
}

/// What is said of runs that went on, one after the other, in one seeded stream.
pub const GOING_ON: &str = "note: these runs replayed one seeded stream, each going on from where a run before it left the database (--reuse-load): the same mix on one load, not the same events";

/// `#1 55,284 events; #2 60,660 events`: counts with thousands separators cannot be
/// listed with commas.
pub fn events_each(counts: &[u64]) -> String {
    counts
        .iter()
        .enumerate()
        .map(|(i, n)| format!("#{} {} events", i + 1, thousands(*n)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether the runs replayed the same stream, one stream cut short by their deadlines,
/// or different streams.
pub fn streams(runs: &[LoadedRun]) -> Streams {
    if runs
        .iter()
        .all(|r| r.record.plan_sha256 == runs[0].record.plan_sha256)
    {
        return Streams::Same;
    }
    let spec = |run: &LoadedRun, shape: fn(&WorkloadSpec) -> WorkloadSpec| match &run.record.events
    {
        EventSource::Generated { workload } => serde_json::to_value(shape(workload)).ok(),
        EventSource::File(_) => None,
    };
    let one = |shape: fn(&WorkloadSpec) -> WorkloadSpec| {
        let first = spec(&runs[0], shape);
        first.is_some() && runs.iter().all(|r| spec(r, shape) == first)
    };
    let went_on = runs.iter().any(|r| r.record.went_on_from.is_some());
    if one(WorkloadSpec::clone) && runs.iter().any(|r| !r.record.stream_complete) {
        Streams::OneCut(runs.iter().map(|r| r.record.planned_events).collect())
    } else if went_on && one(WorkloadSpec::shape) {
        Streams::OneGoingOn
    } else {
        Streams::Different
    }
}

/// The file beside a comparison's page that names the runs it compared, so that
/// `hatshop show DIR` prints its table again.
pub const COMPARE_JSON: &str = "compare.json";

/// What [`COMPARE_JSON`] holds: the runs' folders, the baseline first, as absolute paths
/// where they could be resolved.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct CompareRecord {
    pub runs: Vec<std::path::PathBuf>,
}

/// Writes [`COMPARE_JSON`] into `folder` for the runs in `dirs`.
pub fn write_record(folder: &std::path::Path, dirs: &[std::path::PathBuf]) -> anyhow::Result<()> {
    let runs = dirs
        .iter()
        .map(|dir| std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone()))
        .collect();
    crate::files::write_json(&folder.join(COMPARE_JSON), &CompareRecord { runs })
}

/// The comparison recorded in `folder`, if a comparison's page was written there.
pub fn read_record(folder: &std::path::Path) -> Option<anyhow::Result<CompareRecord>> {
    let path = folder.join(COMPARE_JSON);
    path.exists().then(|| crate::files::read_json(&path))
}

/// The comparison's table: a row per event type and run, the baseline first; and the
/// advice each row's verdict leaves for under the table.
pub fn table(runs: &[LoadedRun]) -> (Table, Vec<Option<Advice>>) {
    let latency = |title: &str| Column::number(title, Some("µs"), &format!("{title}_us"));
    let mut table = Table::new(vec![
        Column::text("event", "event_type"),
        Column::text("run", "run").only(&[Form::Terminal, Form::Markdown, Form::Csv]),
        // A page has room for each run's name, which says what it is.
        Column::text("run", "name").only(&[Form::Html]),
        Column::text("dir", "dir").only(&[Form::Csv]),
        Column::text("label", "label").only(&[Form::Csv]),
        Column::number("ops/s", None, "ops_s"),
        latency("mean"),
        latency("p50"),
        latency("p99"),
        latency("p99.9"),
        latency("p99.99"),
        latency("max"),
        Column::number("ratio", None, "ratio"),
        Column::number("p-value", None, "p_value"),
        Column::text("verdict", "verdict"),
        Column::text("thin", "thin_percentiles").only(&[Form::Csv]),
    ]);
    let (mut rows, mut advice) = (Vec::new(), Vec::new());
    let names = differences::run_names(runs);
    for event_type in event_types(runs) {
        for c in compare(runs, &event_type) {
            rows.push(row(&runs[c.run], &names[c.run], &event_type, &c));
            advice.push(c.verdict_and_advice().1);
        }
    }
    table.section(rows);
    (table, advice)
}

/// One run's row for one event type (`name` the run's): latencies marked `*` as the
/// run's own table marks them, to the nanosecond as data, and no ratio or p-value for
/// the baseline.
fn row(run: &LoadedRun, name: &str, event_type: &str, c: &Comparison) -> Vec<Cell> {
    const LADDER: [&str; 4] = ["p50", "p99", "p99.9", "p99.99"];
    let s = c.summary;
    let latency = |us: f64, thin: bool| {
        let value = match s.ok {
            0 => Value::None,
            _ => Value::Number(us, 3),
        };
        if thin {
            Cell::shown_as(latency_text(s, us) + "*", value).noted(run_table::THIN)
        } else {
            Cell::shown_as(latency_text(s, us), value)
        }
    };
    // Run #1's ratio to itself is shown, but is no datum.
    let against = |value: Option<f64>, decimals: usize| match value {
        Some(v) if c.run > 0 => {
            Cell::shown_as(format!("{v:.decimals$}"), Value::Number(v, decimals))
        }
        Some(v) => Cell::shown_as(format!("{v:.decimals$}"), Value::None),
        None => Cell::shown_as("-", Value::None),
    };
    let shown = if c.run == 0 { event_type } else { "" };
    let mut cells = vec![
        Cell::shown_as(shown, Value::Text(event_type.into())),
        Cell::shown_as(format!("#{}", c.run + 1), Value::Count(c.run as u64 + 1)),
        // A name breaks between its parts, but not inside `#1 hatshop-random`.
        Cell::shown_as(
            name.replacen(' ', "\u{a0}", 1).replace('-', "\u{2011}"),
            Value::Text(name.into()),
        ),
        Cell::text(run.dir.display().to_string()),
        Cell::text(run.label()),
        Cell::shown_as(
            thousands(s.throughput_ops_s.round() as u64),
            Value::Number(s.throughput_ops_s, 1),
        ),
        latency(s.mean_us, false),
    ];
    cells.extend(LADDER.map(|label| latency(s.percentile(label), s.is_thin(label))));
    cells.push(latency(s.max_us, false));
    cells.push(against(c.ratio, 2));
    cells.push(against(c.test.map(|t| t.p_value), 4));
    cells.push(Cell::shown_as(
        c.verdict_and_advice().0,
        Value::Text(c.verdict()),
    ));
    let thin: Vec<&str> = LADDER
        .into_iter()
        .filter(|label| s.is_thin(label))
        .collect();
    cells.push(Cell::text(thin.join(" ")));
    cells
}

/// Response times under `--rate`: a row per event type and run, the ratio of its mean
/// to run #1's.
pub(super) fn response_table(
    responses: Vec<(String, usize, &LatencySummary, Option<f64>)>,
) -> Table {
    let latency = |title: &str| Column::number(title, None, &format!("{title}_us"));
    let mut columns = vec![
        Column::text("event", "event_type"),
        Column::text("run", "run"),
        Column::number("ops/s", None, "ops_s"),
    ];
    columns.extend(["mean", "p50", "p99", "p99.9", "max"].map(latency));
    columns.push(Column::number("ratio", None, "ratio"));
    let mut table = Table::new(columns);
    let mut last = String::new();
    let mut rows = Vec::new();
    for (event_type, run, s, ratio) in responses {
        let shown = if event_type == last { "" } else { &event_type };
        let latency = |us: f64| Cell::shown_as(latency_text(s, us), Value::Number(us, 3));
        let mut row = vec![
            Cell::shown_as(shown, Value::Text(event_type.clone())),
            Cell::shown_as(format!("#{}", run + 1), Value::Count(run as u64 + 1)),
            Cell::shown_as(
                thousands(s.throughput_ops_s.round() as u64),
                Value::Number(s.throughput_ops_s, 1),
            ),
            latency(s.mean_us),
        ];
        row.extend(["p50", "p99", "p99.9"].map(|label| latency(s.percentile(label))));
        row.push(latency(s.max_us));
        row.push(match ratio {
            Some(r) => Cell::shown_as(format!("{r:.2}"), Value::Number(r, 2)),
            None => Cell::shown_as("-", Value::None),
        });
        rows.push(row);
        last = event_type;
    }
    table.section(rows);
    table
}

/// Each run's throughput, and under `--rate` its response p99, against run #1's: a
/// line each under a line that says the test.
fn overall_lines(runs: &[LoadedRun]) -> String {
    let mut out = String::new();
    for of in [Overall::Throughput, Overall::ResponseP99] {
        if !of.applies(runs) {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{} of all operations against #1; Welch's t-test on {}:",
            of.name(),
            overall_samples_named(runs, of)
        );
        for c in compare_overall(runs, of) {
            let _ = writeln!(
                out,
                "  #{:<3} {:>12}  {}",
                c.run + 1,
                of.said(c.value),
                c.verdict()
            );
        }
    }
    out
}

/// The comparison as a table for the terminal.
pub fn terminal(runs: &[LoadedRun]) -> String {
    let mut out = String::new();
    for (i, run) in runs.iter().enumerate() {
        let _ = writeln!(out, "#{} {}  {}", i + 1, run.dir.display(), run.label());
    }
    let differs = differences::lines(runs);
    if differs.is_empty() {
        let _ = writeln!(out, "what differs: nothing run.json records");
    } else {
        let _ = writeln!(out, "what differs (#1 → #2 …):");
        for line in &differs.naming {
            let _ = writeln!(out, "  {line}");
        }
        if !differs.details.is_empty() {
            let _ = writeln!(
                out,
                "  and {} details (versions, descriptions, mix weights, what stores report of themselves): on the page",
                differs.details.len()
            );
        }
    }
    if let Some(sentence) = streams(runs).sentence() {
        let _ = writeln!(out, "{sentence}");
    }
    let (table, advice) = table(runs);
    out.push('\n');
    out.push_str(&table::terminal(&table));
    let _ = writeln!(
        out,
        "latencies in µs (* rests on fewer than 10 samples beyond it); ratio = mean latency / run #1's; p-value of Welch's t-test on {} (significant below {ALPHA})",
        samples_named(runs)
    );
    for line in advice_of(advice.into_iter()) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str(&overall_lines(runs));
    let responses = response_rows(runs);
    if !responses.is_empty() {
        out.push_str(
            "\nresponse time (--rate: from when each operation was due to its answer; the table above is service time)\n",
        );
        out.push_str(&table::terminal(&response_table(responses)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::OpStats;

    fn compared(
        samples: (f64, f64, &'static str),
        p_value: f64,
        too_few: Vec<(usize, f64)>,
    ) -> String {
        let summary = LatencySummary::of("all", &OpStats::default(), 1.0);
        let test = (too_few.is_empty()).then_some(TTest {
            t: 1.0,
            df: 3.0,
            p_value,
        });
        Comparison {
            run: 1,
            summary: &summary,
            ratio: Some(0.6),
            test,
            interval: None,
            too_few,
            samples,
        }
        .verdict()
    }

    #[test]
    fn a_test_on_few_samples_that_finds_nothing_says_it_could_have_missed_it() {
        let verdict = compared((3.0, 2.4, "intervals"), 0.086, Vec::new());
        assert_eq!(
            verdict,
            "no significant difference in latency, from few samples (#1 has 3, #2 has 2 \
             independent intervals): a real one could hide here; run longer or --repeat"
        );
        assert_eq!(
            compared((30.0, 24.0, "intervals"), 0.3, Vec::new()),
            "no significant difference"
        );
        assert_eq!(
            compared((30.0, 24.0, "intervals"), 0.001, Vec::new()),
            "significant: 1.67× faster"
        );
        // Counts of independent intervals are said whole.
        let verdict = compared((5.0, 1.0, "intervals"), 1.0, vec![(2, 1.0)]);
        assert!(verdict.contains("(#2 has 1; 2 needed)"), "{verdict}");
    }
}
