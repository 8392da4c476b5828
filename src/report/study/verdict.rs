//! The verdict a study with a service-level objective opens with: a row for each
//! candidate and cell (its repeats together), each bound judged as `report::slo`
//! judges it, and the row's own call; then the headroom, where searches ran: each
//! candidate's highest rate under the objective's p99.

use std::fmt::Write;
use std::path::Path;

use super::cells::{CellResult, CellStatus};
use crate::numbers::time_text;
use crate::report::figure::Table;
use crate::report::page::Page;
use crate::report::slo::{Judged, judge_runs, verdict_lines, verdict_table};
use crate::report::svg::escape;
use crate::report::sweep::{SearchAnswer, answers_said};
use crate::result_dir::{self, SUMMARY_JSON};
use crate::stats::Summary;
use crate::stats::threshold::Threshold;

/// A cell's labels but its repeat: what its repeats share.
type Labels = Vec<(String, String)>;

fn without_repeat(labels: &Labels) -> Labels {
    labels
        .iter()
        .filter(|(k, _)| k != "repeat")
        .cloned()
        .collect()
}

/// The verdict's rows: a candidate's cell (its repeats together) by name, and each
/// bound's judgement, in the order the cells first stand.
fn rows(slo: &[Threshold], cells: &[CellResult], dir: &Path) -> Vec<(String, Vec<Option<Judged>>)> {
    let mut groups: Vec<(Labels, Vec<Summary>)> = Vec::new();
    for cell in cells.iter().filter(|c| c.counted) {
        let Ok(summary) =
            result_dir::seal::read_json::<Summary>(&dir.join(&cell.dir), SUMMARY_JSON)
        else {
            continue;
        };
        let labels = without_repeat(&cell.labels);
        match groups.iter_mut().find(|(l, _)| *l == labels) {
            Some((_, runs)) => runs.push(summary),
            None => groups.push((labels, vec![summary])),
        }
    }
    groups
        .into_iter()
        .map(|(labels, runs)| (super::cell_name(&labels), judge_runs(slo, &runs)))
        .collect()
}

/// The searches' answers: a candidate's search cell (its repeats together) by name,
/// and each repeat's answer, in the order the cells first stand.
fn headroom(cells: &[CellResult]) -> Vec<(String, Vec<SearchAnswer>)> {
    let mut groups: Vec<(Labels, Vec<SearchAnswer>)> = Vec::new();
    for cell in cells {
        let CellStatus::Searched(answer) = &cell.status else {
            continue;
        };
        let labels = without_repeat(&cell.labels);
        match groups.iter_mut().find(|(l, _)| *l == labels) {
            Some((_, answers)) => answers.push(*answer),
            None => groups.push((labels, vec![*answer])),
        }
    }
    groups
        .into_iter()
        .map(|(labels, answers)| (super::cell_name(&labels), answers))
        .collect()
}

/// A search cell's answers in words: the highest rate, and where a curve bent.
fn headroom_said(answers: &[SearchAnswer]) -> (String, String) {
    let highest: Vec<Option<f64>> = answers.iter().map(|a| a.highest_under).collect();
    let bent: Vec<String> = answers.iter().filter_map(SearchAnswer::bend).collect();
    (answers_said(&highest), bent.join("; "))
}

/// The headroom under the objective, where searches ran: a table and its CSV.
fn headroom_table(page: &mut Page, cells: &[CellResult]) {
    let rows = headroom(cells);
    let Some(bound_us) = rows.first().map(|(_, answers)| answers[0].bound_us) else {
        return;
    };
    let _ = write!(
        page,
        "<h3>Headroom</h3><p>The highest rate whose response p99 stayed under {}, \
         each rate a run of its own: doubled until a run missed, then the gap halved to \
         within 5 %.</p>",
        time_text(bound_us)
    );
    let mut table = Table::new(&["cell", "highest rate under the bound", "not monotonic"]);
    page.push_str(
        "<table class=\"verdict\"><tr><th>cell</th><th>highest rate under the bound</th>\
         <th>not monotonic</th></tr>",
    );
    for (name, answers) in &rows {
        let (highest, bent) = headroom_said(answers);
        let _ = write!(
            page,
            "<tr><td>{}</td><td><strong>{}</strong></td><td>{}</td></tr>",
            escape(name),
            escape(&highest),
            escape(&bent)
        );
        table.rows.push(vec![name.clone(), highest, bent]);
    }
    page.push_str("</table>");
    page.numbers("headroom", table);
}

/// The verdict section, first on the page, and its numbers as a CSV beside it.
pub(super) fn verdict(page: &mut Page, slo: &[Threshold], cells: &[CellResult], dir: &Path) {
    if slo.is_empty() {
        return;
    }
    let rows = rows(slo, cells, dir);
    let bounds: Vec<&str> = slo.iter().map(|b| b.text.as_str()).collect();
    let _ = write!(
        page,
        "<h2>The verdict</h2><p>The objective: <code>{}</code>, judged on response time \
         where a run was paced (<code>--rate</code>) and on service time otherwise; a \
         cell's repeats give a 95 % interval of their mean.</p>",
        escape(&bounds.join(", "))
    );
    let searched = cells
        .iter()
        .any(|c| matches!(c.status, CellStatus::Searched(_)));
    if !rows.is_empty() || !searched {
        verdict_table(page, slo, &rows, "cell");
    }
    if rows.is_empty() && !searched {
        page.push_str("<p class=\"warn\">No cell has finished yet: nothing is judged.</p>");
    }
    headroom_table(page, cells);
}

/// The verdict as terminal lines, a row a line, then the headroom searches found; no
/// line at all for a study without an objective, which judges nothing.
pub fn verdict_said(slo: &[Threshold], cells: &[CellResult], dir: &Path) -> Vec<String> {
    if slo.is_empty() {
        return Vec::new();
    }
    let mut lines = verdict_lines(slo, &rows(slo, cells, dir));
    for (name, answers) in headroom(cells) {
        let (highest, bent) = headroom_said(&answers);
        let bent = if bent.is_empty() {
            bent
        } else {
            format!(" (not monotonic: {bent})")
        };
        lines.push(format!("{name}: headroom {highest}{bent}"));
    }
    lines
}
