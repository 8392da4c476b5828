//! The verdict a study with a service-level objective opens with: a row for each
//! candidate and cell (its repeats together), each bound judged as `report::slo`
//! judges it, and the row's own call.

use std::fmt::Write;
use std::path::Path;

use super::cells::CellResult;
use crate::files::read_json;
use crate::report::page::Page;
use crate::report::slo::{Judged, judge_runs, verdict_lines, verdict_table};
use crate::report::svg::escape;
use crate::result_dir::{self, SUMMARY_JSON};
use crate::stats::Summary;
use crate::stats::threshold::Threshold;

/// A cell's labels but its repeat: what its repeats share.
type Labels = Vec<(String, String)>;

/// The verdict's rows: a candidate's cell (its repeats together) by name, and each
/// bound's judgement, in the order the cells first stand.
fn rows(slo: &[Threshold], cells: &[CellResult], dir: &Path) -> Vec<(String, Vec<Option<Judged>>)> {
    let mut groups: Vec<(Labels, Vec<Summary>)> = Vec::new();
    for cell in cells.iter().filter(|c| c.counted) {
        let Ok(summary) =
            read_json::<Summary>(&result_dir::file(&dir.join(&cell.dir), SUMMARY_JSON))
        else {
            continue;
        };
        let labels: Labels = cell
            .labels
            .iter()
            .filter(|(k, _)| k != "repeat")
            .cloned()
            .collect();
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
    verdict_table(page, slo, &rows, "cell");
    if rows.is_empty() {
        page.push_str("<p class=\"warn\">No cell has finished yet: nothing is judged.</p>");
    }
}

/// The verdict as terminal lines, a row a line.
pub fn verdict_said(slo: &[Threshold], cells: &[CellResult], dir: &Path) -> Vec<String> {
    verdict_lines(slo, &rows(slo, cells, dir))
}
