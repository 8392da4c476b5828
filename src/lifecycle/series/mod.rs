//! A series of cells (one `hatshop run`, search or `load` each) run one after another
//! into one folder, each in its own: a study's, a sweep's, `run --repeat`'s, a search
//! over several databases'. The servers they need are started once and stopped after
//! (unless found running or given by URL), a cold one warmed up; a cell that fails is
//! recorded with why and the series goes on; Ctrl-C
//! ends the cell under way, which keeps its folder. A folder that holds an
//! interrupted series of the same cells resumes it: finished cells are kept, the
//! others run again.

mod estimate;
mod order;
mod ready;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::cli::{Cli, Command};
use crate::cluster::Home;
use crate::console::note;
use crate::files::{read_json, write_json};
use crate::interrupt;
use crate::lifecycle::servers::ServerGuard;
use crate::result_dir::folder::{missing_folders, remove_if_unused};
use crate::studies::cells::{self, Cell};
use estimate::Estimate;

pub use order::in_run_order;

/// One series: where it goes and how its servers are had.
pub struct Series<'a> {
    /// What its folder's record names it: a study's name, a sweep's settings.
    pub name: &'a str,
    /// The share of its work it runs (`study --scale`), recorded beside its name.
    pub scale: f64,
    /// What it is, in messages (study, sweep, repeat, searches): its folder's record
    /// is `KIND.json`.
    pub kind: &'a str,
    pub dir: &'a Path,
    pub home: &'a Home,
    /// Install the Debian packages a server it starts is missing.
    pub install: bool,
    /// The user's own machines for a server at a size: (server, nodes, URL).
    pub server_url: &'a [(String, usize, String)],
    /// How long a server it starts or finds is loaded, unmeasured, before its first
    /// cell, at least; a server that is still cold
    /// ([`crate::result_dir::warmth::COLD_FOR_S`]) is warmed until it is not, whatever
    /// this says.
    pub warm_up: Duration,
    /// Whether a cell that fails before any cell has run ends the series with its
    /// error (a database that cannot be reached fails every cell alike).
    pub first_failure_ends: bool,
}

/// What a command says as its series goes.
pub trait Watch {
    /// Before the first cell: the cells, and how many an earlier attempt finished.
    fn starting(&self, _cells: &[Cell], _kept: usize) {}
    /// Before cell `i` of `n` (from 1), with the time left as words.
    fn before(&self, _i: usize, _n: usize, _cell: &Cell, _left: &str) {}
    /// After a cell that ran, its folder at `dir`.
    fn after(&self, _cell: &Cell, _dir: &Path) -> Result<()> {
        Ok(())
    }
}

/// How the cells ended.
pub enum Outcome {
    Done { differing: usize, failed: usize },
    Interrupted,
}

impl Outcome {
    /// How the command ends: success, one line counting the `noun`s (run, cell,
    /// search) that failed or found differences (see `see`), or interrupted with
    /// `interrupted` said.
    pub fn exit(self, noun: &str, see: &Path, interrupted: &str) -> Result<ExitCode> {
        match self {
            Outcome::Done {
                differing: 0,
                failed: 0,
            } => Ok(ExitCode::SUCCESS),
            Outcome::Done { differing, failed } => bail!(
                "{}: see {}",
                [
                    (failed, "failed"),
                    (differing, "found differences in verify")
                ]
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, what)| crate::numbers::counted(*n as u64, noun) + " " + what)
                .collect::<Vec<_>>()
                .join(", "),
                see.display()
            ),
            Outcome::Interrupted => {
                note!("{interrupted}");
                Ok(ExitCode::from(interrupt::EXIT_CODE as u8))
            }
        }
    }
}

/// The series' record in its folder: what it is, at which scale, and the command each
/// of its cells runs.
#[derive(Debug, Serialize, Deserialize)]
struct SeriesRecord {
    study: String,
    scale: f64,
    /// Cell id → its command, as the page shows it.
    #[serde(default)]
    commands: BTreeMap<String, String>,
}

impl<'a> Series<'a> {
    /// The series of a command that is not a study (a sweep, a repeat, a search) into
    /// `dir`: no warm-up of its own (a server it starts is still warmed until it is
    /// not cold), nothing installed, and a first cell that fails ends it, as a
    /// database that cannot be reached would fail every cell.
    pub fn of_command(kind: &'a str, name: &'a str, dir: &'a Path, home: &'a Home) -> Series<'a> {
        Series {
            name,
            scale: 1.0,
            kind,
            dir,
            home,
            install: false,
            server_url: &[],
            warm_up: Duration::ZERO,
            first_failure_ends: true,
        }
    }

    /// Its folder's record: what it is and the command of each cell.
    pub fn record(&self) -> std::path::PathBuf {
        self.dir.join(format!("{}.json", self.kind))
    }

    /// Makes the folder and takes its lock, or checks that it holds this series at this
    /// scale. A cell whose command has changed since it ran (a newer hatshop) runs
    /// again.
    fn claim_folder(&self, cells: &[Cell]) -> Result<()> {
        let dir = self.dir;
        let record = SeriesRecord {
            study: self.name.to_string(),
            scale: self.scale,
            commands: cells.iter().map(|c| (c.id.clone(), c.shown())).collect(),
        };
        let path = self.record();
        let kind = self.kind;
        if path.exists() {
            let found: SeriesRecord = read_json(&path)?;
            if found.study != record.study || found.scale != record.scale {
                let scale = if found.scale == 1.0 {
                    String::new()
                } else {
                    format!(" at scale {}", found.scale)
                };
                bail!(
                    "{} holds {kind} {}{scale}: resume it with the same command, or give \
                     another --out",
                    dir.display(),
                    found.study,
                );
            }
            crate::folder_lock::claim_existing(dir, kind)?;
            for cell in cells {
                let cell_dir = dir.join(&cell.id);
                if found.commands.get(&cell.id) != record.commands.get(&cell.id)
                    && cell_dir.exists()
                {
                    note!(
                        "{}: its command has changed since it ran; it runs again",
                        cell.id
                    );
                    std::fs::remove_dir_all(&cell_dir)
                        .with_context(|| format!("cannot clear {}", cell_dir.display()))?;
                }
            }
            return write_json(&path, &record);
        }
        crate::result_dir::folder::refuse_url_as_folder(dir, kind)?;
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        crate::folder_lock::claim_empty(dir, kind)?;
        write_json(&path, &record)
    }

    /// Claims the folder, then runs the cells in their order, those an earlier attempt
    /// finished kept. `side_by_side`: their servers stay up together (see
    /// [`in_run_order`]). A series whose first failure ends it leaves no folder behind
    /// when no cell made one.
    pub async fn run(
        &self,
        cells: &[Cell],
        side_by_side: bool,
        watch: &dyn Watch,
    ) -> Result<Outcome> {
        let made = missing_folders(self.dir);
        self.claim_folder(cells)?;
        // Boxed: a cell's run is a deep future, and a series may hold one in each cell.
        let outcome = Box::pin(self.run_cells(cells, side_by_side, watch)).await;
        if outcome.is_err()
            && self.first_failure_ends
            && !cells.iter().any(|c| self.dir.join(&c.id).exists())
        {
            let _ = std::fs::remove_file(self.record());
            remove_if_unused(self.dir, &made);
        }
        outcome
    }

    async fn run_cells(
        &self,
        cells: &[Cell],
        side_by_side: bool,
        watch: &dyn Watch,
    ) -> Result<Outcome> {
        let _listening = interrupt::Listening::new();
        let kept = cells
            .iter()
            .filter(|c| c.finished(&self.dir.join(&c.id)))
            .count();
        watch.starting(cells, kept);
        let mut clock = Estimate::new(cells);
        let mut servers: Vec<ServerGuard> = Vec::new();
        let (mut differing, mut failed, mut ran) = (0, 0, 0);
        for (i, cell) in cells.iter().enumerate() {
            let cell_dir = self.dir.join(&cell.id);
            if cell.finished(&cell_dir) {
                clock.skip(cell);
                continue;
            }
            if interrupt::requested() {
                return Ok(Outcome::Interrupted);
            }
            // The estimate counts server starts too: they are part of what is left.
            let began = Instant::now();
            let url = match ready::ready_server(self, &mut servers, side_by_side, cell).await {
                Ok(Some(url)) => url,
                Ok(None) => return Ok(Outcome::Interrupted),
                Err(e) => return Err(e),
            };
            watch.before(i + 1, cells.len(), cell, &clock.left());
            let (code, differs) = match run_cell(cell, &url, &cell_dir, self.home).await {
                Ok(Some(ended)) => ended,
                Ok(None) => return Ok(Outcome::Interrupted),
                Err(_) if interrupt::requested() => return Ok(Outcome::Interrupted),
                Err(e) if ran == 0 && kept == 0 && self.first_failure_ends => return Err(e),
                // One cell that cannot run (a ring not answering at its consistency)
                // is recorded with why, and the series goes on to the next.
                Err(e) => {
                    let why = format!("{e:#}");
                    note!("{}: failed ({why}); the others go on", cell.id);
                    crate::files::write_atomic(&cells::failure_file(&cell_dir), why.as_bytes())?;
                    failed += 1;
                    clock.done(cell, began.elapsed());
                    continue;
                }
            };
            ran += 1;
            clock.done(cell, began.elapsed());
            watch.after(cell, &cell_dir)?;
            if differs {
                differing += 1;
                note!("{}: verify found differences", cell.id);
            }
            if code == ExitCode::from(interrupt::EXIT_CODE as u8) || interrupt::requested() {
                return Ok(Outcome::Interrupted);
            }
        }
        Ok(Outcome::Done { differing, failed })
    }
}

/// Runs one cell into `cell_dir` (cleared first: a cell cut short earlier starts
/// over): its exit code and whether verify found differences; `None` when interrupted
/// before it began measuring (such a run leaves no folder).
async fn run_cell(
    cell: &Cell,
    url: &str,
    cell_dir: &Path,
    home: &Home,
) -> Result<Option<(ExitCode, bool)>> {
    if cell_dir.exists() {
        std::fs::remove_dir_all(cell_dir)
            .with_context(|| format!("cannot clear {}", cell_dir.display()))?;
    }
    let _ = std::fs::remove_file(cells::failure_file(cell_dir));
    if let Some(faults) = &cell.faults {
        crate::files::write_atomic(&cells::faults_file(cell_dir), faults.as_bytes())?;
    }
    let argv = cell.argv(url, cell_dir, &home.root);
    match run_one(&argv).await {
        Ok(ended) => Ok(Some(ended)),
        Err(_) if interrupt::requested() => Ok(None),
        Err(e) => Err(e.context(format!("cell {} ({})", cell.id, cell.name()))),
    }
}

/// One cell's command: its exit code, and whether verify found differences.
async fn run_one(argv: &[String]) -> Result<(ExitCode, bool)> {
    let cli = Cli::from_command_line(argv).map_err(|e| anyhow::anyhow!("{e}"))?;
    match &cli.command {
        // Boxed: a search over several databases is itself a series.
        Command::Run(args) if args.find_max => Box::pin(crate::lifecycle::find_max::run(args))
            .await
            .map(|code| (code, false)),
        Command::Run(args) => crate::lifecycle::run::execute_in_series(args).await,
        Command::Load(args) => crate::lifecycle::bulk_load::run(args)
            .await
            .map(|code| (code, false)),
        _ => unreachable!("a cell runs, searches or loads"),
    }
}
