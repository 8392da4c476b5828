//! `--find-max` over several databases or repeats: every search a cell of a series
//! (`lifecycle::series`, as a study's search cells are), each database searched once a
//! round, each search in a folder of its own (`DB-rN`), then one table of each
//! database's highest rate under the bound with its repeats' spread (`findmax.csv`),
//! and `sweep.csv` and `sweep.html` of every step of every search.

use std::path::Path;

use anyhow::Result;

use crate::cli::RunArgs;
use crate::cluster::Home;
use crate::console::{note, say};
use crate::files::read_json;
use crate::lifecycle::series::{Series, Watch};
use crate::numbers::format_us;
use crate::report::figure::Table;
use crate::report::loaded_run::read_rows;
use crate::report::sweep::{SEARCH_JSON, SearchAnswer, SweepRow};
use crate::studies::cells::{Cell, ServerNeed, Verb};

/// The flags of the command that are not each search's: each gets its own.
const NOT_HANDED_ON: &[&str] = &["db", "out", "repeat", "home", "quiet", "recreate", "verify"];

/// Every database of `args` searched `args.repeat` times into `dir`, a round at a
/// time.
pub(super) async fn searches(
    args: &RunArgs,
    dir: &Path,
    bound_us: f64,
) -> Result<std::process::ExitCode> {
    let dbs: Vec<String> = match args.db.as_slice() {
        [] => vec![crate::db::DEFAULT_URL.to_string()],
        given => given.to_vec(),
    };
    let names: Vec<String> = (0..dbs.len()).map(|i| folder_name(&dbs, i)).collect();
    let flags = crate::cli::given::flags_without(&args.argv, "run", NOT_HANDED_ON);
    let mut cells = Vec::new();
    for repeat in 1..=args.repeat as u64 {
        for (db, name) in dbs.iter().zip(&names) {
            cells.push(Cell {
                id: format!("{name}-r{repeat}"),
                part: "search".into(),
                labels: vec![
                    ("store".into(), name.clone()),
                    ("repeat".into(), repeat.to_string()),
                ],
                need: ServerNeed::given(scheme(db), db),
                verb: Verb::Search,
                args: flags.clone(),
                work: 1,
                faults: None,
                round: repeat,
            });
        }
    }
    let home = Home::resolve(args.home.as_deref())?;
    let series = Series::of_command("searches", "find-max", dir, &home);
    let said = Said { of: args.repeat };
    let outcome = series.run(&cells, false, &said).await?;
    write_table(&cells, &names, dir, bound_us)?;
    let mut rows: Vec<SweepRow> = Vec::new();
    for cell in &cells {
        let of_search: Vec<SweepRow> =
            read_rows(&dir.join(&cell.id).join("sweep.csv")).unwrap_or_default();
        rows.extend(of_search.into_iter().map(|row| SweepRow {
            database: cell.labels[0].1.clone(),
            repeat: cell.round as usize,
            ..row
        }));
    }
    let title = format!(
        "hatshop: the highest rate under {} µs, each database",
        format_us(bound_us)
    );
    let (table, chart) = crate::report::sweep::write(dir, &title, &rows, None)?;
    say!("table: {}\nchart: {}", table.display(), chart.display());
    outcome.exit(
        "search",
        dir,
        "interrupted: the folder holds the runs that finished; the same command again resumes it",
    )
}

/// What the searches say as they go.
struct Said {
    of: usize,
}

impl Watch for Said {
    fn starting(&self, cells: &[Cell], kept: usize) {
        if kept > 0 {
            note!(
                "{kept} of the {} searches finished earlier, kept",
                cells.len()
            );
        }
    }

    fn before(&self, _i: usize, _n: usize, cell: &Cell, _left: &str) {
        note!(
            "searching {} (repeat {} of {})",
            cell.labels[0].1,
            cell.round,
            self.of
        );
    }
}

/// A URL's scheme.
fn scheme(url: &str) -> &str {
    url.split("://").next().unwrap_or("db")
}

/// A database's folder name: its store's scheme, numbered where two share one.
fn folder_name(dbs: &[String], at: usize) -> String {
    let mine = scheme(&dbs[at]);
    let same = dbs.iter().filter(|db| scheme(db) == mine).count();
    if same == 1 {
        return mine.to_string();
    }
    let nth = dbs[..=at].iter().filter(|db| scheme(db) == mine).count();
    format!("{mine}-{nth}")
}

/// The answer: each database's highest rate under the bound, median of its repeats
/// with their spread, on the terminal and in `findmax.csv`.
fn write_table(cells: &[Cell], names: &[String], dir: &Path, bound_us: f64) -> Result<()> {
    let mut table = Table::new(&[
        "database",
        "repeat",
        "highest rate under the bound (ops/s)",
        "lowest rate over it (ops/s)",
        "not monotonic",
    ]);
    say!(
        "highest rate with response p99 under {} µs, each database:",
        format_us(bound_us)
    );
    for name in names {
        let found: Vec<(u64, SearchAnswer)> = cells
            .iter()
            .filter(|c| &c.labels[0].1 == name)
            .filter_map(|c| Some((c.round, read_json(&dir.join(&c.id).join(SEARCH_JSON)).ok()?)))
            .collect();
        let answers: Vec<Option<f64>> = found.iter().map(|(_, a)| a.highest_under).collect();
        let said = crate::report::sweep::answers_said(&answers);
        say!("  {name}: {said}");
        for (repeat, answer) in &found {
            let rate = |r: Option<f64>| r.map_or(String::new(), |r| format!("{r}"));
            let bent = answer.bend();
            if let Some(bent) = &bent {
                say!("    repeat {repeat}: not monotonic: {bent}");
            }
            table.rows.push(vec![
                name.clone(),
                repeat.to_string(),
                rate(answer.highest_under),
                rate(answer.lowest_over),
                bent.unwrap_or_default(),
            ]);
        }
    }
    crate::files::write_atomic(&dir.join("findmax.csv"), &table.csv())?;
    say!("answers: {}", dir.join("findmax.csv").display());
    Ok(())
}
