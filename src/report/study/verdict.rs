//! The verdict a study with a service-level objective opens with: for each candidate
//! and cell (its repeats together), whether it meets the objective, misses it, or is
//! too close to call, from a 95 % confidence interval over its repeats. One run has no
//! interval: it is called only where its margin is wide (within half the bound, or
//! past twice it), and says so.

use std::fmt::Write;
use std::path::Path;

use super::cells::CellResult;
use crate::files::read_json;
use crate::report::figure::Table;
use crate::report::page::Page;
use crate::report::significance::t_critical;
use crate::report::svg::escape;
use crate::result_dir::{self, SUMMARY_JSON};
use crate::stats::Summary;
use crate::stats::threshold::{Op, Stat, Threshold};

/// What the objective's judge says of a cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Call {
    Meets,
    Misses,
    TooClose,
}

impl Call {
    fn word(self) -> &'static str {
        match self {
            Call::Meets => "meets",
            Call::Misses => "misses",
            Call::TooClose => "too close to call",
        }
    }
}

/// One bound judged on one cell's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub call: Call,
    /// The runs' mean, in the bound's unit, and its 95 % interval where there were two
    /// runs or more.
    pub mean: f64,
    pub interval: Option<(f64, f64)>,
    pub runs: usize,
}

/// Judges `values` (one a run, in the bound's unit) against `bound`.
pub fn judge(threshold: &Threshold, values: &[f64]) -> Option<Judged> {
    let runs = values.len();
    if runs == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / runs as f64;
    let lower_is_better = matches!(threshold.op, Op::Below | Op::AtMost);
    let bound = threshold.bound;
    // Whether a value is on the objective's side of the bound.
    let inside = |value: f64| match threshold.op {
        Op::Below => value < bound,
        Op::AtMost => value <= bound,
        Op::Above => value > bound,
        Op::AtLeast => value >= bound,
    };
    let (call, interval) = if runs == 1 {
        let (far_inside, far_outside) = if lower_is_better {
            (mean <= bound / 2.0, mean >= bound * 2.0)
        } else {
            (mean >= bound * 2.0, mean <= bound / 2.0)
        };
        let call = match (far_inside, far_outside) {
            (true, _) => Call::Meets,
            (_, true) => Call::Misses,
            _ => Call::TooClose,
        };
        (call, None)
    } else {
        let n = runs as f64;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let half = t_critical(n - 1.0, 0.05) * (variance / n).sqrt();
        // Times, shares and rates are never below zero.
        let (low, high) = ((mean - half).max(0.0), mean + half);
        let call = match (inside(low), inside(high)) {
            (true, true) => Call::Meets,
            (false, false) => Call::Misses,
            _ => Call::TooClose,
        };
        (call, Some((low, high)))
    };
    Some(Judged {
        call,
        mean,
        interval,
        runs,
    })
}

/// A row of the verdict: a candidate's cell (its repeats together) and each bound's
/// judgement.
struct Row {
    labels: Labels,
    judged: Vec<Option<Judged>>,
}

impl Row {
    /// Meets if every bound does, misses if one does, else too close to call.
    fn call(&self) -> Call {
        let calls: Vec<Call> = self
            .judged
            .iter()
            .map(|j| j.as_ref().map_or(Call::TooClose, |j| j.call))
            .collect();
        if calls.contains(&Call::Misses) {
            Call::Misses
        } else if calls.iter().all(|c| *c == Call::Meets) {
            Call::Meets
        } else {
            Call::TooClose
        }
    }
}

/// A cell's labels but its repeat: what its repeats share.
type Labels = Vec<(String, String)>;

/// The cells' rows: each cell's labels but its repeat, in the order they first stand.
fn rows(slo: &[Threshold], cells: &[CellResult], dir: &Path) -> Vec<Row> {
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
        .map(|(labels, runs)| {
            let judged = slo
                .iter()
                .map(|bound| {
                    let values: Vec<f64> = runs
                        .iter()
                        .filter_map(|s| bound.judge(s).measured)
                        .collect();
                    judge(bound, &values)
                })
                .collect();
            Row { labels, judged }
        })
        .collect()
}

/// A value in the bound's unit, as a person reads it.
fn said(bound: &Threshold, value: f64) -> String {
    match bound.stat {
        Stat::ErrorShare => crate::numbers::percent(value),
        Stat::Throughput => format!("{:.0} ops/s", value),
        Stat::Latency(..) => crate::numbers::time_text(value),
    }
}

/// One bound's judgement in a cell of the table: the mean, its interval, its runs.
fn judged_said(bound: &Threshold, judged: &Option<Judged>) -> String {
    let Some(judged) = judged else {
        return "not measured".into();
    };
    let runs = match judged.interval {
        Some((low, high)) => format!(
            " ({} to {}, {} runs)",
            said(bound, low),
            said(bound, high),
            judged.runs
        ),
        None => " (one run: called only beyond half or twice the bound)".into(),
    };
    format!("{}: {}{runs}", judged.call.word(), said(bound, judged.mean))
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
    let mut table = Table::new(&["cell", "verdict"]);
    table.columns.extend(bounds.iter().map(|b| b.to_string()));
    page.push_str("<table class=\"verdict\"><tr><th>cell</th><th>verdict</th>");
    for bound in &bounds {
        let _ = write!(page, "<th>{}</th>", escape(bound));
    }
    page.push_str("</tr>");
    for row in &rows {
        let name = super::cell_name(&row.labels);
        let call = row.call();
        let mut line = vec![name.clone(), call.word().to_string()];
        let _ = write!(
            page,
            "<tr><td>{}</td><td class=\"{}\"><strong>{}</strong></td>",
            escape(&name),
            call.word().replace(' ', "-"),
            call.word()
        );
        for (bound, judged) in slo.iter().zip(&row.judged) {
            let text = judged_said(bound, judged);
            let _ = write!(page, "<td>{}</td>", escape(&text));
            line.push(text);
        }
        page.push_str("</tr>");
        table.rows.push(line);
    }
    page.push_str("</table>");
    if rows.is_empty() {
        page.push_str("<p class=\"warn\">No cell has finished yet: nothing is judged.</p>");
    }
    page.numbers("verdict", table);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(op: Op, bound: f64) -> Threshold {
        Threshold {
            text: "p99<20ms".into(),
            scope: "all".into(),
            stat: Stat::ErrorShare,
            op,
            bound,
        }
    }

    #[test]
    fn repeats_are_called_from_their_interval_and_one_run_only_from_a_wide_margin() {
        let below = bound(Op::Below, 20.0);
        let call = |values: &[f64]| judge(&below, values).unwrap().call;
        assert_eq!(call(&[10.0, 11.0, 12.0]), Call::Meets);
        assert_eq!(call(&[30.0, 31.0, 29.0]), Call::Misses);
        // A mean under the bound whose interval crosses it.
        assert_eq!(call(&[5.0, 30.0, 12.0]), Call::TooClose);
        assert_eq!(call(&[9.0]), Call::Meets);
        assert_eq!(call(&[15.0]), Call::TooClose);
        assert_eq!(call(&[41.0]), Call::Misses);
        let above = bound(Op::Above, 1000.0);
        assert_eq!(judge(&above, &[2100.0]).unwrap().call, Call::Meets);
        assert_eq!(judge(&above, &[1200.0, 1210.0]).unwrap().call, Call::Meets);
        assert_eq!(judge(&above, &[900.0, 910.0]).unwrap().call, Call::Misses);
        assert!(judge(&above, &[]).is_none());
    }

    #[test]
    fn a_row_misses_if_one_bound_misses_and_meets_only_if_all_meet() {
        let judged = |call| {
            Some(Judged {
                call,
                mean: 1.0,
                interval: None,
                runs: 1,
            })
        };
        let row = |calls: &[Call]| Row {
            labels: Vec::new(),
            judged: calls.iter().map(|c| judged(*c)).collect(),
        };
        assert_eq!(row(&[Call::Meets, Call::Meets]).call(), Call::Meets);
        assert_eq!(row(&[Call::Meets, Call::TooClose]).call(), Call::TooClose);
        assert_eq!(row(&[Call::TooClose, Call::Misses]).call(), Call::Misses);
    }
}
