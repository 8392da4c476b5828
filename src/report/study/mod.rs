//! A study's page, `study.html`: the figures of the published study it reproduces, drawn
//! from hatshop's own runs (the cells), each with one sentence computed from its
//! numbers and, where the study printed numbers of its own, those beside ours.

mod batches;
mod cells;
mod evidence;
mod facts;
mod finding;
mod over_time;
mod points;
mod premise;
mod spec;
mod tables;
mod verdict;

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::page::Page;
use super::svg::escape;
pub use cells::{CellResult, CellStatus, MetricRow, cell_name};
use evidence::with_evidence;
pub use facts::{CellFacts, Fact, NodesSeen};
use finding::sentence;
use over_time::over_time;
use points::{draw, objective_drawn, points};
pub use spec::{Dim, FigureSpec, Metric, Ours, PartSpec, Premise, SeedValue, SetupRow, Shape};
use tables::{budgets, cells_table, own_reports, seed_table, setup_table};
pub use verdict::verdict_said;

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
    pub caveats: &'a [String],
    /// The service-level objective the page opens its verdict with (none: no verdict).
    pub slo: &'a [crate::stats::threshold::Threshold],
    /// The study's setup against ours, row by row.
    pub setup: &'a [SetupRow],
    pub parts: &'a [PartSpec],
    pub figures: &'a [FigureSpec],
    pub cells: &'a [CellResult],
    /// The study folder, to load runs for significance tests.
    pub dir: &'a Path,
}

/// The page, and the CSVs of its figures.
pub fn page(view: &StudyView) -> Page {
    let mut page = Page::new("study.html");
    let reproduces = if view.seed.is_empty() {
        String::new()
    } else {
        format!("Reproduces <em>{}</em>. ", escape(view.seed))
    };
    let _ = write!(
        page,
        "<h1>{}</h1><p class=\"question\">{}</p><p>{reproduces}\
         Every cell ran on this machine with <code>hatshop study {}</code>; each was \
         verified against its event stream.</p>",
        escape(view.title),
        escape(view.question),
        escape(view.name)
    );
    if view.scale < 1.0 {
        let _ = write!(
            page,
            "<p class=\"warn\">Scaled to {} of the study's work (events, records, \
             repeats) with <code>--scale {}</code>: a quick look, not the study's numbers.{}</p>",
            percent(view.scale),
            view.scale,
            floor_said(view.cells)
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
    verdict::verdict(&mut page, view.slo, view.cells, view.dir);
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
            escape(&part.title),
            if part.addition {
                " <span class=\"addition\">hatshop's own addition, not in the study</span>"
            } else {
                ""
            },
            escape(&part.about)
        );
        for spec in view.figures.iter().filter(|f| f.part == part.id) {
            figure_section(&mut page, view, spec);
        }
        own_reports(&mut page, view.cells, &part.id);
    }
    cells_table(&mut page, view.cells);
    page
}

/// One figure: its premises, its chart, the sentence under it, the study's words and
/// the study's numbers beside ours.
fn figure_section(page: &mut Page, view: &StudyView, spec: &FigureSpec) {
    if matches!(
        spec.shape,
        Shape::OverTime | Shape::BatchTimes | Shape::ServerMeanMax
    ) {
        let (figure, said) = match spec.shape {
            Shape::OverTime => over_time(spec, view.cells),
            _ => batches::batches(spec, view.cells, view.dir),
        };
        page.figure(figure);
        let _ = write!(page, "<p class=\"finding\">{}</p>", escape(&said));
        seed_words(page, spec);
        return;
    }
    let points = points(spec, view.cells);
    let mut said = sentence(spec, &points, view.cells);
    if !premises_said(page, spec, view.cells) {
        said = format!("Its premise failed (above), so read with care: {said}");
    }
    let objective = objective_drawn(spec, view.slo, points.response);
    let mut figure = draw(spec, &points, objective);
    with_evidence(&mut figure, spec, &points, view.cells);
    page.figure(figure);
    let _ = write!(page, "<p class=\"finding\">{}</p>", escape(&said));
    seed_words(page, spec);
    page.push_str(&seed_table(view, spec, &points));
}

/// Each premise of `spec` as its cells bear it out, above the figure; false when one
/// failed.
fn premises_said(page: &mut Page, spec: &FigureSpec, cells: &[CellResult]) -> bool {
    let checked = premise::check(spec, cells);
    for premise in &checked {
        let class = if premise.held {
            "premise"
        } else {
            "warn premise"
        };
        let _ = write!(page, "<p class=\"{class}\">{}</p>", escape(&premise.said));
    }
    checked.iter().all(|p| p.held)
}

/// What the study itself said of a figure, quoted.
fn seed_words(page: &mut Page, spec: &FigureSpec) {
    if !spec.seed_says.is_empty() {
        let _ = write!(
            page,
            "<p class=\"seed-says\">The study: “{}”</p>",
            escape(&spec.seed_says)
        );
    }
}

pub(super) fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p >= 1.0 {
        format!("{p:.0} %")
    } else {
        format!("{p:.2} %")
    }
}

/// Writes `study.html` and its figures' CSVs into the study folder.
pub fn write(view: &StudyView) -> Result<PathBuf> {
    let title = format!("hatshop study {}: {}", view.name, view.title);
    page(view).write(view.dir, &title)
}

/// What the cells' time floor kept at a small scale, from their records.
fn floor_said(cells: &[CellResult]) -> String {
    let floor = cells
        .iter()
        .filter_map(|cell| cell.facts.as_ref()?.floor_s)
        .fold(None, |most: Option<f64>, secs| {
            Some(most.map_or(secs, |m| m.max(secs)))
        });
    floor.map_or(String::new(), |secs| {
        format!(
            " A run measured {secs} s at least (<code>--min-duration</code>: its events went \
             on past the scaled count until then), but where its figure is a count's total \
             time or a run's length."
        )
    })
}

#[cfg(test)]
mod tests;
