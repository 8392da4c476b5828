//! The op log's thread. Rows arrive in the lanes' batches, each holding one of its
//! lane's few permits to have rows not yet in the file, given back once its rows are
//! in the journal or a closed part: when the disk is slow the lanes wait (outside their
//! timed windows) rather than drop a row, and a killed run loses at most a bounded
//! share of each lane's rows. The thread takes what came when a lane wakes it or every
//! [`TAKE_EVERY`] (`stats::OpBatchSender`), and writes it once taken.

use std::path::Path;
use std::sync::mpsc::{self, TryRecvError};
use std::thread::JoinHandle;
use std::time::SystemTime;

use anyhow::{Context, Result};

use super::journal::{JOURNAL, Journal};
use super::{LoggedOp, PartWriter};
use crate::stats::{OpBatch, OpBatchSender, TAKE_EVERY};

/// Journal bytes past which the writer hands them to the file even while more batches
/// wait, so that lanes waiting for room in the log go on.
const WRITE_AT: usize = 256 * 1024;

/// The sending side handed to lanes.
pub type OpLogSender = OpBatchSender;

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
        // Unbounded: each lane's permits bound the batches on their way.
        let (tx, rx) = mpsc::channel::<OpBatch>();
        let epoch_ns = epoch
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos() as u64);
        let handle = std::thread::Builder::new()
            .name("op-log".into())
            .spawn(move || -> Result<u64> {
                let mut rows = 0u64;
                // Permits of batches whose rows are not yet in the file.
                let mut buffered = Vec::new();
                let mut closed = false;
                while !closed {
                    loop {
                        let batch = match rx.try_recv() {
                            Ok(batch) => batch,
                            Err(TryRecvError::Empty) => break,
                            Err(TryRecvError::Disconnected) => {
                                closed = true;
                                break;
                            }
                        };
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
                        if journal.buffered() >= WRITE_AT {
                            journal.flush()?;
                            buffered.clear();
                        }
                    }
                    // What came goes to the file (where a killed process leaves it),
                    // and its lanes may send more.
                    if !buffered.is_empty() {
                        journal.flush()?;
                        buffered.clear();
                    }
                    if !closed {
                        std::thread::park_timeout(TAKE_EVERY);
                    }
                }
                journal.flush()?;
                parts.finish()?;
                journal.remove()?;
                crate::client_cost::thread_ends();
                Ok(rows)
            })
            .context("cannot start the op log thread")?;
        let tx = OpBatchSender::new(tx, handle.thread().clone());
        Ok((OpLogWriter { handle }, tx))
    }

    /// Waits until every sender is dropped and every row is in a closed part.
    pub fn finish(self) -> Result<u64> {
        self.handle
            .join()
            .map_err(|_| anyhow::anyhow!("the op log thread panicked"))?
    }
}
