//! What a sweep says and writes: a line per run as it ends, then sweep.csv and
//! sweep.html of the runs that ran, and how the sweep ends.

use std::cell::Cell as Once;
use std::path::Path;

use anyhow::{Result, bail};

use super::steps::Steps;
use crate::cli::SweepArgs;
use crate::console::{note, say};
use crate::files::read_json;
use crate::lifecycle::run::{load_note, verified_note};
use crate::lifecycle::series::{Outcome, Watch};
use crate::numbers::format_us;
use crate::report::sweep::{self, RunPlace, SweepRow};
use crate::result_dir;
use crate::stats::Summary;
use crate::studies::cells::Cell;
use crate::verify::VerifyReport;

/// What a sweep says as it goes: its header once its first run has ended (so that a
/// sweep that cannot start is one line), then a line per run.
pub(super) struct Said {
    pub(super) header: String,
    pub(super) several: bool,
    pub(super) said_header: Once<bool>,
}

impl Watch for Said {
    fn starting(&self, cells: &[Cell], kept: usize) {
        if kept > 0 {
            note!(
                "{kept} of the sweep's {} runs finished earlier, kept",
                cells.len()
            );
        }
    }

    fn after(&self, cell: &Cell, dir: &Path) -> Result<()> {
        if !self.said_header.replace(true) {
            note!("{}", self.header);
        }
        let Some(place) = place(cell, dir) else {
            return Ok(());
        };
        let run_rows = rows_of_run(&place.of(dir), dir)?;
        let all = &run_rows[0];
        let cut_short = if all.ran_its_plan() {
            String::new()
        } else {
            format!(" ({}: left out of the charts)", place.status)
        };
        say!(
            "{}={}{} #{}: {:.2} s, {:.0} ops/s, mean {} µs, p99 {} µs{}, {} errors{}{}{cut_short}",
            place.setting,
            place.value,
            if self.several {
                format!(" on {}", place.database)
            } else {
                String::new()
            },
            place.repeat,
            all.elapsed_s,
            all.throughput_ops_s,
            format_us(all.mean_us),
            format_us(all.p99_us),
            all.response_p99_us
                .map(|r| format!(" (response p99 {} µs)", format_us(r)))
                .unwrap_or_default(),
            all.errors,
            load_note(place.went_on_from.as_deref()),
            verified_note(dir)
        );
        Ok(())
    }
}

/// A cell's place in the sweep, from its labels, and how its run ended; `None` where
/// its folder holds no whole run record.
struct Place {
    setting: String,
    value: String,
    database: String,
    repeat: usize,
    status: result_dir::RunStatus,
    went_on_from: Option<String>,
}

impl Place {
    fn of<'a>(&'a self, dir: &'a Path) -> RunPlace<'a> {
        RunPlace {
            setting: &self.setting,
            value: &self.value,
            database: &self.database,
            repeat: self.repeat,
            run_dir: dir.to_str().unwrap_or_default(),
            status: self.status,
            went_on_from: self.went_on_from.as_deref(),
        }
    }
}

fn place(cell: &Cell, dir: &Path) -> Option<Place> {
    let record = result_dir::load_complete(dir).ok()?;
    let [(_, database), (setting, value), (_, repeat)] = &cell.labels[..] else {
        return None;
    };
    Some(Place {
        setting: setting.clone(),
        value: value.clone(),
        database: database.clone(),
        repeat: repeat.parse().ok()?,
        status: record.status,
        went_on_from: record.went_on_from.map(|from| from.folder),
    })
}

/// sweep.csv and sweep.html of the runs that ran, by step, database and repeat, and
/// how the sweep ends.
pub(super) fn write_up(
    args: &SweepArgs,
    steps: &Steps,
    cells: &[Cell],
    dir: &Path,
    outcome: Outcome,
) -> Result<std::process::ExitCode> {
    let mut rows = Vec::new();
    for cell in cells {
        let run_dir = dir.join(&cell.id);
        if let Some(place) = place(cell, &run_dir) {
            rows.push((cell, rows_of_run(&place.of(&run_dir), &run_dir)?));
        }
    }
    if rows.is_empty() {
        bail!("the sweep was interrupted before its first run ended");
    }
    let step_of = |cell: &Cell| {
        steps
            .values
            .iter()
            .position(|v| v.join(",") == cell.labels[1].1)
    };
    rows.sort_by_key(|(cell, _)| {
        (
            step_of(cell),
            cells.iter().position(|c| c.labels[0] == cell.labels[0]),
            cell.round,
        )
    });
    let rows: Vec<SweepRow> = rows.into_iter().flat_map(|(_, rows)| rows).collect();
    let title = format!(
        "hatshop sweep: {} by {}",
        args.run.stream.workload,
        steps.keys.join(",")
    );
    let (table, chart) = sweep::write(dir, &title, &rows, None)?;
    say!("table: {}\nchart: {}", table.display(), chart.display());
    outcome.exit(
        "run",
        dir,
        "interrupted: the sweep holds the runs that finished; the same command again resumes it",
    )
}

fn rows_of_run(place: &RunPlace, dir: &Path) -> Result<Vec<SweepRow>> {
    let summary: Summary = result_dir::seal::read_json(dir, result_dir::SUMMARY_JSON)?;
    let verify = result_dir::file(dir, result_dir::VERIFY_JSON);
    let races = if verify.exists() {
        read_json::<VerifyReport>(&verify)
            .ok()
            .filter(|v| v.raced_orders > 0)
    } else {
        None
    };
    Ok(sweep::rows_of(place, &summary, races.as_ref()))
}
