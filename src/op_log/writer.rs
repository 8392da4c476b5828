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
        let parts = PartWriter::create(dir, 0, false, run_id, database)?;
        let journal = Journal::create(&dir.join(JOURNAL), run_id, database, 0)?;
        // Unbounded: each lane's permits bound the batches on their way.
        let (tx, rx) = mpsc::channel::<OpBatch>();
        let epoch_ns = epoch
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos() as u64);
        let mut writing = Writing {
            parts,
            journal,
            epoch_ns,
            rows: 0,
            unwritten: Vec::new(),
        };
        let handle = std::thread::Builder::new()
            .name("op-log".into())
            .spawn(move || -> Result<u64> {
                loop {
                    let closed = loop {
                        match rx.try_recv() {
                            Ok(batch) => writing.take(batch)?,
                            Err(TryRecvError::Empty) => break false,
                            Err(TryRecvError::Disconnected) => break true,
                        }
                    };
                    // What came goes to the file (where a killed process leaves it),
                    // and its lanes may send more.
                    writing.write_out()?;
                    if closed {
                        break;
                    }
                    std::thread::park_timeout(TAKE_EVERY);
                }
                let rows = writing.finish()?;
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

/// The thread's files and the rows taken into them.
struct Writing {
    parts: PartWriter,
    journal: Journal,
    epoch_ns: u64,
    rows: u64,
    /// Permits of batches whose rows are not yet in the file.
    unwritten: Vec<tokio::sync::OwnedSemaphorePermit>,
}

impl Writing {
    /// Takes a batch's rows into the journal and the part being written.
    fn take(&mut self, batch: OpBatch) -> Result<()> {
        for record in batch.records {
            let op = LoggedOp::of_record(record, self.epoch_ns);
            self.journal.push(&op);
            if self.parts.push(&op)? {
                // Every row so far is in closed parts.
                self.journal.start(self.parts.next_part())?;
            }
            self.rows += 1;
        }
        self.unwritten.push(batch.unwritten);
        if self.journal.buffered() >= WRITE_AT {
            self.write_out()?;
        }
        Ok(())
    }

    /// Hands the rows taken to the file, and their permits back to their lanes.
    fn write_out(&mut self) -> Result<()> {
        if !self.unwritten.is_empty() {
            self.journal.flush()?;
            self.unwritten.clear();
        }
        Ok(())
    }

    /// Closes the last part and removes the journal; the rows written.
    fn finish(mut self) -> Result<u64> {
        self.journal.flush()?;
        self.parts.finish()?;
        self.journal.remove()?;
        Ok(self.rows)
    }
}
