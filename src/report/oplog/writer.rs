//! The op log's thread. Rows arrive in the lanes' batches over a bounded channel: when
//! the disk is slow the lanes wait (outside their timed windows) rather than drop a
//! row. Each batch holds one of its lane's few permits to have rows not yet in the
//! file, given back once its rows are in the journal or a closed part, so that a
//! killed run loses at most a bounded share of each lane's rows.

use std::path::Path;
use std::thread::JoinHandle;
use std::time::SystemTime;

use anyhow::{Context, Result};
use tokio::sync::mpsc;

use super::journal::{JOURNAL, Journal};
use super::{LoggedOp, PartWriter};
use crate::stats::OpBatch;

/// Batches in flight before lanes wait for the writer.
pub const CHANNEL_BATCHES: usize = 32;
/// Journal bytes past which the writer hands them to the file even while more batches
/// wait, so that lanes waiting for room in the log go on.
const WRITE_AT: usize = 256 * 1024;

/// The sending side handed to lanes.
pub type OpLogSender = mpsc::Sender<OpBatch>;

/// The writer thread; `finish` waits for it and returns the number of rows written.
pub struct OpLogWriter {
    handle: JoinHandle<Result<u64>>,
}

impl OpLogWriter {
    /// Creates the op log folder `dir` and starts the thread. `epoch` is the wall time
    /// of `start_ns = 0`.
    pub fn start(
        dir: &Path,
        run_id: &str,
        database: &str,
        epoch: SystemTime,
    ) -> Result<(OpLogWriter, OpLogSender)> {
        // Both files exist before the first row: a run of no operations still leaves a
        // log that tools can read once it ends.
        let mut parts = PartWriter::create(dir, 0, false, run_id, database)?;
        let mut journal = Journal::create(&dir.join(JOURNAL), run_id, database, 0)?;
        let (tx, mut rx) = mpsc::channel::<OpBatch>(CHANNEL_BATCHES);
        let epoch_ns = epoch
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos() as u64);
        let handle = std::thread::Builder::new()
            .name("op-log".into())
            .spawn(move || -> Result<u64> {
                let mut rows = 0u64;
                // Permits of batches whose rows are not yet in the file.
                let mut buffered = Vec::new();
                while let Some(batch) = rx.blocking_recv() {
                    let idle = rx.is_empty();
                    for record in batch.records {
                        let op = LoggedOp::of_record(record, epoch_ns);
                        journal.push(&op);
                        if parts.push(&op)? {
                            // Every row so far is in closed parts.
                            journal.start(parts.next_part())?;
                        }
                        rows += 1;
                    }
                    buffered.push(batch.unwritten);
                    // Caught up, or enough to write: the rows go to the file (where a
                    // killed process leaves them), and their lanes may send more.
                    if idle || journal.buffered() >= WRITE_AT {
                        journal.flush()?;
                        buffered.clear();
                    }
                }
                journal.flush()?;
                parts.finish()?;
                journal.remove()?;
                crate::client_cost::thread_ends();
                Ok(rows)
            })
            .context("cannot start the op log thread")?;
        Ok((OpLogWriter { handle }, tx))
    }

    /// Waits until every sender is dropped and every row is in a closed part.
    pub fn finish(self) -> Result<u64> {
        self.handle
            .join()
            .map_err(|_| anyhow::anyhow!("the op log thread panicked"))?
    }
}
