//! Figures over a bulk load's batches, from its batches.csv and batch-traces.csv: the
//! client's and the server's time of each traced batch over the load (the study's
//! upper chart), and the server's mean against its max in each pass (its lower one).

use std::collections::BTreeMap;
use std::path::Path;

use super::cells::CellResult;
use super::finding::{capital, nothing_drawn};
use super::points::mean;
use super::spec::{FigureSpec, Shape};
use crate::report::figure::Figure;
use crate::report::loaded_run::read_rows;
use crate::report::svg::{self, Axis, Series};
use crate::result_dir::load_record::{BATCH_TRACES_CSV, BATCHES_CSV, BatchRow, BatchTrace};

/// The figure of a `Shape::BatchTimes` or `Shape::ServerMeanMax` spec, and its sentence.
pub(super) fn batches(spec: &FigureSpec, cells: &[CellResult], dir: &Path) -> (Figure, String) {
    let mut series = Vec::new();
    let mut clauses = Vec::new();
    for cell in cells
        .iter()
        .filter(|c| spec.draws(&c.part) && c.counted && c.matches(&spec.only))
    {
        let folder = dir.join(&cell.dir);
        let traces: Vec<BatchTrace> = read_rows(&folder.join(BATCH_TRACES_CSV)).unwrap_or_default();
        let traced: Vec<&BatchTrace> = traces.iter().filter(|t| t.server_us.is_some()).collect();
        if traced.is_empty() {
            clauses.push(format!("{} traced no batch", cell.name()));
            continue;
        }
        let (drawn, said) = match spec.shape {
            Shape::BatchTimes => client_and_server(&traced),
            _ => server_mean_and_max(&traced, &folder),
        };
        series.extend(drawn);
        clauses.push(said);
    }
    let x = match spec.shape {
        Shape::BatchTimes => Axis::linear("time into the load (s)"),
        _ => Axis::linear("pass"),
    };
    let figure = svg::line_chart(&spec.title, &x, &Axis::linear("batch time (ms)"), &series);
    let said = if clauses.is_empty() {
        nothing_drawn(spec, cells)
    } else {
        format!("{}.", capital(&clauses.join("; ")))
    };
    (figure, said)
}

/// The server's own time of a traced batch, ms.
fn server_ms(t: &BatchTrace) -> f64 {
    t.server_us.unwrap_or_default() / 1000.0
}

/// Each traced batch's client and server time over the load, and what share of the
/// client's time the server's is.
fn client_and_server(traced: &[&BatchTrace]) -> ([Series; 2], String) {
    let client: Vec<(f64, f64)> = traced
        .iter()
        .map(|t| (t.start_s, t.client_us / 1000.0))
        .collect();
    let served: Vec<(f64, f64)> = traced.iter().map(|t| (t.start_s, server_ms(t))).collect();
    let share = mean(&served.iter().map(|p| p.1).collect::<Vec<_>>())
        / mean(&client.iter().map(|p| p.1).collect::<Vec<_>>());
    let said = format!(
        "over {} traced batches the server's own time is {:.0} % of the \
         client's on average; the rest is on the wire and in the client",
        traced.len(),
        share * 100.0
    );
    let series = [
        Series {
            name: "client (hatshop)".into(),
            points: client,
        },
        Series {
            name: "server (Cassandra's trace)".into(),
            points: served,
        },
    ];
    (series, said)
}

/// The server's mean and slowest traced batch in each pass over the data (passes
/// from the cell's batches.csv), and how far apart they are.
fn server_mean_and_max(traced: &[&BatchTrace], folder: &Path) -> ([Series; 2], String) {
    let batches: Vec<BatchRow> = read_rows(&folder.join(BATCHES_CSV)).unwrap_or_default();
    let pass_of: BTreeMap<u64, u64> = batches.iter().map(|b| (b.batch, b.pass)).collect();
    let mut by_pass: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for t in traced {
        let pass = pass_of.get(&t.batch).copied().unwrap_or(0);
        by_pass.entry(pass).or_default().push(server_ms(t));
    }
    let means: Vec<(f64, f64)> = by_pass
        .iter()
        .map(|(p, v)| (*p as f64 + 1.0, mean(v)))
        .collect();
    let maxes: Vec<(f64, f64)> = by_pass
        .iter()
        .map(|(p, v)| (*p as f64 + 1.0, v.iter().copied().fold(0.0, f64::max)))
        .collect();
    let spread: Vec<f64> = means
        .iter()
        .zip(&maxes)
        .map(|(m, x)| x.1 / m.1.max(f64::MIN_POSITIVE))
        .collect();
    let said = format!(
        "in each of {} passes the server's slowest traced batch took {:.1} to \
         {:.1}× its mean",
        spread.len(),
        spread.iter().copied().fold(f64::INFINITY, f64::min),
        spread.iter().copied().fold(0.0, f64::max)
    );
    let series = [
        Series {
            name: "server mean".into(),
            points: means,
        },
        Series {
            name: "server max".into(),
            points: maxes,
        },
    ];
    (series, said)
}
