//! A service-level objective judged on a group of runs (a cell's repeats, a repeat
//! folder): each bound meets, misses or is too close to call, from a 95 % confidence
//! interval (Student's t) over the runs' values. One run has no interval: it is called
//! only where its margin is wide (within half the bound, or past twice it), and says
//! so.

use std::fmt::Write;

use super::figure::Table;
use super::page::Page;
use super::significance::t_critical;
use super::svg::escape;
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
    /// The word a verdict table says.
    pub fn word(self) -> &'static str {
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

impl Call {
    /// Of several bounds: meets if every one does, misses if one does, else too close
    /// to call (a bound with nothing measured is too close).
    pub fn of_all(judged: &[Option<Judged>]) -> Call {
        let calls: Vec<Call> = judged
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

/// Each bound of `slo` judged on the runs' summaries.
pub fn judge_runs(slo: &[Threshold], runs: &[Summary]) -> Vec<Option<Judged>> {
    slo.iter()
        .map(|bound| {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|s| bound.judge(s).measured)
                .collect();
            judge(bound, &values)
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
pub fn judged_said(bound: &Threshold, judged: &Option<Judged>) -> String {
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

/// The verdict as a table on `page`, a row per named group of runs (`what` names a
/// row: a cell, a run), and its numbers as a CSV beside the page.
pub fn verdict_table(
    page: &mut Page,
    slo: &[Threshold],
    rows: &[(String, Vec<Option<Judged>>)],
    what: &str,
) {
    let bounds: Vec<&str> = slo.iter().map(|b| b.text.as_str()).collect();
    let mut table = Table::new(&[what, "verdict"]);
    table.columns.extend(bounds.iter().map(|b| b.to_string()));
    let _ = write!(
        page,
        "<table class=\"verdict\"><tr><th>{what}</th><th>verdict</th>"
    );
    for bound in &bounds {
        let _ = write!(page, "<th>{}</th>", escape(bound));
    }
    page.push_str("</tr>");
    for (name, judged) in rows {
        let call = Call::of_all(judged);
        let mut line = vec![name.clone(), call.word().to_string()];
        let _ = write!(
            page,
            "<tr><td>{}</td><td><strong>{}</strong></td>",
            escape(name),
            call.word()
        );
        for (bound, judged) in slo.iter().zip(judged) {
            let text = judged_said(bound, judged);
            let _ = write!(page, "<td>{}</td>", escape(&text));
            line.push(text);
        }
        page.push_str("</tr>");
        table.rows.push(line);
    }
    page.push_str("</table>");
    page.numbers("verdict", table);
}

/// The verdict as terminal lines: `name: meets (p99<20ms: meets: 2.90 ms (…))`.
pub fn verdict_lines(slo: &[Threshold], rows: &[(String, Vec<Option<Judged>>)]) -> Vec<String> {
    rows.iter()
        .map(|(name, judged)| {
            let bounds: Vec<String> = slo
                .iter()
                .zip(judged)
                .map(|(bound, judged)| format!("{}: {}", bound.text, judged_said(bound, judged)))
                .collect();
            format!(
                "{name}: {} ({})",
                Call::of_all(judged).word(),
                bounds.join("; ")
            )
        })
        .collect()
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
        let of =
            |calls: &[Call]| Call::of_all(&calls.iter().map(|c| judged(*c)).collect::<Vec<_>>());
        assert_eq!(of(&[Call::Meets, Call::Meets]), Call::Meets);
        assert_eq!(of(&[Call::Meets, Call::TooClose]), Call::TooClose);
        assert_eq!(of(&[Call::TooClose, Call::Misses]), Call::Misses);
        assert_eq!(Call::of_all(&[None]), Call::TooClose);
    }
}
