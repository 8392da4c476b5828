//! `hatshop verify RESULT_DIR`: rebuild the expected state from the run's stream
//! (only the events each lane applied) and compare it with the database.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::open_stream;
use crate::cli::VerifyArgs;
use crate::config::{EventSource, check_events_file};
use crate::db::{ConnectOptions, Database, DbUrl, Settings, Store};
use crate::report::{read_json, write_json};
use crate::result_dir::{self, RunRecord};
use crate::runner::lane_of;
use crate::verify::{VerifyReport, compare};
use crate::workload::{Order, OrderBook};

pub async fn run(args: &VerifyArgs) -> Result<bool> {
    let record: RunRecord = read_json(&result_dir::file(&args.result_dir, result_dir::RUN_JSON))?;
    let url = match &args.db {
        Some(url) => url.clone(),
        None if record.database.url.contains(":***@") => bail!(
            "run.json holds {} without its password: pass the full URL with --db",
            record.database.url
        ),
        None => record.database.url.clone(),
    };
    let url = DbUrl::parse(&url).map_err(anyhow::Error::msg)?;
    let options = ConnectOptions {
        concurrency: 1,
        settings: Settings::new(record.database.settings.clone()),
    };
    let store = Store::connect(&url, &options)
        .await
        .with_context(|| format!("cannot connect to {url}"))?;
    let report = verify_store(&store, &args.result_dir, &record).await?;
    print!("{}", report.render());
    Ok(report.is_exact())
}

/// What the store must hold after the events the run applied.
pub fn expected_orders(record: &RunRecord) -> Result<Vec<Order>> {
    if let EventSource::File(info) = &record.events {
        let now = check_events_file(&info.path)?;
        if now.sha256 != info.sha256 {
            bail!(
                "events file {} changed since the run (sha256 {} then, {} now)",
                info.path.display(),
                info.sha256,
                now.sha256
            );
        }
    }
    let lanes = record.lane_last_seq.len().max(1);
    let mut book = OrderBook::new();
    for event in open_stream(&record.events)? {
        let event = event?;
        let applied = record
            .lane_last_seq
            .get(lane_of(event.op.order_id(), lanes))
            .copied()
            .flatten()
            .is_some_and(|last| event.seq <= last);
        if applied {
            book.apply_owned(event);
        }
    }
    Ok(book.into_sorted())
}

/// Compares the store with the run's expected state and writes verify.json.
pub async fn verify_store<D: Database>(
    store: &D,
    dir: &Path,
    record: &RunRecord,
) -> Result<VerifyReport> {
    if !store.holds_data() {
        bail!(
            "{} keeps no data: there is nothing to verify",
            record.database.url
        );
    }
    let expected = expected_orders(record)?;
    let snapshot = store
        .snapshot()
        .await
        .with_context(|| format!("cannot read back {}", record.database.url))?;
    let report = compare(&expected, &snapshot);
    write_json(&result_dir::file(dir, result_dir::VERIFY_JSON), &report)?;
    Ok(report)
}
