//! `--find-max` over several databases or repeats: each database searched once a
//! round, every search in a folder of its own (`DB-rN`), then one table of each
//! database's highest rate under the bound with its repeats' spread (`findmax.csv`),
//! and `sweep.csv` and `sweep.html` of every step of every search.

use std::path::Path;

use anyhow::Result;

use super::{Searched, search};
use crate::cli::RunArgs;
use crate::console::{note, say};
use crate::interrupt;
use crate::lifecycle::run::EXIT_INTERRUPTED;
use crate::numbers::format_us;
use crate::report::figure::Table;

/// One database's searches.
struct Candidate<'a> {
    template: &'a RunArgs,
    /// As its folders and the table name it.
    name: String,
    found: Vec<Searched>,
}

/// Every database searched `repeats` times into `dir`, a round at a time.
pub(super) async fn searches(
    templates: &[RunArgs],
    repeats: usize,
    dir: &Path,
    first: f64,
    bound_us: f64,
) -> Result<std::process::ExitCode> {
    let mut candidates: Vec<Candidate> = templates
        .iter()
        .enumerate()
        .map(|(i, template)| Candidate {
            template,
            name: folder_name(templates, i),
            found: Vec::new(),
        })
        .collect();
    let mut stopped_short = None;
    'rounds: for repeat in 1..=repeats {
        for candidate in &mut candidates {
            note!(
                "searching {} (repeat {repeat} of {repeats})",
                candidate.name
            );
            let into = dir.join(format!("{}-r{repeat}", candidate.name));
            crate::result_dir::folder::create_empty_folder(&into, "search")?;
            let searched = search(candidate.template, &into, first, bound_us).await?;
            let interrupted = searched.interrupted;
            if let Some(why) = &searched.unanswered {
                stopped_short = Some(format!("{} repeat {repeat}: {why}", candidate.name));
            }
            candidate.found.push(searched);
            if interrupted || interrupt::requested() || stopped_short.is_some() {
                break 'rounds;
            }
        }
    }
    write_table(&candidates, dir, bound_us)?;
    let rows: Vec<_> = candidates
        .iter_mut()
        .flat_map(|c| c.found.iter_mut().flat_map(|s| s.rows.drain(..)))
        .collect();
    let title = format!(
        "hatshop: the highest rate under {} µs, each database",
        format_us(bound_us)
    );
    let (table, chart) = crate::report::sweep::write(dir, &title, &rows, None)?;
    say!("table: {}\nchart: {}", table.display(), chart.display());
    if interrupt::requested()
        || candidates
            .iter()
            .any(|c| c.found.iter().any(|s| s.interrupted))
    {
        note!("interrupted: the folder holds the runs that finished");
        return Ok(std::process::ExitCode::from(EXIT_INTERRUPTED));
    }
    if let Some(why) = stopped_short {
        anyhow::bail!("a search stopped short of its answer: {why}");
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// A database's folder name: its store's scheme, numbered where two share one.
fn folder_name(templates: &[RunArgs], at: usize) -> String {
    let scheme = |t: &RunArgs| {
        let url = t.db.first().map_or(crate::db::DEFAULT_URL, String::as_str);
        url.split("://").next().unwrap_or("db").to_string()
    };
    let mine = scheme(&templates[at]);
    let same = templates.iter().filter(|t| scheme(t) == mine).count();
    if same == 1 {
        return mine;
    }
    let nth = templates[..=at]
        .iter()
        .filter(|t| scheme(t) == mine)
        .count();
    format!("{mine}-{nth}")
}

/// The answer: each database's highest rate under the bound, median of its repeats
/// with their spread, on the terminal and in `findmax.csv`.
fn write_table(candidates: &[Candidate], dir: &Path, bound_us: f64) -> Result<()> {
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
    for candidate in candidates {
        let answers: Vec<Option<f64>> = candidate.found.iter().map(|s| s.good).collect();
        let said = crate::report::sweep::answers_said(&answers);
        say!("  {}: {said}", candidate.name);
        for (repeat, searched) in candidate.found.iter().enumerate() {
            let rate = |r: Option<f64>| r.map_or(String::new(), |r| format!("{r}"));
            let bent = searched
                .not_monotonic
                .map_or(String::new(), |(kept, broke)| {
                    format!("{kept} kept the bound above {broke}, which broke it")
                });
            if !bent.is_empty() {
                say!("    repeat {}: not monotonic: {bent}", repeat + 1);
            }
            table.rows.push(vec![
                candidate.name.clone(),
                (repeat + 1).to_string(),
                rate(searched.good),
                rate(
                    searched
                        .bad
                        .filter(|b| searched.good.is_none_or(|g| *b > g)),
                ),
                bent,
            ]);
        }
    }
    crate::files::write_atomic(&dir.join("findmax.csv"), &table.csv())?;
    say!("answers: {}", dir.join("findmax.csv").display());
    Ok(())
}
