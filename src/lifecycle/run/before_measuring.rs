//! What the load and warm-up came to, put on disk before the first measured operation,
//! so that a run killed while measuring is judged from there.

use std::path::PathBuf;
use std::time::SystemTime;

use super::super::run_json::RunJson;
use super::server_settled::SettleServer;
use super::tidy_loaded::TidyLoaded;
use crate::files::write_csv;
use crate::result_dir::{self, LoadRecord, UnmeasuredRecord};
use crate::runner::{BeforeMeasuring, FailedWrite, Unmeasured};
use crate::stamp::rfc3339;
use crate::workload::{EventSource, WarmupCount};

/// What the load and warm-up came to, put on disk before any measured operation,
/// once the store has tidied its loaded tables (`tidy`) and the server has finished
/// what the load left it (`settle`): their failed writes into failed_writes.csv, then
/// into run.json the seq every lane had applied, a timed warm-up's count, the tidying
/// and the server's work left. A run killed while measuring is verified from there; a
/// run that cannot write them does not measure.
pub(super) fn keep_unmeasured(
    dir: PathBuf,
    load_batch: usize,
    run_json: RunJson,
    timed_warmup: Option<WarmupCount>,
    tidy: TidyLoaded,
    settle: SettleServer,
) -> BeforeMeasuring {
    Box::new(move |unmeasured: &Unmeasured| {
        let tidied = tidy();
        let server_work = settle();
        let cannot = |e: anyhow::Error| {
            format!("cannot keep what the load did on disk before measuring: {e:#}")
        };
        write_csv(
            &result_dir::file(&dir, result_dir::FAILED_WRITES_CSV),
            &failed_write_rows(&unmeasured.failed_writes),
        )
        .map_err(cannot)?;
        let kept = UnmeasuredRecord {
            through_seq: unmeasured.last_seq,
            operations: unmeasured.applied,
            failed: unmeasured.failed,
            failed_writes: unmeasured.failed_writes.len() as u64,
            at: rfc3339(SystemTime::now()),
            server_work,
            tidied,
            load: unmeasured.load.map(|load| {
                let took_s = load.took.as_secs_f64();
                LoadRecord {
                    rows: load.operations,
                    took_s,
                    rows_per_s: load.operations as f64 / took_s.max(1e-9),
                    batch: load_batch,
                }
            }),
        };
        let warmup = timed_warmup.as_ref().map(WarmupCount::get);
        run_json
            .update(|record| {
                record.unmeasured = Some(kept);
                if let (Some(warmup), EventSource::Generated { workload }) =
                    (warmup, &mut record.events)
                {
                    workload.warmup = warmup;
                }
            })
            .map_err(cannot)
    })
}

/// failed_writes.csv's rows.
pub(super) fn failed_write_rows(failed: &[FailedWrite]) -> Vec<result_dir::FailedWriteRow> {
    failed
        .iter()
        .map(|f| result_dir::FailedWriteRow {
            seq: f.seq,
            event_type: f.event_type.to_string(),
            target: f.target,
            error_kind: f.error_kind.as_str().to_string(),
        })
        .collect()
}
