//! A study's page, `study.html`: the figures of the published study it reproduces, drawn
//! from hatshop's own runs (the cells), each with one sentence computed from its
//! numbers and, where the study printed numbers of its own, those beside ours.

mod batches;
mod cells;
mod facts;
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
pub use facts::{CellFacts, Fact};
use finding::sentence;
use over_time::over_time;
use points::{Points, axis_name, draw, mean, points};
pub use spec::{Dim, FIGURE, FigureSpec, Metric, Ours, PartSpec, SeedValue, SetupRow, Shape};

/// Everything a study page shows.
pub struct StudyView<'a> {
    pub name: &'a str,
    pub title: &'a str,
    pub question: &'a str,
    /// The published study it reproduces.
    pub seed: &'a str,
    /// Where it ran, and on how many cores where it said.
    pub seed_machine: &'a str,
    pub seed_cores: Option<u32>,
    pub scale: f64,
    /// What differs from the study's own setting (hardware, sizes), said plainly.
    pub caveats: &'a [&'a str],
    /// The study's setup against ours, row by row.
    pub setup: &'a [SetupRow],
    pub parts: &'a [PartSpec],
    pub figures: &'a [FigureSpec],
    pub cells: &'a [CellResult],
    /// The study folder, to load runs for significance tests.
    pub dir: &'a Path,
}

/// The study's numbers beside ours, as an HTML table. Numbers measured on other
/// hardware are never divided by ours: each side is set beside its own first value
/// (how the study's values relate to each other, against how ours do), and a
/// throughput per core where the study said its cores.
fn seed_table(view: &StudyView, spec: &FigureSpec, points: &Points) -> String {
    if spec.seed.is_empty() {
        return String::new();
    }
    let ours_of = |x: &str, series: &str| {
        points
            .xs
            .iter()
            .position(|v| v == x)
            .zip(points.series.iter().position(|s| s == series))
            .and_then(|key| points.values.get(&key))
            .map(|v| mean(v))
    };
    let first_seed = spec.seed[0].value;
    let first_ours = ours_of(spec.seed[0].x, spec.seed[0].series);
    let relative = spec.seed.len() > 1;
    let per_core = match (view.seed_cores, spec.metric) {
        (Some(cores), Metric::OpsPerSecond) => Some(f64::from(cores)),
        _ => None,
    };
    let our_cores = view
        .cells
        .iter()
        .find_map(|c| c.facts.as_ref())
        .map_or(crate::procfs::cores(), |f| f.cores) as f64;
    let unit = spec.metric.unit();
    let mut html = format!(
        "<table class=\"seed\"><tr><th>{}</th><th>series</th><th>the study's ({unit}, {})</th>",
        escape(&axis_name(spec.x)),
        escape(view.seed_machine)
    );
    if relative {
        html.push_str("<th>÷ the study's first</th>");
    }
    if per_core.is_some() {
        html.push_str("<th>the study's per core</th>");
    }
    let _ = write!(html, "<th>ours ({unit}, this host)</th>");
    if relative {
        html.push_str("<th>÷ our first</th>");
    }
    if per_core.is_some() {
        let _ = write!(html, "<th>ours per core ({our_cores:.0} shared)</th>");
    }
    html.push_str("</tr>");
    for seed in spec.seed {
        let ours = ours_of(seed.x, seed.series);
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td>",
            escape(seed.x),
            escape(seed.series),
            svg::short(seed.value)
        );
        if relative {
            let _ = write!(html, "<td>{:.2}×</td>", seed.value / first_seed);
        }
        if let Some(cores) = per_core {
            let _ = write!(html, "<td>{}</td>", svg::short(seed.value / cores));
        }
        let _ = write!(
            html,
            "<td>{}</td>",
            ours.map_or("not run".into(), svg::short)
        );
        if relative {
            let _ = write!(
                html,
                "<td>{}</td>",
                ours.zip(first_ours)
                    .map_or(String::new(), |(o, f)| format!("{:.2}×", o / f))
            );
        }
        if per_core.is_some() {
            let _ = write!(
                html,
                "<td>{}</td>",
                ours.map_or(String::new(), |o| svg::short(o / our_cores))
            );
        }
        html.push_str("</tr>");
    }
    html.push_str("</table>");
    if spec.metric == Metric::Seconds && view.scale < 1.0 {
        let _ = write!(
            html,
            "<p class=\"note\">At --scale {} a run does {} of the study's work, so \
             its total time is not the study's to compare.</p>",
            view.scale,
            percent(view.scale)
        );
    }
    html
}

/// Where cells ran with a CPU budget per node: what each node had, what the nodes had
/// together at each size, and where that passes the host's cores.
fn budgets(page: &mut Page, cells: &[CellResult]) {
    let mut sizes: Vec<(usize, f64)> = cells
        .iter()
        .filter_map(|c| c.facts.as_ref())
        .filter_map(|f| {
            let cores: f64 = f.server_settings.get("cpu_per_node")?.parse().ok()?;
            Some((f.nodes, cores))
        })
        .collect();
    sizes.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    sizes.dedup();
    if sizes.is_empty() {
        return;
    }
    let host = cells
        .iter()
        .find_map(|c| c.facts.as_ref())
        .map_or(1, |f| f.cores) as f64;
    let each: Vec<String> = sizes
        .iter()
        .map(|(nodes, cores)| {
            format!(
                "{nodes} node{} {:.2} core{}",
                if *nodes == 1 { "" } else { "s" },
                *nodes as f64 * cores,
                if *nodes as f64 * cores == 1.0 {
                    ""
                } else {
                    "s"
                }
            )
        })
        .collect();
    let beyond = sizes
        .iter()
        .find(|(nodes, cores)| *nodes as f64 * cores > host)
        .map_or_else(
            || {
                format!(
                    "no size passes the host's {host:.0} cores; hatshop and the system \
                     keep the rest"
                )
            },
            |(nodes, _)| {
                format!(
                    "from {nodes} nodes on the budgets pass the host's {host:.0} cores, \
                     and nodes compete again"
                )
            },
        );
    let _ = write!(
        page,
        "<p class=\"note\">CPU budgets (the kernel's quota per node, set once it is up): \
         {}; {beyond}.</p>",
        escape(&each.join(", "))
    );
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
    setup_table(&mut page, view);
    budgets(&mut page, view.cells);
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
            "<h2>{}{}</h2><p>{}</p>",
            escape(part.title),
            if part.addition {
                " <span class=\"addition\">hatshop's own addition, not in the study</span>"
            } else {
                ""
            },
            escape(part.about)
        );
        for spec in view.figures.iter().filter(|f| f.part == part.id) {
            if matches!(
                spec.shape,
                Shape::OverTime | Shape::BatchTimes | Shape::ServerMeanMax
            ) {
                let (figure, said) = match spec.shape {
                    Shape::OverTime => over_time(spec, view.cells, view.dir),
                    _ => batches::batches(spec, view.cells, view.dir),
                };
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
            page.push_str(&seed_table(view, spec, &points));
        }
        own_reports(&mut page, view.cells, part.id);
    }
    cells_table(&mut page, view.cells);
    page
}

/// Links to the reports of a part's cells: their latency over time, slowest
/// operations, server CPU and (Cassandra) GC pauses, one click from the figures.
fn own_reports(page: &mut Page, cells: &[CellResult], part: &str) {
    let links: Vec<String> = cells
        .iter()
        .filter(|c| c.part == part && c.counted)
        .map(|c| {
            format!(
                "<a href=\"{}\">{}</a>",
                escape(&c.dir.join("report.html").display().to_string()),
                escape(&c.name())
            )
        })
        .collect();
    if links.is_empty() {
        return;
    }
    let _ = write!(
        page,
        "<p class=\"note\">Each cell's own report (latency over time, its slowest \
         operations, the server's CPU and GC pauses): {}.</p>",
        links.join(", ")
    );
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

/// The study's setup against ours, row by row, ours from the cells' own records.
fn setup_table(page: &mut Page, view: &StudyView) {
    if view.setup.is_empty() {
        return;
    }
    page.push_str(
        "<h2>The study's setup and ours</h2><table class=\"setup\"><tr><th></th>\
         <th>the study</th><th>here</th><th>why it differs</th></tr>",
    );
    for row in view.setup {
        let ours = match row.ours {
            Ours::Text(text) => text.to_string(),
            Ours::Fact(fact) => facts_said(view.cells, fact),
        };
        let _ = write!(
            page,
            "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(row.what),
            escape(row.seed),
            escape(&ours),
            escape(row.why)
        );
    }
    page.push_str("</table>");
}

/// Every value the cells' records hold for a fact, in the order the cells ran.
fn facts_said(cells: &[CellResult], fact: Fact) -> String {
    let mut values: Vec<String> = Vec::new();
    for facts in cells.iter().filter_map(|c| c.facts.as_ref()) {
        let value = facts.get(fact);
        if !value.is_empty() && !values.contains(&value) {
            values.push(value);
        }
    }
    match values.len() {
        0 => "not run yet".into(),
        1..=6 => values.join("; "),
        n => format!("{}; … ({n} values)", values[..5].join("; ")),
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
            facts: None,
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
        seed_max: None,
        also: &[],
    };

    /// Throughput by a numeric label, from the cells' `all` rows.
    const BY_EVENTS: FigureSpec = FigureSpec {
        x: Dim::Label("events"),
        metric: Metric::OpsPerSecond,
        events: &[],
        only: &[],
        seed: &[],
        ..BARS
    };

    /// The sentence under `spec` drawn from `cells`.
    fn said(spec: &FigureSpec, cells: &[CellResult]) -> String {
        sentence(spec, &points(spec, cells), cells, Path::new("/nonexistent"))
    }

    #[test]
    fn two_stores_are_said_as_a_ratio_from_the_numbers() {
        let cells = [
            cell("cassandra", "100", 2200.0, 1.0),
            cell("mariadb", "100", 1000.0, 1.0),
        ];
        let points = points(&BARS, &cells);
        let said = sentence(&BARS, &points, &cells, Path::new("/nonexistent"));
        assert_eq!(
            said,
            "Mean latency: read_order: 2.20× faster (roughly double) on mariadb."
        );
        let view = StudyView {
            name: "t",
            title: "t",
            question: "",
            seed: "",
            seed_machine: "a 4-core PC",
            seed_cores: None,
            scale: 1.0,
            caveats: &[],
            setup: &[],
            parts: &[],
            figures: &[],
            cells: &cells,
            dir: Path::new("/nonexistent"),
        };
        let table = seed_table(&view, &BARS, &points);
        // The study's number stands beside ours, never divided by it.
        assert!(table.contains("the study's (µs, a 4-core PC)"), "{table}");
        assert!(table.contains("<td>500</td><td>1k</td></tr>"), "{table}");
        assert!(!table.contains("2.00×"), "{table}");
    }

    #[test]
    fn a_tail_percentile_on_too_few_operations_is_marked() {
        let spec = FigureSpec {
            metric: Metric::P9999,
            seed: &[],
            only: &[],
            ..BARS
        };
        let mut cells = [
            cell("cassandra", "100", 2200.0, 1.0),
            cell("mariadb", "100", 1000.0, 1.0),
        ];
        for c in &mut cells {
            c.rows[1].p9999_us = c.rows[1].mean_us * 3.0;
        }
        let points = points(&spec, &cells);
        let said = sentence(&spec, &points, &cells, Path::new("/nonexistent"));
        assert!(
            said.contains("Marked *: 2 of these values rest on fewer than 10 operations"),
            "{said}"
        );
        assert!(said.contains("too few operations beyond the percentile to name the faster"));
        assert!(
            !said.contains("faster on"),
            "no winner on a thin tail: {said}"
        );
        let figure = draw(&spec, &points);
        assert!(figure.svg.contains(">*<title>"), "the bars carry the mark");
        assert_eq!(figure.table.columns.last().unwrap(), "samples beyond");
        assert_eq!(figure.table.rows[0].last().unwrap(), "0");
    }

    #[test]
    fn where_a_series_stops_gaining_is_said() {
        let spec = FigureSpec {
            metric: Metric::Seconds,
            ..BY_EVENTS
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
        let said = sentence(
            &spec,
            &points(&spec, &cells),
            &cells,
            Path::new("/nonexistent"),
        );
        assert!(
            said.contains(
                "stops helping from events 4 on (62.0 s; no later point more than 10 % better)"
            ),
            "{said}"
        );
    }

    #[test]
    fn repeats_that_overlap_name_no_winner() {
        let cells = [
            cell("cassandra", "100", 1.0, 900.0),
            cell("cassandra", "100", 1.0, 1100.0),
            cell("mariadb", "100", 1.0, 1000.0),
            cell("mariadb", "100", 1.0, 1050.0),
        ];
        assert_eq!(
            said(&BY_EVENTS, &cells),
            "Throughput: 100: 1.02× apart, within the noise (the repeats' ranges overlap)."
        );
    }

    #[test]
    fn a_line_is_said_from_its_first_to_its_last_point() {
        let spec = FigureSpec {
            shape: Shape::Lines,
            ..BY_EVENTS
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
        let cells = [
            cell("mariadb", "1", 1.0, 900.0),
            cell("mariadb", "2", 1.0, 1800.0),
            cell("mariadb", "4", 1.0, 1700.0),
        ];
        assert_eq!(
            said(&BY_EVENTS, &cells),
            "Throughput: mariadb does best at events 2 (1,800 ops/s) and worst at events 1 \
             (900 ops/s); it grows no further from events 2 on (1,800 ops/s; no later point \
             more than 10 % better)."
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
