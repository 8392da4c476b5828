//! A study's page, `study.html`: the figures of the published study it reproduces, drawn
//! from hatshop's own runs (the cells), each with one sentence computed from its
//! numbers and, where the study printed numbers of its own, those beside ours.

mod cells;
mod finding;
mod over_time;
mod points;
mod spec;

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::page::Page;
use super::svg::{self, escape};
use super::table::thousands;
pub use cells::{CellResult, MetricRow, cell_name};
use finding::sentence;
use over_time::over_time;
use points::{Points, axis_name, draw, mean, points};
pub use spec::{Dim, FigureSpec, Metric, PartSpec, SeedValue, Shape};

/// Everything a study page shows.
pub struct StudyView<'a> {
    pub name: &'a str,
    pub title: &'a str,
    pub question: &'a str,
    /// The published study it reproduces.
    pub seed: &'a str,
    pub scale: f64,
    /// What differs from the study's own setting (hardware, sizes), said plainly.
    pub caveats: &'a [&'a str],
    pub parts: &'a [PartSpec],
    pub figures: &'a [FigureSpec],
    pub cells: &'a [CellResult],
    /// The study folder, to load runs for significance tests.
    pub dir: &'a Path,
}

/// The study's numbers beside ours, as an HTML table.
fn seed_table(spec: &FigureSpec, points: &Points, scale: f64) -> String {
    if spec.seed.is_empty() {
        return String::new();
    }
    let ratio = |ours: f64, theirs: f64| match ours / theirs {
        r if r >= 0.01 => format!("{r:.2}×"),
        _ => "below 0.01×".into(),
    };
    let unit = spec.metric.unit();
    let mut html = format!(
        "<table class=\"seed\"><tr><th>{}</th><th>series</th><th>the study's ({unit})</th>\
         <th>ours ({unit})</th><th>ours ÷ the study's</th></tr>",
        escape(&axis_name(spec.x))
    );
    for seed in spec.seed {
        let ours = points
            .xs
            .iter()
            .position(|x| x == seed.x)
            .zip(points.series.iter().position(|s| s == seed.series))
            .and_then(|key| points.values.get(&key))
            .map(|v| mean(v));
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(seed.x),
            escape(seed.series),
            svg::short(seed.value),
            ours.map_or("not run".into(), svg::short),
            ours.map_or(String::new(), |o| ratio(o, seed.value))
        );
    }
    html.push_str("</table>");
    if spec.metric == Metric::Seconds && scale < 1.0 {
        let _ = write!(
            html,
            "<p class=\"note\">At --scale {scale} a run does {} of the study's work, so \
             its total time is not the study's to compare.</p>",
            percent(scale)
        );
    }
    html
}

/// The page, and the CSVs of its figures.
pub fn page(view: &StudyView) -> Page {
    let mut page = Page::new("study.html");
    let _ = write!(
        page,
        "<h1>{}</h1><p class=\"question\">{}</p><p>Reproduces <em>{}</em>. \
         Every cell ran on this machine with <code>hatshop study {}</code>; each was \
         verified against its event stream.</p>",
        escape(view.title),
        escape(view.question),
        escape(view.seed),
        escape(view.name)
    );
    if view.scale < 1.0 {
        let _ = write!(
            page,
            "<p class=\"warn\">Scaled to {} of the study's work (events, records, \
             repeats) with <code>--scale {}</code>: a quick look, not the study's numbers.</p>",
            percent(view.scale),
            view.scale
        );
    }
    let unfinished = view.cells.iter().filter(|c| !c.counted).count();
    if unfinished > 0 {
        let _ = write!(
            page,
            "<p class=\"warn\">{unfinished} of {} cells have no numbers yet (see the \
             cells below): run the same command again to resume.</p>",
            view.cells.len()
        );
    }
    if !view.caveats.is_empty() {
        page.push_str("<ul class=\"caveats\">");
        for caveat in view.caveats {
            let _ = write!(page, "<li>{}</li>", escape(caveat));
        }
        page.push_str("</ul>");
    }
    for part in view.parts {
        let _ = write!(
            page,
            "<h2>{}</h2><p>{}</p>",
            escape(part.title),
            escape(part.about)
        );
        for spec in view.figures.iter().filter(|f| f.part == part.id) {
            if spec.shape == Shape::OverTime {
                let (figure, said) = over_time(spec, view.cells, view.dir);
                page.figure(figure);
                let _ = write!(page, "<p class=\"finding\">{}</p>", escape(&said));
                seed_words(&mut page, spec);
                continue;
            }
            let points = points(spec, view.cells);
            let said = sentence(spec, &points, view.cells, view.dir);
            page.figure(draw(spec, &points));
            let _ = write!(page, "<p class=\"finding\">{}</p>", escape(&said));
            seed_words(&mut page, spec);
            page.push_str(&seed_table(spec, &points, view.scale));
        }
    }
    cells_table(&mut page, view.cells);
    page
}

/// What the study itself said of a figure, quoted.
fn seed_words(page: &mut Page, spec: &FigureSpec) {
    if !spec.seed_says.is_empty() {
        let _ = write!(
            page,
            "<p class=\"seed-says\">The study: “{}”</p>",
            escape(spec.seed_says)
        );
    }
}

fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p >= 1.0 {
        format!("{p:.0} %")
    } else {
        format!("{p:.2} %")
    }
}

fn cells_table(page: &mut Page, cells: &[CellResult]) {
    page.push_str(
        "<h2>Cells</h2><table><tr><th>#</th><th>cell</th><th>status</th><th>ops</th>\
         <th>errors</th><th>report</th></tr>",
    );
    for (i, cell) in cells.iter().enumerate() {
        let all = cell.rows.iter().find(|r| r.event_type == "all");
        let report = cell.dir.join("report.html");
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            escape(&cell.name()),
            escape(&cell.status),
            all.map_or(String::new(), |r| thousands(r.ops)),
            all.map_or(String::new(), |r| thousands(r.errors)),
            if cell.counted {
                format!(
                    "<a href=\"{}\">{}</a>",
                    escape(&report.display().to_string()),
                    escape(&cell.dir.display().to_string())
                )
            } else {
                String::new()
            }
        );
    }
    page.push_str("</table><details><summary>The command of each cell</summary><pre>");
    for (i, cell) in cells.iter().enumerate() {
        let _ = writeln!(page, "{:>3}  {}", i + 1, escape(&cell.command));
    }
    page.push_str("</pre></details>");
}

/// Writes `study.html` and its figures' CSVs into the study folder.
pub fn write(view: &StudyView) -> Result<PathBuf> {
    let title = format!("hatshop study {}: {}", view.name, view.title);
    page(view).write(view.dir, &title)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            status: "verified".into(),
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
        }
    }

    const BARS: FigureSpec = FigureSpec {
        part: "p",
        title: "mean by event type",
        shape: Shape::Bars,
        x: Dim::EventType,
        series: Dim::Label("store"),
        metric: Metric::Mean,
        events: &["read_order"],
        only: &[("events", "100")],
        seed: &[SeedValue {
            x: "read_order",
            series: "mariadb",
            value: 500.0,
        }],
        seed_says: "",
    };

    #[test]
    fn two_stores_are_said_as_a_ratio_from_the_numbers() {
        let cells = [
            cell("cassandra", "100", 2200.0, 1.0),
            cell("mariadb", "100", 1000.0, 1.0),
        ];
        let points = points(&BARS, &cells);
        let said = sentence(&BARS, &points, &cells, Path::new("/nonexistent"));
        assert_eq!(said, "Mean latency: read_order: 2.20× faster on mariadb.");
        let table = seed_table(&BARS, &points, 1.0);
        assert!(
            table.contains("<td>500</td><td>1k</td><td>2.00×</td>"),
            "{table}"
        );
    }

    #[test]
    fn a_line_is_said_from_its_first_to_its_last_point() {
        let spec = FigureSpec {
            shape: Shape::Lines,
            x: Dim::Label("events"),
            metric: Metric::OpsPerSecond,
            events: &[],
            only: &[],
            ..BARS
        };
        let cells = [
            cell("cassandra", "100", 1.0, 900.0),
            cell("cassandra", "1000", 1.0, 1800.0),
            cell("mariadb", "1000", 1.0, 50.0),
        ];
        let points = points(&spec, &cells);
        let said = sentence(&spec, &points, &cells, Path::new("/nonexistent"));
        assert_eq!(
            said,
            "Throughput: cassandra goes from 900 ops/s at events 100 to 1,800 ops/s at events \
             1000; mariadb goes from 50 ops/s at events 1000 to 50 ops/s at events 1000."
        );
        let figure = draw(&spec, &points);
        assert_eq!(figure.legend, ["cassandra", "mariadb"]);
        assert_eq!(figure.table.rows.len(), 3);
    }

    #[test]
    fn one_series_is_said_where_it_does_best_and_worst() {
        let spec = FigureSpec {
            x: Dim::Label("events"),
            metric: Metric::OpsPerSecond,
            events: &[],
            only: &[],
            ..BARS
        };
        let cells = [
            cell("mariadb", "1", 1.0, 900.0),
            cell("mariadb", "2", 1.0, 1800.0),
            cell("mariadb", "4", 1.0, 1700.0),
        ];
        let said = sentence(
            &spec,
            &points(&spec, &cells),
            &cells,
            Path::new("/nonexistent"),
        );
        assert_eq!(
            said,
            "Throughput: mariadb does best at events 2 (1,800 ops/s) and worst at events 1 \
             (900 ops/s)."
        );
    }

    #[test]
    fn a_cell_cut_short_stays_out_of_the_figures() {
        let mut short = cell("cassandra", "100", 1.0, 1.0);
        short.counted = false;
        let points = points(&BARS, &[short]);
        assert!(points.values.is_empty());
    }
}
