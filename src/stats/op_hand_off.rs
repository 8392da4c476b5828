//! The lanes' op-log batches on their way to the op log's thread. A send wakes the
//! thread only when the lane has just taken its last permit (its next batch would wait
//! for this one to be written); otherwise the thread takes what came every
//! [`TAKE_EVERY`]. Woken for every batch, it slept and woke once per few dozen rows
//! when many lanes each sent small batches (bench/NOTES.md).

use std::sync::mpsc;
use std::thread::Thread;
use std::time::Duration;

use super::OpBatch;

/// How long batches may wait for the thread while no lane needs their permits back.
pub const TAKE_EVERY: Duration = Duration::from_millis(10);

/// A lane's end of the hand-off; the thread's end is the channel's receiver.
#[derive(Clone)]
pub struct OpBatchSender {
    tx: mpsc::Sender<OpBatch>,
    /// Declared after `tx`, so dropped after it: woken, the thread finds the channel
    /// closed once the last sender is gone, at once rather than a tick later.
    thread: WakeOnDrop,
}

#[derive(Clone)]
struct WakeOnDrop(Thread);

impl Drop for WakeOnDrop {
    fn drop(&mut self) {
        self.0.unpark();
    }
}

impl OpBatchSender {
    /// The sending end of `tx`, whose receiver `thread` reads.
    pub fn new(tx: mpsc::Sender<OpBatch>, thread: Thread) -> Self {
        OpBatchSender {
            tx,
            thread: WakeOnDrop(thread),
        }
    }

    /// Hands `batch` over, waking the thread now when the batch holds its lane's last
    /// permit; false when the thread has ended (it failed).
    pub fn send(&self, batch: OpBatch) -> bool {
        let urgent = batch.unwritten.semaphore().available_permits() == 0;
        if self.tx.send(batch).is_err() {
            return false;
        }
        if urgent {
            self.thread.0.unpark();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::mpsc::TryRecvError;
    use std::time::Instant;

    use super::*;

    /// A batch from a lane that has `left` permits after taking the batch's.
    fn batch(left: usize) -> OpBatch {
        let room = Arc::new(tokio::sync::Semaphore::new(1 + left));
        OpBatch {
            records: Vec::new(),
            unwritten: room.try_acquire_owned().unwrap(),
        }
    }

    #[test]
    fn an_urgent_batch_and_the_last_sender_gone_wake_the_reader() {
        let (tx, rx) = mpsc::channel();
        let (seen_tx, seen) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut taken = 0;
            loop {
                // Far longer than the test waits: only the senders' wakes end it soon.
                std::thread::park_timeout(Duration::from_secs(60));
                loop {
                    match rx.try_recv() {
                        Ok(_) => taken += 1,
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => return taken,
                    }
                }
                seen_tx.send(taken).unwrap();
            }
        });
        let deadline = Duration::from_secs(30);
        let sender = OpBatchSender::new(tx, reader.thread().clone());
        assert!(sender.send(batch(0)));
        assert_eq!(
            seen.recv_timeout(deadline),
            Ok(1),
            "woken by the urgent batch"
        );
        let other = sender.clone();
        drop(sender);
        assert!(other.send(batch(1)));
        let began = Instant::now();
        drop(other);
        assert_eq!(reader.join().unwrap(), 2);
        assert!(began.elapsed() < deadline, "woken by the last sender gone");
    }

    #[test]
    fn a_send_after_the_reader_ended_says_so() {
        let (tx, rx) = mpsc::channel();
        drop(rx);
        let sender = OpBatchSender::new(tx, std::thread::current());
        assert!(!sender.send(batch(0)));
    }
}
