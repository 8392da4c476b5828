//! `hatshop verify RESULT_DIR`: which database to read (the run's own, or another
//! given), its verdict, and where that verdict goes (verify.json and the page for the
//! run's own, the terminal alone for another).

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

use crate::cli::VerifyArgs;
use crate::config::seconds;
use crate::console::say;
use crate::db::{AnyStore, ConnectOptions, DbUrl, Settings};
use crate::files::write_json;
use crate::interrupt;
use crate::lifecycle::verify::{verify_store, waiting};
use crate::result_dir::{self, RunRecord};
use crate::verify::VerifyReport;

/// `hatshop verify`: what the store holds against what the stream says; true when exact.
/// The verdict on the run's own database goes into verify.json (a verify that fails
/// leaves one that says so); another database's is printed, never put in the folder.
pub async fn run(args: &VerifyArgs) -> Result<bool> {
    let _listening = interrupt::Listening::new();
    let dir = &args.result_dir;
    let record = result_dir::load_complete(dir)?;
    if let Some(shard) = record.shard {
        bail!(
            "{} holds shard {shard} of a run, whose other shards wrote to the same tables: \
             `hatshop merge` the shards' folders and verify the merged folder",
            dir.display()
        );
    }
    let (url, own) = url_to_read(args, dir, &record)?;
    if own {
        // Its verdict goes into the folder: not while another command writes it.
        result_dir::folder::claim_for_writing(dir)?;
    }
    if url.in_memory() {
        bail!(
            "the run in {} kept its database in memory ({url}), gone when the run ended: \
             verify such a run as it ends, with `hatshop run --verify`",
            dir.display()
        );
    }
    say!("verifying {} against {url}", dir.display());
    let began = crate::stamp::now();
    let verdict = verify_database(args, dir, &record, &url, own).await;
    let report = match verdict {
        Ok(report) => report,
        Err(e) if own => {
            // The old verdict must not outlive the database it was about.
            let failed = VerifyReport::failed(
                url.to_string(),
                began,
                crate::secrets::redact(&format!("{e:#}")).into_owned(),
            );
            let path = result_dir::file(dir, result_dir::VERIFY_JSON);
            if write_json(&path, &failed).is_err() {
                let _ = std::fs::remove_file(&path);
            }
            rewrite_page(dir);
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    crate::console::out(&report.render());
    if report.is_exact() {
        say!("exact: the database holds what the stream says");
    }
    if own {
        // The folder's page says whether the run was verified: say it now, not at the
        // next `hatshop report`.
        if let Some(page) = rewrite_page(dir) {
            say!("report: {}", page.display());
        }
    } else {
        say!(
            "(another database than the run's own: {} keeps the verdict it had)",
            result_dir::VERIFY_JSON
        );
    }
    Ok(report.is_exact())
}

/// The folder's page again, with the verdict it now holds (where it has a page).
fn rewrite_page(dir: &Path) -> Option<std::path::PathBuf> {
    if !dir.join(result_dir::REPORT_HTML).exists() {
        return None;
    }
    crate::report::html::write_report(dir).ok()
}

/// Connects to `url` and judges it, within deadlines, hearing Ctrl-C; `own`: the run's
/// own database, whose verdict goes into verify.json.
async fn verify_database(
    args: &VerifyArgs,
    dir: &Path,
    record: &RunRecord,
    url: &DbUrl,
    own: bool,
) -> Result<VerifyReport> {
    let settings = Settings::checked(
        url.scheme(),
        url.store().settings,
        record.database.settings.clone(),
    )
    .map_err(anyhow::Error::msg)?;
    let connect_timeout = seconds("--connect-timeout", args.connect_timeout, 0.1)?;
    let op_timeout = seconds("--op-timeout", args.op_timeout, 0.001)?;
    let options = ConnectOptions {
        concurrency: 1,
        settings,
        connect_timeout,
        op_timeout,
        existing_only: true,
        key_value_only: false,
    };
    let store = waiting(connect_timeout, "connect", AnyStore::connect(url, &options))
        .await
        .with_context(|| format!("cannot connect to {url}"))?;
    let to = own.then(|| result_dir::file(dir, result_dir::VERIFY_JSON));
    let report = tokio::select! {
        report = verify_store(&store, url, dir, record, op_timeout, to.as_deref(), args.full) => report,
        _ = interrupt::wait() => Err(anyhow!("verify interrupted")),
    };
    crate::db::close_within(&store).await;
    report
}

/// The database verify reads, and whether it is the run's own: `--db` if given; else
/// the run's own, its password (if run.json keeps none) taken from HATSHOP_DB, else
/// where the store's own tools keep it (PGPASSWORD, ~/.pgpass, ~/.my.cnf, …). A
/// HATSHOP_DB that names another database is refused: left over in a shell, it would
/// silently verify the wrong one.
fn url_to_read(args: &VerifyArgs, dir: &Path, record: &RunRecord) -> Result<(DbUrl, bool)> {
    let recorded = recorded_url(dir, record)?;
    if let Some(url) = &args.db {
        let url = DbUrl::parse(url)?;
        let own = same_database(&url, &recorded);
        return Ok((url, own));
    }
    let from_env = match std::env::var("HATSHOP_DB") {
        Ok(text) if !text.is_empty() => {
            Some(DbUrl::parse(&text).map_err(|e| e.context("HATSHOP_DB"))?)
        }
        _ => None,
    };
    let without_password = record.database.url.contains(":***@");
    match from_env {
        Some(env) if same_database(&env, &recorded) => Ok((env, true)),
        Some(env) => bail!(
            "HATSHOP_DB names {env}, but the run in {} used {}: unset it, or pass --db to \
             verify another database",
            dir.display(),
            record.database.url
        ),
        None if without_password => Ok((recorded.without_password(), true)),
        None => Ok((recorded, true)),
    }
}

/// Whether two URLs name one database: the same file, or the same server URL (passwords
/// aside, as both show them masked).
fn same_database(a: &DbUrl, b: &DbUrl) -> bool {
    let file = |url: &DbUrl| {
        url.store()
            .own_file
            .and(url.file())
            .map(|f| f.canonicalize().unwrap_or(f))
    };
    match (file(a), file(b)) {
        (Some(fa), Some(fb)) => a.scheme() == b.scheme() && fa == fb,
        _ => a.to_string() == b.to_string(),
    }
}

/// The database a folder's run.json names (its password masked, if it had one); a SQLite
/// file inside the folder is found relative to it, wherever the folder is now.
fn recorded_url(dir: &Path, record: &RunRecord) -> Result<DbUrl> {
    let url = DbUrl::parse(&record.database.url)?;
    Ok(match &record.database.file {
        Some(_) if url.in_memory() => url,
        Some(file) if Path::new(file).is_relative() => url.with_file(&dir.join(file)),
        Some(file) => url.with_file(Path::new(file)),
        None => url,
    })
}
