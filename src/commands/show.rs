//! `hatshop show DIR…`: a saved run's table printed again, as the run printed it when it
//! ended, from its folder alone (latte's `show`); a comparison's folder, its table.

use anyhow::Result;

use crate::cli::ShowArgs;
use crate::console::say;
use crate::report::compare;
use crate::report::loaded_run::LoadedRun;
use crate::report::repeats::{self, RepeatSummary};
use crate::report::{run_text, saved_percentiles};
use crate::result_dir::{self, SUMMARY_JSON};
use crate::stats::Summary;

/// Prints each folder's text, a blank line between two; `--percentiles` picks a run's
/// columns, else the run's own (a repeat folder's table has its own).
pub fn run(args: &ShowArgs) -> Result<()> {
    for (i, dir) in args.result_dirs.iter().enumerate() {
        if i > 0 {
            say!("");
        }
        say!("{}", dir.display());
        // A comparison's folder prints its table again, from its runs' folders.
        if let Some(record) = compare::read_record(dir) {
            let runs = record?
                .runs
                .iter()
                .map(|run| LoadedRun::load_checked(run))
                .collect::<Result<Vec<_>>>()?;
            crate::console::out(&compare::terminal(&runs));
            continue;
        }
        // A --repeat folder keeps its medians (min–max) in its own summary.json, and
        // prints them as the repeats did when they ended.
        if repeats::repeat_dirs(dir).is_some() {
            let spread: RepeatSummary = result_dir::seal::read_json(dir, SUMMARY_JSON)?;
            crate::console::out(&repeats::render(&spread));
            continue;
        }
        let record = result_dir::load_complete(dir)?;
        let mut summary: Summary = result_dir::seal::read_json(dir, SUMMARY_JSON)?;
        let percentiles = match &args.percentiles {
            Some(list) => list.0.clone(),
            None => summary
                .run
                .as_ref()
                .map(|of| of.table_percentiles())
                .unwrap_or_default(),
        };
        saved_percentiles::fill(&mut summary, &percentiles, dir)?;
        let width = crate::console::text_width().filter(|_| !args.wide);
        crate::console::out(&run_text::render(&record, &summary, &percentiles, width));
    }
    Ok(())
}
