//! The study page's figures, sentences and tables, checked on cells made in memory.

use super::*;
use crate::verify::Verdict;

fn cell(store: &str, events: &str, mean_read: f64, ops_s: f64) -> CellResult {
    CellResult {
        id: format!("{store}-{events}"),
        part: "p".into(),
        labels: vec![
            ("store".into(), store.into()),
            ("events".into(), events.into()),
        ],
        command: format!("hatshop run --events {events}"),
        dir: PathBuf::from(format!("{store}-{events}")),
        status: CellStatus::Ran(Some(Verdict::Exact)),
        counted: true,
        rows: vec![
            MetricRow {
                event_type: "all".into(),
                ops: 10,
                ops_s,
                mean_us: mean_read,
                ..MetricRow::default()
            },
            MetricRow {
                event_type: "read_order".into(),
                ops: 10,
                mean_us: mean_read,
                ..MetricRow::default()
            },
        ],
        facts: None,
        intervals: Vec::new(),
    }
}

/// `cell` with an interval per value of `means` (µs, 100 operations each) for
/// each of its rows' event types, at 100 operations a second.
fn timed(mut cell: CellResult, means: &[f64]) -> CellResult {
    for row in &cell.rows {
        for (i, mean) in means.iter().enumerate() {
            cell.intervals.push(crate::report::intervals::IntervalRow {
                start_s: i as f64,
                event_type: row.event_type.clone(),
                ops: 100,
                throughput_ops_s: 100.0,
                mean_us: *mean,
                ..Default::default()
            });
        }
    }
    cell
}

/// Twelve interval means around `mean`, a few µs apart.
fn around(mean: f64) -> Vec<f64> {
    (0..12).map(|i| mean + (i % 3) as f64 * 10.0).collect()
}

fn bars() -> FigureSpec {
    FigureSpec {
        part: "p".into(),
        title: "mean by event type".into(),
        shape: Shape::Bars,
        x: Dim::EventType,
        series: Dim::Label("store".into()),
        metric: Metric::Mean,
        events: vec!["read_order".into()],
        only: vec![("events".into(), "100".into())],
        seed: vec![SeedValue {
            x: "read_order".into(),
            series: "mariadb".into(),
            value: 500.0,
        }],
        seed_says: String::new(),
        seed_max: None,
        also: vec![],
        alike: vec![],
        premises: vec![],
    }
}

/// Throughput by a numeric label, from the cells' `all` rows.
fn by_events() -> FigureSpec {
    FigureSpec {
        x: Dim::Label("events".into()),
        metric: Metric::OpsPerSecond,
        events: vec![],
        only: vec![],
        seed: vec![],
        ..bars()
    }
}

/// The sentence under `spec` drawn from `cells`.
fn said(spec: &FigureSpec, cells: &[CellResult]) -> String {
    sentence(spec, &points(spec, cells), cells)
}

#[test]
fn two_stores_are_said_as_a_ratio_from_the_numbers() {
    let cells = [
        timed(cell("cassandra", "100", 2200.0, 1.0), &around(2200.0)),
        timed(cell("mariadb", "100", 1000.0, 1.0), &around(1000.0)),
    ];
    let points = points(&bars(), &cells);
    let said = sentence(&bars(), &points, &cells);
    assert_eq!(
        said,
        "Mean latency: read_order: 2.20× faster (roughly double) on mariadb (p < 0.0001)."
    );
    let mut figure = draw(&bars(), &points, None);
    with_evidence(&mut figure, &bars(), &points, &cells);
    assert_eq!(figure.table.columns.last().unwrap(), "rests on");
    assert_eq!(
        figure.table.rows[0].last().unwrap(),
        "12 batches of one run"
    );
    let table = seed_table(&view(&cells), &bars(), &points);
    // The study's number stands beside ours, never divided by it.
    assert!(table.contains("the study's (µs, a 4-core PC)"), "{table}");
    assert!(table.contains("<td>500</td><td>1k</td></tr>"), "{table}");
    assert!(!table.contains("2.00×"), "{table}");
}

/// A study page's view of `cells`, with nothing else.
fn view(cells: &[CellResult]) -> StudyView<'_> {
    StudyView {
        name: "t",
        title: "t",
        question: "",
        seed: "",
        seed_machine: "a 4-core PC",
        seed_cores: None,
        scale: 1.0,
        caveats: &[],
        slo: &[],
        setup: &[],
        parts: &[],
        figures: &[],
        cells,
        dir: Path::new("/nonexistent"),
    }
}

#[test]
fn a_tail_percentile_on_too_few_operations_is_marked() {
    let spec = FigureSpec {
        metric: Metric::P9999,
        only: vec![],
        ..bars()
    };
    let mut cells = [
        cell("cassandra", "100", 2200.0, 1.0),
        cell("mariadb", "100", 1000.0, 1.0),
    ];
    for c in &mut cells {
        c.rows[1].p9999_us = c.rows[1].mean_us * 3.0;
    }
    let points = points(&spec, &cells);
    let said = sentence(&spec, &points, &cells);
    assert!(
        said.contains("Marked *: 2 of these values rest on fewer than 10 operations"),
        "{said}"
    );
    assert!(said.contains("too few operations beyond the percentile to name the faster"));
    assert!(
        !said.contains("faster on"),
        "no winner on a thin tail: {said}"
    );
    let figure = draw(&spec, &points, None);
    assert!(figure.svg.contains(">*<title>"), "the bars carry the mark");
    // Beside the study's number too.
    let table = seed_table(&view(&cells), &spec, &points);
    assert!(table.contains(" * (0 beyond)</td>"), "{table}");
    assert!(table.contains("fewer than 10 operations beyond"), "{table}");
    let beyond = figure
        .table
        .columns
        .iter()
        .position(|c| c == "samples beyond");
    assert_eq!(figure.table.rows[0][beyond.expect("the column")], "0");
}

#[test]
fn the_objective_is_drawn_on_the_whole_run_figures_it_bounds() {
    use crate::stats::threshold::{Clock, LatencyStat, Op, Stat, Threshold};
    let bound = |text: &str, stat: Stat, bound: f64| Threshold {
        text: text.into(),
        scope: "all".into(),
        stat,
        op: Op::Below,
        bound,
    };
    let slo = [
        bound(
            "p99<20ms",
            Stat::Latency(Clock::Response, LatencyStat::Percentile("p99".into(), 99.0)),
            20_000.0,
        ),
        bound(
            "service.mean<5ms",
            Stat::Latency(Clock::Service, LatencyStat::Mean),
            5_000.0,
        ),
        bound("errors<1%", Stat::ErrorShare, 0.01),
    ];
    let p99 = FigureSpec {
        metric: Metric::P99,
        events: vec![],
        only: vec![],
        ..bars()
    };
    let drawn = objective_drawn(&p99, &slo, true);
    assert_eq!(drawn, Some((20_000.0, "objective: p99<20ms".to_string())));
    // Not on one event type's bars, nor on response time by a service-time bound.
    assert_eq!(objective_drawn(&bars(), &slo, true), None);
    let mean = FigureSpec {
        metric: Metric::Mean,
        ..p99.clone()
    };
    assert_eq!(objective_drawn(&mean, &slo, true), None);
    assert!(objective_drawn(&mean, &slo, false).is_some());
    let cells = [
        cell("cassandra", "100", 2200.0, 1.0),
        cell("mariadb", "100", 1000.0, 1.0),
    ];
    let figure = draw(&p99, &points(&p99, &cells), drawn);
    assert!(
        figure.svg.contains("objective: p99&lt;20ms"),
        "{}",
        figure.svg
    );
    assert_eq!(figure.table.columns.last().unwrap(), "objective: p99<20ms");
    assert_eq!(figure.table.rows[0].last().unwrap(), "20000");
}

#[test]
fn where_a_series_stops_gaining_is_said() {
    let spec = FigureSpec {
        metric: Metric::Seconds,
        ..by_events()
    };
    let mut cells = Vec::new();
    for (size, seconds) in [
        ("1", 115.0),
        ("2", 80.0),
        ("4", 62.0),
        ("8", 60.0),
        ("16", 61.0),
    ] {
        let mut c = cell("mariadb", size, 1.0, 1.0);
        c.rows[0].elapsed_s = seconds;
        cells.push(c);
    }
    let said = sentence(&spec, &points(&spec, &cells), &cells);
    assert!(
        said.contains(
            "stops helping from events 4 on (62.0 s; no later point more than 10 % better)"
        ),
        "{said}"
    );
}

#[test]
fn no_winner_without_enough_samples_on_each_side() {
    // Two repeats a side: too few for the test to find all but huge differences.
    let cells = [
        cell("cassandra", "100", 1.0, 900.0),
        cell("cassandra", "100", 1.0, 1100.0),
        cell("mariadb", "100", 1.0, 1000.0),
        cell("mariadb", "100", 1.0, 1050.0),
    ];
    assert_eq!(
        said(&by_events(), &cells),
        "Throughput: 1.02× apart at events 100: too short to tell (cassandra rests on 2 \
         repeats, mariadb rests on 2 repeats; a winner needs at least 3 repeats on each side)."
    );
    // One run a side, two seconds each: one sub-second window is no A/B.
    let cells = [
        timed(cell("cassandra", "100", 2200.0, 1.0), &[2000.0, 2400.0]),
        timed(cell("mariadb", "100", 1000.0, 1.0), &[900.0, 1100.0]),
    ];
    assert_eq!(
        said(&bars(), &cells),
        "Mean latency: 2.20× apart at read_order: too short to tell (cassandra rests on 2 \
         batches of one run, mariadb rests on 2 batches of one run; a winner needs at \
         least 10 batches on each side)."
    );
    // Three repeats a side whose values overlap: within the noise.
    let cells = [
        cell("cassandra", "100", 1.0, 900.0),
        cell("cassandra", "100", 1.0, 1100.0),
        cell("cassandra", "100", 1.0, 1000.0),
        cell("mariadb", "100", 1.0, 1000.0),
        cell("mariadb", "100", 1.0, 1050.0),
        cell("mariadb", "100", 1.0, 980.0),
    ];
    let said = said(&by_events(), &cells);
    assert!(
        said.starts_with("Throughput: 100: 1.01× apart, within the noise (p = 0."),
        "{said}"
    );
}

#[test]
fn a_best_and_a_worst_are_named_only_beyond_the_noise_of_the_next() {
    let spec = FigureSpec {
        x: Dim::Label("store".into()),
        series: Dim::Label("events".into()),
        events: vec!["read_order".into()],
        only: vec![],
        seed: vec![],
        ..bars()
    };
    let cells = [
        timed(cell("cassandra", "100", 2000.0, 1.0), &around(2000.0)),
        timed(cell("mariadb", "100", 900.0, 1.0), &around(900.0)),
        timed(cell("redis", "100", 902.0, 1.0), &around(902.0)),
    ];
    let spec = FigureSpec {
        x: Dim::Label("events".into()),
        series: Dim::Label("store".into()),
        ..spec
    };
    let said = said(&spec, &cells);
    assert!(
        said.starts_with(
            "Mean latency: 100: no single best: mariadb (900 µs) and redis (902 µs) are \
             within the noise of each other (p = 0."
        ),
        "{said}"
    );
    assert!(
        said.contains("; worst cassandra (2.00 ms; beyond the noise of redis, p < 0.0001)."),
        "{said}"
    );
    // Two settings that do the same work are never set against each other.
    let spec = FigureSpec {
        alike: vec![vec!["mariadb".into(), "redis".into()]],
        ..spec
    };
    let cells = [
        timed(cell("cassandra", "100", 900.0, 1.0), &around(900.0)),
        timed(cell("mariadb", "100", 2000.0, 1.0), &around(2000.0)),
        timed(cell("redis", "100", 2100.0, 1.0), &around(2100.0)),
    ];
    assert_eq!(
        self::said(&spec, &cells),
        "Mean latency: 100: best cassandra (900 µs; beyond the noise of mariadb, \
         p < 0.0001); worst redis (2.10 ms, with mariadb doing the same work; beyond the \
         noise of cassandra, p < 0.0001)."
    );
}

#[test]
fn a_line_is_said_from_its_first_to_its_last_point() {
    let spec = FigureSpec {
        shape: Shape::Lines,
        ..by_events()
    };
    let cells = [
        cell("cassandra", "100", 1.0, 900.0),
        cell("cassandra", "1000", 1.0, 1800.0),
        cell("mariadb", "1000", 1.0, 50.0),
    ];
    let points = points(&spec, &cells);
    let said = sentence(&spec, &points, &cells);
    assert_eq!(
        said,
        "Throughput: cassandra goes from 900 ops/s at events 100 to 1,800 ops/s at events \
         1000; mariadb has one point, 50 ops/s at events 1000."
    );
    let figure = draw(&spec, &points, None);
    assert_eq!(figure.legend, ["cassandra", "mariadb"]);
    assert_eq!(figure.table.rows.len(), 3);
}

#[test]
fn one_series_is_said_where_it_does_best_and_worst() {
    // Throughput from twelve whole intervals a cell (the thirteenth, cut short by the
    // run's end, is left out).
    let rate = |c: CellResult, ops_s: f64| {
        let mut c = timed(c, &[1.0; 13]);
        for (i, r) in c.intervals.iter_mut().enumerate() {
            r.throughput_ops_s = ops_s + (i % 3) as f64 * 10.0;
        }
        c
    };
    let cells = [
        rate(cell("mariadb", "1", 1.0, 900.0), 900.0),
        rate(cell("mariadb", "2", 1.0, 1800.0), 1800.0),
        rate(cell("mariadb", "4", 1.0, 1700.0), 1700.0),
    ];
    assert_eq!(
        said(&by_events(), &cells),
        "Throughput: mariadb: best events 2 (1,800 ops/s; beyond the noise of events 4, \
         p < 0.0001); worst events 1 (900 ops/s; beyond the noise of events 4, p < 0.0001); \
         it grows no further from events 2 on (1,800 ops/s; no later point more than 10 % \
         better)."
    );
}

#[test]
fn a_line_that_does_not_move_and_a_count_of_one_read_as_a_person_would_say_them() {
    let spec = FigureSpec {
        shape: Shape::Lines,
        metric: Metric::Conflicts,
        ..by_events()
    };
    let cells = [cell("galera", "1", 1.0, 1.0), cell("galera", "5", 1.0, 1.0)];
    assert_eq!(
        said(&spec, &cells),
        "Conflicts: galera stays at 0 from events 1 to events 5."
    );
    let mut cells = cells.to_vec();
    cells.push(cell("galera", "3", 1.0, 1.0));
    cells[2].rows[0].conflicts = 1;
    assert_eq!(
        said(&spec, &cells),
        "Conflicts: galera counts 0 at events 1, 1 at events 3, 0 at events 5."
    );
    // What a last-write-wins store lost silently, beside them.
    let spec = FigureSpec {
        metric: Metric::LostSilently,
        ..spec
    };
    let mut cells = vec![
        cell("cassandra", "1", 1.0, 1.0),
        cell("cassandra", "5", 1.0, 1.0),
    ];
    cells[1].rows[0].lost_silently = 7;
    assert_eq!(
        said(&spec, &cells),
        "Writes lost silently: cassandra counts 0 at events 1, 7 at events 5."
    );
    let spec = FigureSpec {
        metric: Metric::Seconds,
        ..by_events()
    };
    let mut cells: Vec<CellResult> = ["1", "2", "4"]
        .iter()
        .map(|events| cell("mariadb", events, 1.0, 1.0))
        .collect();
    for (c, seconds) in cells.iter_mut().zip([30.0, 20.0, 10.0]) {
        c.rows[0].elapsed_s = seconds;
    }
    let said = said(&spec, &cells);
    assert!(
        said.contains("; it is still helping at events 4."),
        "{said}"
    );
    assert!(
        said.contains(
            "too short to tell the best: events 4 (10.0 s) against events 2 (20.0 s) \
             (events 4 rests on one run, events 2 rests on one run; a winner needs at least 3 \
             repeats on each side)"
        ),
        "{said}"
    );
}

#[test]
fn a_figure_whose_finished_cells_hold_nothing_says_so() {
    let cells = [cell("cassandra", "100", 1.0, 1.0)];
    let spec = FigureSpec {
        events: vec!["no_such_event".into()],
        ..bars()
    };
    assert_eq!(
        said(&spec, &cells),
        "Nothing to draw: its one cell finished, and it holds none of this figure's numbers."
    );
}

#[test]
fn a_cell_cut_short_stays_out_of_the_figures() {
    let mut short = cell("cassandra", "100", 1.0, 1.0);
    short.counted = false;
    let points = points(&bars(), &[short]);
    assert!(points.values.is_empty());
}
