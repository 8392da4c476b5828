//! `hatshop run --repeat N`: the same run N times, each a cell of a series
//! (`lifecycle::series`, as a study's are) going on from the tables the one before
//! left (one load) and verified, into
//! `repeat-1/ … repeat-N/` of one folder; then its `summary.json` and a table with
//! every figure as median (min–max) over the repeats. Ctrl-C ends the repeat under way
//! (its folder is complete, as any interrupted run's) and summarises the repeats that
//! ran; the same command again resumes the repeats.

use std::path::Path;

use anyhow::{Result, bail};

use crate::cli::RunArgs;
use crate::cluster::Home;
use crate::config::{RunConfig, refuse_bound_without_search};
use crate::console::{note, say};
use crate::files::{read_json, write_json};
use crate::lifecycle::run::{
    EXIT_INTERRUPTED, EXIT_THRESHOLD_BROKEN, EXIT_TOO_MANY_ERRORS, VerifyDifferences,
    errors_over_bound, load_note, refuse_export_in_series, thresholds_broken, verified_note,
};
use crate::lifecycle::series::{Outcome, Series, Watch};
use crate::numbers::{format_us, thousands};
use crate::report::loaded_run::LoadedRun;
use crate::report::repeats;
use crate::report::repeats_page;
use crate::result_dir::folder::unique_dir;
use crate::result_dir::{self, RunRecord};
use crate::stats::Summary;
use crate::studies::cells::{Cell, ServerNeed, Verb};

/// The flags of `run --repeat` that are not each repeat's: each gets its own.
const NOT_HANDED_ON: &[&str] = &["db", "out", "repeat", "home", "quiet", "recreate", "verify"];

/// `hatshop run --repeat N`: the same run N times into repeat-K folders, and the
/// medians and spread of their summaries.
pub async fn run(args: &RunArgs) -> Result<std::process::ExitCode> {
    refuse_bound_without_search(args)?;
    refuse_export_in_series(args)?;
    let (probe, dir) = prepare(args)?;
    let home = Home::resolve(args.home.as_deref())?;
    let url = args
        .db
        .first()
        .cloned()
        .unwrap_or_else(|| crate::db::DEFAULT_URL.to_string());
    let flags = crate::cli::given::flags_without(&args.argv, "run", NOT_HANDED_ON);
    let cells: Vec<Cell> = (1..=args.repeat as u64)
        .map(|i| Cell {
            id: format!("repeat-{i}"),
            part: "repeat".into(),
            labels: vec![
                ("store".into(), probe.db.scheme().to_string()),
                ("repeat".into(), i.to_string()),
            ],
            need: ServerNeed::given(probe.db.scheme(), &url),
            verb: Verb::Run,
            args: flags.clone(),
            work: 1,
            faults: None,
            round: i,
        })
        .collect();
    let name = format!("{} × {}", args.repeat, probe.workload_name());
    let series = Series::of_command("repeat", &name, &dir, &home);
    let said = Said {
        header: format!(
            "{} × {} on {} into {}",
            args.repeat,
            probe.workload_name(),
            probe.db.scheme(),
            dir.display()
        ),
        of: args.repeat,
    };
    let outcome = series.run(&cells, false, &said).await?;
    // Each repeat ran without --max-errors (a series); every one, kept from an
    // earlier attempt or run now, is held to it and to the thresholds here.
    let (repeated, broke) = gathered(&cells, &dir, &outcome, probe.max_errors)?;
    let code = write_up(&dir, repeated, args.repeat)?;
    Ok(held_to_the_bounds(code, &broke.errors, &broke.thresholds))
}

/// What `run --repeat` says as it goes: a line per repeat.
struct Said {
    header: String,
    of: usize,
}

impl Watch for Said {
    fn starting(&self, cells: &[Cell], kept: usize) {
        note!("{}", self.header);
        if kept > 0 {
            note!(
                "{kept} of the {} repeats finished earlier, kept",
                cells.len()
            );
        }
    }

    fn after(&self, cell: &Cell, dir: &Path) -> Result<()> {
        let summary: Summary = result_dir::seal::read_json(dir, result_dir::SUMMARY_JSON)?;
        let record = result_dir::load_complete(dir)?;
        say_repeat(cell.round as usize, self.of, &summary, &record, dir);
        Ok(())
    }
}

/// The repeats' folders read back, in order, and whether the series was interrupted
/// or found differences; and each repeat held to `--max-errors` (`bound`) and its
/// thresholds.
fn gathered(
    cells: &[Cell],
    dir: &Path,
    outcome: &Outcome,
    bound: Option<f64>,
) -> Result<(Repeated, Broke)> {
    let mut repeated = Repeated::default();
    let mut broke = Broke::default();
    for cell in cells {
        let run_dir = dir.join(&cell.id);
        let Ok(record) = result_dir::load_complete(&run_dir) else {
            continue;
        };
        let summary: Summary = result_dir::seal::read_json(&run_dir, result_dir::SUMMARY_JSON)?;
        let verify = result_dir::file(&run_dir, result_dir::VERIFY_JSON);
        if read_json::<crate::verify::VerifyReport>(&verify).is_ok_and(|v| !v.is_exact()) {
            repeated.differing.push(run_dir.display().to_string());
        }
        let i = cell.round as usize;
        broke.held_to(i, bound, &summary, &record);
        repeated.take(i, summary, &record);
    }
    repeated.interrupted = matches!(outcome, Outcome::Interrupted);
    Ok((repeated, broke))
}

/// `repeat 2/3: 1.02 s, 1,960 ops/s, mean 510 µs, p99 2,004 µs, 0 errors`.
fn say_repeat(i: usize, of: usize, summary: &Summary, record: &RunRecord, run_dir: &Path) {
    let cut_short = if record.ran_its_plan() {
        String::new()
    } else {
        format!(" ({}: left out of the medians)", record.status)
    };
    say!(
        "repeat {i}/{of}: {:.2} s, {:.0} ops/s, mean {} µs, p99 {} µs, {} errors{}{}{cut_short}",
        summary.elapsed_s,
        summary.throughput_ops_s,
        format_us(summary.overall.mean_us),
        format_us(summary.overall.percentile("p99")),
        summary.errors,
        load_note(
            record
                .went_on_from
                .as_ref()
                .map(|from| from.folder.as_str())
        ),
        verified_note(run_dir)
    );
}

/// The error lines of repeats over `--max-errors`, and of those that broke a
/// `--threshold`.
#[derive(Default)]
struct Broke {
    errors: Vec<String>,
    thresholds: Vec<String>,
}

impl Broke {
    /// Repeat `i` held to `bound` and to its thresholds.
    fn held_to(&mut self, i: usize, bound: Option<f64>, summary: &Summary, record: &RunRecord) {
        if let Some(over) = errors_over_bound(bound, summary) {
            self.errors.push(format!("error: repeat-{i}: {over}\n"));
        }
        if let Some(broken) = thresholds_broken(record) {
            let named = broken.replace("error: ", &format!("error: repeat-{i}: "));
            self.thresholds.push(named);
        }
    }
}

/// A series that otherwise succeeded, with repeats over `--max-errors` or breaking a
/// `--threshold`: each said, and the exit of a run that did so (errors first).
fn held_to_the_bounds(
    code: std::process::ExitCode,
    over_bound: &[String],
    thresholds: &[String],
) -> std::process::ExitCode {
    if code != std::process::ExitCode::SUCCESS {
        return code;
    }
    for line in over_bound.iter().chain(thresholds) {
        crate::console::err(line);
    }
    if !over_bound.is_empty() {
        std::process::ExitCode::from(EXIT_TOO_MANY_ERRORS)
    } else if !thresholds.is_empty() {
        std::process::ExitCode::from(EXIT_THRESHOLD_BROKEN)
    } else {
        code
    }
}

/// The run's configuration, checked whole, and the folder the repeats go in.
fn prepare(args: &RunArgs) -> Result<(RunConfig, std::path::PathBuf)> {
    if args.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    if args.shard.is_some() {
        crate::cli::usage_bail!(
            "--repeat with --shard: each repeat needs fresh tables from `hatshop prepare`; repeat the sharded run by hand"
        );
    }
    let mut template = args.clone();
    template.repeat = 1;
    // The whole configuration must be valid before anything runs.
    let probe = RunConfig::from_args(&template)?;
    let dir = match &args.out {
        Some(dir) => dir.clone(),
        None => unique_dir(
            Path::new("results"),
            &format!("{}-x{}", probe.run_id, args.repeat),
        ),
    };
    Ok((probe, dir))
}

/// What the repeats that ran left.
#[derive(Default)]
struct Repeated {
    summaries: Vec<Summary>,
    runs: Vec<String>,
    /// Repeats cut short, with how: kept on disk, left out of the figures.
    left_out: Vec<String>,
    differing: Vec<String>,
    interrupted: bool,
}

impl Repeated {
    /// Repeat `i`'s summary among the figures, or left out where it was cut short.
    fn take(&mut self, i: usize, summary: Summary, record: &RunRecord) {
        if record.ran_its_plan() {
            self.summaries.push(summary);
            self.runs.push(format!("repeat-{i}"));
        } else {
            self.left_out.push(format!(
                "repeat-{i} ({} after {} operations)",
                record.status,
                thousands(record.summarised_ops())
            ));
        }
    }
}

/// The summary of the repeats, its table, and how the command ends.
fn write_up(dir: &Path, repeated: Repeated, repeat: usize) -> Result<std::process::ExitCode> {
    let Repeated {
        summaries,
        runs,
        left_out,
        differing,
        interrupted,
    } = repeated;
    if summaries.is_empty() {
        note!(
            "no repeat ran whole ({}), so there are no medians; each repeat's folder in {} \
             holds what it ran",
            left_out.join(", "),
            dir.display()
        );
        return Ok(if interrupted {
            std::process::ExitCode::from(EXIT_INTERRUPTED)
        } else {
            std::process::ExitCode::FAILURE
        });
    }
    let spread = repeats::summarize(&summaries, runs, left_out);
    write_json(&result_dir::file(dir, result_dir::SUMMARY_JSON), &spread)?;
    result_dir::seal::write(dir, &[result_dir::SUMMARY_JSON])?;
    crate::console::out(&repeats::render(&spread));
    let first = LoadedRun::load(&dir.join(&spread.runs[0])).ok();
    let tables = repeats_page::tables_said(dir, &spread);
    let page = repeats_page::page(&spread, &summaries, first.as_ref(), &tables)
        .write(dir, repeats_page::TITLE)?;
    say!("results: {}", dir.display());
    say!("report: {}", page.display());
    say!(
        "compare: hatshop compare {} OTHER (tests across repeats when both have them)",
        dir.display()
    );
    if !differing.is_empty() {
        say!("verify found differences in: {}", differing.join(", "));
        return Err(VerifyDifferences.into());
    }
    if interrupted {
        note!(
            "interrupted in repeat {} of {}; the summary covers the {} that ran whole",
            summaries.len() + spread.left_out.len(),
            repeat,
            summaries.len()
        );
        return Ok(std::process::ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(std::process::ExitCode::SUCCESS)
}
