//! The tables a study's page holds beside its figures: the study's setup against ours,
//! the nodes' CPU budgets, the study's numbers beside ours, links to each part's cells'
//! own reports, and the cells themselves.

use std::fmt::Write;

use super::cells::{CellResult, CellStatus, MetricRow};
use super::facts::Fact;
use super::points::{Points, THIN, axis_name, mean};
use super::spec::{FigureSpec, Metric, Ours, SeedValue};
use super::{StudyView, percent};
use crate::numbers::thousands;
use crate::report::page::Page;
use crate::report::svg::{self, escape};
use crate::report::table::{self, Column, Table};

/// The study's numbers beside ours, as an HTML table. Numbers measured on other
/// hardware are never divided by ours: each side is set beside its own first value
/// (how the study's values relate to each other, against how ours do), and a
/// throughput per core where the study said its cores.
pub(super) fn seed_table(view: &StudyView, spec: &FigureSpec, points: &Points) -> String {
    let Some(first) = spec.seed.first() else {
        return String::new();
    };
    let key_of = |x: &str, series: &str| {
        points
            .xs
            .iter()
            .position(|v| v == x)
            .zip(points.series.iter().position(|s| s == series))
    };
    let ours_of = |x: &str, series: &str| {
        key_of(x, series)
            .and_then(|key| points.values.get(&key))
            .map(|v| mean(v))
    };
    // A tail resting on fewer than THIN operations beyond it, as the figure marks it.
    let thin_at = |x: &str, series: &str| {
        key_of(x, series)
            .and_then(|key| points.beyond.get(&key))
            .copied()
            .filter(|n| *n < THIN)
    };
    let columns = SeedColumns::of(view, spec, ours_of(&first.x, &first.series));
    let mut html = columns.header(view, spec);
    let mut marked = false;
    for seed in &spec.seed {
        let thin = thin_at(&seed.x, &seed.series);
        marked |= thin.is_some();
        columns.row(&mut html, seed, ours_of(&seed.x, &seed.series), thin);
    }
    html.push_str("</table>");
    if marked {
        let _ = write!(
            html,
            "<p class=\"note\">* Ours rests on fewer than {THIN} operations beyond the \
             percentile (the count beside it): not a number to set beside the study's.</p>"
        );
    }
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

/// The seed table's columns: each side beside its own first value where the study
/// gave several, and per core where it said its cores.
struct SeedColumns {
    first_seed: f64,
    first_ours: Option<f64>,
    relative: bool,
    /// The study's cores, where it said them and the figure is a throughput.
    per_core: Option<f64>,
    our_cores: f64,
}

impl SeedColumns {
    fn of(view: &StudyView, spec: &FigureSpec, first_ours: Option<f64>) -> SeedColumns {
        SeedColumns {
            first_seed: spec.seed[0].value,
            first_ours,
            relative: spec.seed.len() > 1,
            per_core: match (view.seed_cores, spec.metric) {
                (Some(cores), Metric::OpsPerSecond) => Some(f64::from(cores)),
                _ => None,
            },
            our_cores: view
                .cells
                .iter()
                .find_map(|c| c.facts.as_ref())
                .map_or(crate::procfs::cores(), |f| f.cores) as f64,
        }
    }

    /// The table's opening and its header row.
    fn header(&self, view: &StudyView, spec: &FigureSpec) -> String {
        let unit = spec.metric.unit();
        let mut html = format!(
            "<table class=\"seed\"><tr><th>{}</th><th>series</th><th>the study's ({unit}, {})</th>",
            escape(&axis_name(&spec.x)),
            escape(view.seed_machine)
        );
        if self.relative {
            html.push_str("<th>÷ the study's first</th>");
        }
        if self.per_core.is_some() {
            html.push_str("<th>the study's per core</th>");
        }
        let _ = write!(html, "<th>ours ({unit}, this host)</th>");
        if self.relative {
            html.push_str("<th>÷ our first</th>");
        }
        if self.per_core.is_some() {
            let _ = write!(
                html,
                "<th>ours per core ({:.0} shared)</th>",
                self.our_cores
            );
        }
        html.push_str("</tr>");
        html
    }

    /// One of the study's values, and ours for the same point ("not run" without).
    fn row(&self, html: &mut String, seed: &SeedValue, ours: Option<f64>, thin: Option<u64>) {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td>",
            escape(&seed.x),
            escape(&seed.series),
            svg::short(seed.value)
        );
        if self.relative {
            let _ = write!(html, "<td>{:.2}×</td>", seed.value / self.first_seed);
        }
        if let Some(cores) = self.per_core {
            let _ = write!(html, "<td>{}</td>", svg::short(seed.value / cores));
        }
        let mark = thin.map_or(String::new(), |n| format!(" * ({n} beyond)"));
        let _ = write!(
            html,
            "<td>{}{mark}</td>",
            ours.map_or("not run".into(), svg::short)
        );
        if self.relative {
            let ratio = ours.zip(self.first_ours);
            let _ = write!(
                html,
                "<td>{}</td>",
                ratio.map_or(String::new(), |(o, f)| format!("{:.2}×", o / f))
            );
        }
        if self.per_core.is_some() {
            let _ = write!(
                html,
                "<td>{}</td>",
                ours.map_or(String::new(), |o| svg::short(o / self.our_cores))
            );
        }
        html.push_str("</tr>");
    }
}

/// Where cells ran with a CPU budget per node: what each node had, what the nodes had
/// together at each size, and where that passes the host's cores.
pub(super) fn budgets(page: &mut Page, cells: &[CellResult]) {
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

/// Links to the reports of a part's cells: their latency over time, slowest
/// operations, server CPU and (Cassandra) GC pauses, one click from the figures.
pub(super) fn own_reports(page: &mut Page, cells: &[CellResult], part: &str) {
    let links: Vec<String> = cells
        .iter()
        .filter(|c| c.part == part && c.counted)
        .map(|c| {
            format!(
                "<a href=\"{}\">{}</a>",
                escape(&c.own_page().display().to_string()),
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

/// The study's setup against ours, row by row, ours from the cells' own records.
pub(super) fn setup_table(page: &mut Page, view: &StudyView) {
    if view.setup.is_empty() {
        return;
    }
    let mut table = Table::new(vec![
        Column::text("", "what"),
        Column::text("the study", "the_study"),
        Column::text("here", "here"),
        Column::text("why it differs", "why"),
    ]);
    table.section(
        view.setup
            .iter()
            .map(|row| {
                let ours = match &row.ours {
                    Ours::Text(text) => text.to_string(),
                    Ours::Fact(fact) => facts_said(view.cells, fact),
                };
                vec![
                    table::Cell::text(row.what.as_str()),
                    table::Cell::text(row.seed.as_str()),
                    table::Cell::text(ours),
                    table::Cell::text(row.why.as_str()),
                ]
            })
            .collect(),
    );
    page.push_str("<h2>The study's setup and ours</h2>");
    page.push_str(&table::html(&table, "setup"));
}

/// Every value the cells' records hold for a fact, in the order the cells ran.
pub(super) fn facts_said(cells: &[CellResult], fact: &Fact) -> String {
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

/// Every cell: what it was, how it ended, its operations and errors, what load it
/// stood on and its own report; then each cell's command.
pub(super) fn cells_table(page: &mut Page, cells: &[CellResult]) {
    let mut table = Table::new(vec![
        Column::number("#", None, "cell_number"),
        Column::text("cell", "cell"),
        Column::text("status", "status"),
        Column::number("ops", None, "ops"),
        Column::text("errors", "errors"),
        Column::text("load", "load"),
        Column::text("report", "folder"),
    ]);
    let rows = cells.iter().enumerate().map(|(i, cell)| {
        // A search's operations are its rates', each in its own run.
        let all = cell
            .rows
            .iter()
            .find(|r| r.event_type == "all")
            .filter(|_| !matches!(cell.status, CellStatus::Searched(_)));
        let report = match cell.counted {
            true => table::Cell::text(cell.dir.display().to_string())
                .linked(cell.own_page().display().to_string()),
            false => table::Cell::text(""),
        };
        vec![
            table::Cell::count(i as u64 + 1),
            table::Cell::text(cell.name()),
            table::Cell::text(cell.status.to_string()),
            all.map_or(table::Cell::text(""), |r| table::Cell::count(r.ops)),
            table::Cell::text(all.map_or(String::new(), errors_explained)),
            table::Cell::text(load_said(cell, cells)),
            report,
        ]
    });
    table.section(rows.collect());
    page.push_str("<h2>Cells</h2>");
    page.push_str(&table::html(&table, "cells"));
    page.push_str("<details><summary>The command of each cell</summary><pre>");
    for (i, cell) in cells.iter().enumerate() {
        let _ = writeln!(page, "{:>3}  {}", i + 1, escape(&cell.command));
    }
    page.push_str("</pre></details>");
}

/// What a cell stood on: `own` where it loaded, `on #3` where it went on from the
/// tables cell 3 left (`--reuse-load`), the run's folder where that is no cell of the
/// study (an earlier study's, on the same server).
fn load_said(cell: &CellResult, cells: &[CellResult]) -> String {
    let Some(facts) = &cell.facts else {
        return String::new();
    };
    let Some(from) = &facts.went_on_from else {
        return "own".to_string();
    };
    let named = |other: &CellResult| other.dir.file_name().is_some_and(|name| *name == **from);
    match cells.iter().position(named) {
        Some(k) => format!("on #{}", k + 1),
        None => format!("on {from}"),
    }
}

/// A cell's errors with their kinds: "7 (5 conflict, 2 timeout)".
fn errors_explained(row: &MetricRow) -> String {
    let kinds: Vec<String> = row
        .errors_by_kind
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, n)| format!("{} {kind}", thousands(*n)))
        .collect();
    match kinds.as_slice() {
        [] => thousands(row.errors),
        _ => format!("{} ({})", thousands(row.errors), kinds.join(", ")),
    }
}
