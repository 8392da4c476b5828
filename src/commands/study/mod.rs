//! `hatshop study NAME|FILE`: one study, a built-in one (the published studies hatshop
//! reproduces) or a file of the user's. Its cells (one `hatshop run` or `load` each)
//! run in one folder, each in its own, grouped by the server they need (started and
//! stopped by the study unless one runs already); each run is verified; then
//! `study.html` draws the study's figures from them. A folder that holds an
//! interrupted study resumes it: finished cells are kept, the others run again.
//! `hatshop study show NAME` prints a built-in study's file, to copy.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::cli::{StudyArgs, StudyShow};
use crate::cluster::Home;
use crate::console::{note, say};
use crate::lifecycle::series::{Series, Watch, in_run_order};
use crate::report::study::StudyView;
use crate::report::table::{self, Column, Table, terminal};
use crate::studies::cells::Cell;
use crate::studies::{self as catalog, Study};

/// How long every server is loaded, unmeasured, before its first cell, at least: a JVM
/// compiles its hot code and MariaDB fills its buffer pool, and two stores compared
/// must both be measured as they run, not as they start. The same for every server,
/// at every scale; one started less than 45 s before is warmed until it has been up
/// that long (`lifecycle::series`).
const WARM_UP: Duration = Duration::from_secs(20);

/// `hatshop study --list`: the built-in studies, each with the study it reproduces.
fn list() -> Result<()> {
    let mut table = Table::new(vec![
        Column::text("study", "study"),
        Column::text("what it asks", "title"),
        Column::text("reproduces", "seed"),
    ]);
    let rows = catalog::BUILT_IN
        .iter()
        .map(|(name, _)| {
            let study = catalog::open(name)?;
            Ok(vec![
                table::Cell::text(study.name),
                table::Cell::text(study.title),
                table::Cell::text(study.seed),
            ])
        })
        .collect::<Result<_>>()?;
    table.section(rows);
    crate::console::out(&terminal(&table));
    Ok(())
}

/// `hatshop study`.
pub async fn run(args: &StudyArgs) -> Result<ExitCode> {
    if args.list {
        list()?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(StudyShow::Show { name }) = &args.show {
        return show(name);
    }
    let name = args.name.as_deref().unwrap_or_default();
    let study = catalog::open(name)?;
    let study = &study;
    if !(args.scale > 0.0 && args.scale <= 1.0) {
        bail!(
            "--scale {}: give a fraction of the study's work above 0 and at most 1 (e.g. 0.05)",
            args.scale
        );
    }
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(format!("study-{}", study.name)));
    let home = Home::resolve(args.home.as_deref())?;
    let (cells, side_by_side) = in_run_order(
        study
            .cells(args.scale)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?,
    );
    if args.dry_run {
        for cell in &cells {
            say!("{}: {}", cell.id, cell.shown());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let series = Series {
        name: &study.name,
        scale: args.scale,
        kind: "study",
        dir: &dir,
        home: &home,
        install: args.install,
        server_url: &args.server_url,
        warm_up: WARM_UP,
        first_failure_ends: false,
    };
    let watch = Said {
        study,
        dir: &dir,
        side_by_side,
    };
    let outcome = series.run(&cells, side_by_side, &watch).await;
    // The page is written whatever happened, from the cells that finished.
    let page = write_page(study, &cells, &dir, args.scale)?;
    let outcome = outcome?;
    say!("{}", page.display());
    outcome.exit(
        "cell",
        &page,
        "interrupted: the finished cells are kept; run the same command again to resume",
    )
}

/// `hatshop study show NAME`: a built-in study's file, as it is built in.
fn show(name: &str) -> Result<ExitCode> {
    let Some(text) = catalog::built_in(name) else {
        let names = catalog::BUILT_IN.iter().map(|(n, _)| *n);
        bail!(
            "no built-in study named '{name}'{}: they are {}",
            crate::suggest::did_you_mean(name, names.clone()),
            names.collect::<Vec<_>>().join(", ")
        );
    };
    say!("{}", text.trim_end());
    Ok(ExitCode::SUCCESS)
}

/// What a study says as it goes.
struct Said<'a> {
    study: &'a Study,
    dir: &'a Path,
    side_by_side: bool,
}

impl Watch for Said<'_> {
    /// What the study runs, and how many cells an earlier run of it finished.
    fn starting(&self, cells: &[Cell], kept: usize) {
        note!(
            "study {}: {} cells into {}{}",
            self.study.name,
            cells.len(),
            self.dir.display(),
            if kept > 0 {
                format!(" ({kept} finished earlier, kept)")
            } else {
                String::new()
            }
        );
        if self.side_by_side {
            note!(
                "its repeats span several servers: they stay up side by side, and their rounds take turns"
            );
        }
    }

    fn before(&self, i: usize, n: usize, cell: &Cell, left: &str) {
        note!("[{i}/{n}] {}{left}", cell.name());
    }
}

/// study.html from whatever the cells' folders hold.
fn write_page(study: &Study, cells: &[Cell], dir: &Path, scale: f64) -> Result<PathBuf> {
    let results: Vec<_> = cells.iter().map(|c| c.result(dir)).collect();
    let slo = study.slo();
    for line in crate::report::study::verdict_said(&slo, &results, dir) {
        say!("{line}");
    }
    let view = StudyView {
        name: &study.name,
        title: &study.title,
        question: &study.question,
        seed: &study.seed,
        seed_machine: &study.seed_machine,
        seed_cores: study.seed_cores,
        scale,
        caveats: &study.caveats,
        slo: &slo,
        setup: &study.setup,
        parts: &study.parts,
        figures: &study.figures,
        cells: &results,
        dir,
    };
    crate::report::study::write(&view)
}
