//! `hatshop study NAME|FILE`: one study, a built-in one (the published studies hatshop
//! reproduces) or a file of the user's. Its cells (one `hatshop run` or `load` each)
//! run in one folder, each in its own, grouped by the server they need (started and
//! stopped by the study unless one runs already); each run is verified; then
//! `study.html` draws the study's figures from them. A folder that holds an
//! interrupted study resumes it: finished cells are kept, the others run again.
//! `hatshop study show NAME` prints a built-in study's file, to copy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::cli::{Cli, Command, StudyArgs, StudyShow};
use crate::cluster::Home;
use crate::console::{note, say};
use crate::files::{read_json, write_json};
use crate::interrupt;
use crate::lifecycle::servers::ServerGuard;
use crate::report::study::StudyView;
use crate::studies::cells::{self, Cell};
use crate::studies::{self as catalog, Study};

/// `study.json`: which study a folder holds, at which scale, and the command each of
/// its cells runs.
#[derive(Debug, Serialize, Deserialize)]
struct StudyRecord {
    study: String,
    scale: f64,
    /// Cell id → its command, as the page shows it.
    #[serde(default)]
    commands: BTreeMap<String, String>,
}

const STUDY_JSON: &str = "study.json";

/// How long every fresh server is loaded, unmeasured, before its first cell: a JVM
/// compiles its hot code and MariaDB fills its buffer pool, and two stores compared
/// must both be measured as they run, not as they start. The same for every server,
/// at every scale.
const WARM_UP: Duration = Duration::from_secs(20);

/// `hatshop study`.
pub async fn run(args: &StudyArgs) -> Result<ExitCode> {
    if args.list {
        for (name, _) in catalog::BUILT_IN {
            let study = catalog::open(name)?;
            say!("{:<22} {} ({})", study.name, study.title, study.seed);
        }
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
    claim_folder(&dir, study, args.scale, &cells)?;
    let outcome = Study::run_cells(study, &cells, side_by_side, &dir, &home, args).await;
    // The page is written whatever happened, from the cells that finished.
    let page = write_page(study, &cells, &dir, args.scale)?;
    let outcome = outcome?;
    say!("{}", page.display());
    match outcome {
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
            .map(|(n, what)| format!("{n} cell{} {what}", if *n == 1 { "" } else { "s" }))
            .collect::<Vec<_>>()
            .join(", "),
            page.display()
        ),
        Outcome::Interrupted => {
            note!("interrupted: the finished cells are kept; run the same command again to resume");
            Ok(ExitCode::from(interrupt::EXIT_CODE as u8))
        }
    }
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

/// Makes the study's folder, or checks that it holds this study at this scale. A cell
/// whose command has changed since it ran (a newer hatshop) runs again.
fn claim_folder(dir: &Path, study: &Study, scale: f64, cells: &[Cell]) -> Result<()> {
    let record = StudyRecord {
        study: study.name.clone(),
        scale,
        commands: cells.iter().map(|c| (c.id.clone(), c.shown())).collect(),
    };
    let path = dir.join(STUDY_JSON);
    if path.exists() {
        let found: StudyRecord = read_json(&path)?;
        if found.study != record.study || found.scale != record.scale {
            bail!(
                "{} holds study {} at scale {}: resume it with the same name and --scale, \
                 or give another --out",
                dir.display(),
                found.study,
                found.scale
            );
        }
        for cell in cells {
            let cell_dir = dir.join(&cell.id);
            if found.commands.get(&cell.id) != record.commands.get(&cell.id) && cell_dir.exists() {
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
    if dir.exists()
        && std::fs::read_dir(dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .next()
            .is_some()
    {
        bail!(
            "{} is not empty and holds no study: give an empty or new folder with --out",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_json(&path, &record)
}

/// The order the cells run in. Where repeats span several servers that can run side by
/// side (no two of one kind at other sizes or settings), the servers stay up together
/// and their rounds take turns (A B C, A B C), so that a burst of the host's load lands
/// on every candidate alike; otherwise the cells of one server run together, each
/// server started once, one after the other.
fn in_run_order(cells: Vec<Cell>) -> (Vec<Cell>, bool) {
    let same = |a: &Cell, b: &Cell| {
        a.need.server == b.need.server && a.need.nodes == b.need.nodes && a.need.set == b.need.set
    };
    let clash = cells.iter().any(|a| {
        cells
            .iter()
            .any(|b| a.need.server == b.need.server && !same(a, b))
    });
    let rounds_span_servers = cells
        .iter()
        .filter(|c| c.round > 1)
        .any(|a| cells.iter().any(|b| b.round == a.round && !same(a, b)));
    if clash || !rounds_span_servers {
        return (by_server(cells), false);
    }
    let last = cells.iter().map(|c| c.round).max().unwrap_or(1);
    let mut ordered = Vec::with_capacity(cells.len());
    for round in 1..=last {
        let of_round = cells.iter().filter(|c| c.round == round).cloned().collect();
        ordered.extend(by_server(of_round));
    }
    (ordered, true)
}

/// The cells with those of one server together, each group where its first cell
/// stood.
fn by_server(cells: Vec<Cell>) -> Vec<Cell> {
    let mut groups: Vec<Vec<Cell>> = Vec::new();
    for cell in cells {
        match groups.iter_mut().find(|g| {
            g[0].need.server == cell.need.server
                && g[0].need.nodes == cell.need.nodes
                && g[0].need.set == cell.need.set
        }) {
            Some(group) => group.push(cell),
            None => groups.push(vec![cell]),
        }
    }
    groups.into_iter().flatten().collect()
}

/// How the cells ended.
enum Outcome {
    Done { differing: usize, failed: usize },
    Interrupted,
}

impl Study {
    async fn run_cells(
        &self,
        cells: &[Cell],
        side_by_side: bool,
        dir: &Path,
        home: &Home,
        args: &StudyArgs,
    ) -> Result<Outcome> {
        let _listening = interrupt::Listening::new();
        self.announce(cells, dir);
        if side_by_side {
            note!(
                "its repeats span several servers: they stay up side by side, and their rounds take turns"
            );
        }
        let mut clock = Estimate::new(cells);
        let mut servers: Vec<ServerGuard> = Vec::new();
        let (mut differing, mut failed) = (0, 0);
        for (i, cell) in cells.iter().enumerate() {
            let cell_dir = dir.join(&cell.id);
            if cell.finished(&cell_dir) {
                clock.skip(cell);
                continue;
            }
            if interrupt::requested() {
                return Ok(Outcome::Interrupted);
            }
            // The estimate counts server starts too: they are part of what is left.
            let began = Instant::now();
            let Some(url) = ready_server(&mut servers, side_by_side, cell, dir, home, args).await?
            else {
                return Ok(Outcome::Interrupted);
            };
            note!(
                "[{}/{}] {}{}",
                i + 1,
                cells.len(),
                cell.name(),
                clock.left()
            );
            let (code, differs) = match run_cell(cell, &url, &cell_dir, home).await {
                Ok(Some(ended)) => ended,
                Ok(None) => return Ok(Outcome::Interrupted),
                Err(_) if interrupt::requested() => return Ok(Outcome::Interrupted),
                // One cell that cannot run (a ring not answering at its consistency)
                // is recorded with why, and the study goes on to the next.
                Err(e) => {
                    let why = format!("{e:#}");
                    note!("{}: failed ({why}); the study goes on", cell.id);
                    crate::files::write_atomic(&cells::failure_file(&cell_dir), why.as_bytes())?;
                    failed += 1;
                    clock.done(cell, began.elapsed());
                    continue;
                }
            };
            clock.done(cell, began.elapsed());
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

    /// Says what the study runs, and how many cells an earlier run of it finished.
    fn announce(&self, cells: &[Cell], dir: &Path) {
        let kept = cells
            .iter()
            .filter(|c| c.finished(&dir.join(&c.id)))
            .count();
        note!(
            "study {}: {} cells into {}{}",
            self.name,
            cells.len(),
            dir.display(),
            if kept > 0 {
                format!(" ({kept} finished earlier, kept)")
            } else {
                String::new()
            }
        );
    }
}

/// Makes a server of `servers` the one `cell` needs, within its budget, warmed up, and
/// every server settled (no background work left from the cells before), and gives
/// the cell's URL; `None` when interrupted. One after the other (`side_by_side`
/// false), the last server is stopped before the next starts: they share the cores.
/// Side by side, a server gives way only to one of its own kind.
async fn ready_server(
    servers: &mut Vec<ServerGuard>,
    side_by_side: bool,
    cell: &Cell,
    dir: &Path,
    home: &Home,
    args: &StudyArgs,
) -> Result<Option<String>> {
    let need = &cell.need;
    let given = need.url.as_deref().or_else(|| {
        args.server_url
            .iter()
            .find(|(name, nodes, _)| *name == need.server && *nodes == need.nodes)
            .map(|(_, _, url)| url.as_str())
    });
    let found = servers
        .iter()
        .position(|s| s.serves(&need.server, need.nodes, &need.set) && s.is_at(given));
    let at = match found {
        Some(at) => at,
        None => {
            // Stopped in the order they started.
            let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(servers)
                .into_iter()
                .partition(|s| !side_by_side || s.name() == need.server);
            drop(gone);
            *servers = kept;
            let found = ServerGuard::find_or_start(
                home,
                &need.server,
                need.nodes,
                &need.set,
                args.install,
                given,
            );
            match found.await {
                Ok(started) => servers.push(started),
                Err(_) if interrupt::requested() => return Ok(None),
                Err(e) => return Err(e),
            }
            servers.len() - 1
        }
    };
    let serving = &mut servers[at];
    serving.budget(need.budget).await?;
    let url = serving.url_with(&need.query);
    if !serving.warmed {
        if !warm_up(serving.name(), cell, &url, dir, home, WARM_UP).await {
            return Ok(None);
        }
        serving.warmed = true;
    }
    // A server idle beside this cell may still be compacting what its own cell left.
    for server in servers.iter() {
        server.settle().await;
    }
    if interrupt::requested() {
        return Ok(None);
    }
    Ok(Some(url))
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

/// Warms a fresh server up with `cell`'s own load for `length`, unmeasured, into a
/// folder thrown away after; false when interrupted. A warm-up that fails is said and
/// the cells go on: they measure what they find.
async fn warm_up(
    server: &str,
    cell: &Cell,
    url: &str,
    dir: &Path,
    home: &Home,
    length: Duration,
) -> bool {
    match cell.verb {
        cells::Verb::Run | cells::Verb::Search => note!(
            "warming {server} up first: {} s of the load of {}",
            length.as_secs(),
            cell.name()
        ),
        cells::Verb::Load => note!(
            "warming {server} up first: one pass of the load of {}",
            cell.name()
        ),
    }
    let scratch = dir.join(".warm-up");
    let _ = std::fs::remove_dir_all(&scratch);
    let argv = cell.warm_up_argv(url, &scratch, &home.root, length.as_secs());
    let ran = run_one(&argv).await;
    let _ = std::fs::remove_dir_all(&scratch);
    if interrupt::requested() {
        return false;
    }
    if let Err(e) = ran {
        note!("the warm-up of {server} did not run to its end ({e:#}); the cells go on");
    }
    true
}

/// One cell's command: its exit code, and whether verify found differences.
async fn run_one(argv: &[String]) -> Result<(ExitCode, bool)> {
    let cli = Cli::from_command_line(argv).map_err(|e| anyhow::anyhow!("{e}"))?;
    match &cli.command {
        Command::Run(args) if args.find_max => crate::lifecycle::find_max::run(args)
            .await
            .map(|code| (code, false)),
        Command::Run(args) => crate::lifecycle::run::execute_in_series(args).await,
        Command::Load(args) => crate::lifecycle::bulk_load::run(args)
            .await
            .map(|code| (code, false)),
        _ => unreachable!("a cell runs, searches or loads"),
    }
}

/// Time left, from the cells this attempt ran: their seconds per unit of work (server
/// starts, setup and verify included) times the work left.
struct Estimate {
    left_work: u64,
    left_cells: usize,
    spent: Duration,
    done_work: u64,
    done_cells: usize,
}

impl Estimate {
    fn new(cells: &[Cell]) -> Estimate {
        Estimate {
            left_work: cells.iter().map(|c| c.work).sum(),
            left_cells: cells.len(),
            spent: Duration::ZERO,
            done_work: 0,
            done_cells: 0,
        }
    }

    fn skip(&mut self, cell: &Cell) {
        self.left_work -= cell.work;
        self.left_cells -= 1;
    }

    fn done(&mut self, cell: &Cell, took: Duration) {
        self.skip(cell);
        self.spent += took;
        self.done_work += cell.work;
        self.done_cells += 1;
    }

    /// ", about 4 min left", once a cell has run.
    fn left(&self) -> String {
        if self.done_cells == 0 || self.done_work == 0 {
            return String::new();
        }
        let per_work = self.spent.as_secs_f64() / self.done_work as f64;
        let seconds = per_work * self.left_work as f64;
        let minutes = (seconds / 60.0).ceil().max(1.0);
        format!(", about {minutes:.0} min left")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cells_of_one_server_stand_together() {
        let study = catalog::open("hat-shop").unwrap();
        let (cells, side_by_side) = in_run_order(study.cells(0.05).unwrap());
        assert!(
            !side_by_side,
            "no round of hat-shop's repeats spans two servers"
        );
        let servers: Vec<&str> = cells.iter().map(|c| c.need.server.as_str()).collect();
        let mut changes = servers.windows(2).filter(|w| w[0] != w[1]).count();
        changes += 1;
        assert_eq!(changes, 2, "{servers:?}");
        assert!(cells.iter().all(|c| c.verb == cells::Verb::Run));
    }

    #[test]
    fn repeats_over_several_servers_take_turns_a_round_at_a_time() {
        let doc = include_str!("../../../docs/studies.md");
        let example = doc
            .split("```toml\n")
            .nth(1)
            .unwrap()
            .split("```")
            .next()
            .unwrap();
        let file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
        std::fs::write(file.path(), example).unwrap();
        let study = catalog::open(file.path().to_str().unwrap()).unwrap();
        let (cells, side_by_side) = in_run_order(study.cells(1.0).unwrap());
        assert!(side_by_side);
        let order: Vec<(u64, &str)> = cells
            .iter()
            .map(|c| (c.round, c.need.server.as_str()))
            .collect();
        // Round 1 holds the headroom searches too: each server's cells of a round
        // together, the servers in turn, round after round.
        let expected: Vec<(u64, &str)> = (1..=3)
            .flat_map(|round| {
                let each = if round == 1 { 4 } else { 3 };
                ["mariadb", "postgres", "cassandra"]
                    .into_iter()
                    .flat_map(move |server| std::iter::repeat_n((round, server), each))
            })
            .collect();
        assert_eq!(order, expected);
    }
}
