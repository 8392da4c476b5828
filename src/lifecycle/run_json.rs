//! The one writer of a run's `run.json`, shared with the last words of a second
//! signal: once those have marked the folder, nothing the run still does overwrites
//! them. It also keeps room on the disk for the last record, so that a disk that
//! fills up during the run cannot leave the folder without it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use anyhow::Result;

use crate::files::{Reserve, write_json};
use crate::report::html;
use crate::result_dir::{self, RunRecord, RunStatus};
use crate::stamp::rfc3339;

/// Room for the last run.json beside its lanes' positions: what ran, the error,
/// faults and client costs (a first record is about 8 KB).
const SLACK: usize = 96 * 1024;
/// Bytes a lane's position may add to run.json.
const PER_LANE: usize = 32;

/// run.json of one result folder, written only through here.
#[derive(Clone)]
pub(super) struct RunJson(Arc<Mutex<State>>);

struct State {
    dir: PathBuf,
    /// The record as last written.
    written: RunRecord,
    /// Room for the last record, given back just before it is written.
    reserve: Option<Reserve>,
    /// A second signal marked the folder: later writes are dropped.
    sealed: bool,
}

impl RunJson {
    /// Keeps room in `dir` for the last record of a run of `lanes` lanes; taken before
    /// the run touches its database, so that a full disk stops it first.
    pub(super) fn keep_room(dir: &Path, lanes: usize) -> Result<Reserve> {
        Reserve::take(dir, SLACK + PER_LANE * lanes)
    }

    /// Writes the first record; `reserve` is the room kept for the last one.
    pub(super) fn create(dir: &Path, record: &RunRecord, reserve: Reserve) -> Result<RunJson> {
        write_json(&result_dir::file(dir, result_dir::RUN_JSON), record)?;
        Ok(RunJson(Arc::new(Mutex::new(State {
            dir: dir.to_path_buf(),
            written: record.clone(),
            reserve: Some(reserve),
            sealed: false,
        }))))
    }

    /// Writes the last record again with `change` made to it, mid-run (the room kept
    /// for the last record stays kept). A write that fails leaves the record before it.
    pub(super) fn update(&self, change: impl FnOnce(&mut RunRecord)) -> Result<()> {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if state.sealed {
            return Ok(());
        }
        let mut record = state.written.clone();
        change(&mut record);
        write_json(&result_dir::file(&state.dir, result_dir::RUN_JSON), &record)?;
        state.written = record;
        Ok(())
    }

    /// What the load and warm-up came to, as written before measuring began.
    pub(super) fn unmeasured(&self) -> Option<crate::result_dir::UnmeasuredRecord> {
        let state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        state.written.unmeasured.clone()
    }

    /// Writes the run's last record, in the room kept for it.
    pub(super) fn finish(&self, record: &RunRecord) -> Result<()> {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(reserve) = state.reserve.take() {
            reserve.release();
        }
        if state.sealed {
            return Ok(());
        }
        write_json(&result_dir::file(&state.dir, result_dir::RUN_JSON), record)?;
        state.written = record.clone();
        Ok(())
    }

    /// The second signal's last words: a folder not yet complete is marked `aborted`
    /// with a page that says how to rebuild it; a complete one gets its report. Nothing
    /// written afterwards replaces them.
    pub(super) fn abort(&self) {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        state.sealed = true;
        if let Some(reserve) = state.reserve.take() {
            reserve.release();
        }
        if state.written.status != RunStatus::Running {
            if html::write_report(&state.dir).is_ok() {
                crate::console::note!("{} is complete, with its report", state.dir.display());
            }
            return;
        }
        let mut aborted = state.written.clone();
        aborted.status = RunStatus::Aborted;
        aborted.interrupted = true;
        aborted.finished_at = Some(rfc3339(SystemTime::now()));
        if write_json(
            &result_dir::file(&state.dir, result_dir::RUN_JSON),
            &aborted,
        )
        .is_ok()
        {
            state.written = aborted;
            let _ = html::write_unfinished(&state.dir, &state.written);
        }
        crate::console::note!(
            "{} is marked aborted: {}",
            state.dir.display(),
            result_dir::rebuild_hint(&state.dir, &state.written)
        );
    }
}
