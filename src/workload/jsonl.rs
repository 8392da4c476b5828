//! The event stream as JSON Lines: one `OrderEvent` per line, and its sha256.
//!
//! The bytes are the contract: `hatshop generate` writes exactly the bytes that a run
//! hashes into `plan_sha256`, so `sha256sum events.jsonl` equals a run's plan hash.

use std::io::{BufRead, Write};

use sha2::{Digest, Sha256};

use super::domain::OrderEvent;

/// Serialises events into their line form and hashes every byte of it.
#[derive(Default)]
pub struct PlanHasher {
    line: Vec<u8>,
    sha: Sha256,
    events: u64,
}

impl PlanHasher {
    /// A hash of no events.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one event; returns its line (with the trailing newline).
    pub fn add(&mut self, event: &OrderEvent) -> &[u8] {
        self.line.clear();
        super::event_line::write_event(&mut self.line, event);
        self.line.push(b'\n');
        self.sha.update(&self.line);
        self.events += 1;
        &self.line
    }

    /// Events hashed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The sha256, as hex.
    pub fn finish(self) -> String {
        hex(&self.sha.finalize())
    }
}

/// `bytes` as lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes a stream to `out`; returns (events written, sha256).
pub fn write_events(
    events: impl Iterator<Item = OrderEvent>,
    out: &mut impl Write,
) -> std::io::Result<(u64, String)> {
    let mut hasher = PlanHasher::new();
    for event in events {
        out.write_all(hasher.add(&event))?;
    }
    out.flush()?;
    let count = hasher.events();
    Ok((count, hasher.finish()))
}

/// A line of an events file that is not a valid event.
#[derive(Debug, thiserror::Error)]
#[error("{path}:{line}: {message}")]
pub struct EventsFileError {
    pub path: String,
    pub line: u64,
    pub message: String,
}

/// The longest line an events file may hold, newline included: far past any event
/// hatshop writes (a hat-shop order with its items is under 2 KiB), and a bound on
/// what one line can take of memory.
pub const MAX_LINE: usize = 1 << 20;

/// Reads events from JSON Lines, naming the line of any error. Blank lines are skipped.
pub struct EventsReader<R> {
    input: R,
    path: String,
    line_no: u64,
    buf: String,
    last_seq: Option<u64>,
}

impl<R: BufRead> EventsReader<R> {
    /// Reads events from `input`; errors name `path` and the line.
    pub fn new(input: R, path: &str) -> Self {
        EventsReader {
            input,
            path: path.to_string(),
            line_no: 0,
            buf: String::new(),
            last_seq: None,
        }
    }

    fn error(&self, message: String) -> EventsFileError {
        EventsFileError {
            path: self.path.clone(),
            line: self.line_no,
            message,
        }
    }
}

impl<R: BufRead> Iterator for EventsReader<R> {
    type Item = Result<OrderEvent, EventsFileError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.buf.clear();
            self.line_no += 1;
            let mut line = std::io::Read::take(&mut self.input, MAX_LINE as u64 + 1);
            match line.read_line(&mut self.buf) {
                Ok(0) => return None,
                Ok(n) if n > MAX_LINE => {
                    return Some(Err(self.error(format!(
                        "a line longer than {} MiB: no event is that long (is this an events \
                         file?)",
                        MAX_LINE >> 20
                    ))));
                }
                Ok(_) => {}
                Err(e) => return Some(Err(self.error(format!("cannot read: {e}")))),
            }
            let text = self.buf.trim();
            if text.is_empty() {
                continue;
            }
            let event: OrderEvent = match serde_json::from_str(text) {
                Ok(event) => event,
                Err(e) => return Some(Err(self.error(format!("not a valid event: {e}")))),
            };
            if let Some(last) = self.last_seq
                && event.seq <= last
            {
                return Some(Err(self.error(format!(
                    "seq {} does not follow seq {last}: events must be in increasing seq order",
                    event.seq
                ))));
            }
            self.last_seq = Some(event.seq);
            return Some(Ok(event));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Generator, presets};

    #[test]
    fn written_events_read_back_identically() {
        let mut spec = presets::find("hatshop-random").unwrap();
        spec.events = 2_000;
        let mut bytes = Vec::new();
        let (count, sha) = write_events(Generator::new(&spec), &mut bytes).unwrap();
        assert_eq!(count, 2_500);
        let read: Vec<OrderEvent> = EventsReader::new(&bytes[..], "mem")
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(read, Generator::new(&spec).collect::<Vec<_>>());
        let mut rehash = PlanHasher::new();
        read.iter().for_each(|e| {
            rehash.add(e);
        });
        assert_eq!(rehash.finish(), sha);
    }

    #[test]
    fn a_bad_line_is_named() {
        let text = "{\"seq\":0,\"phase\":\"measure\",\"op\":{\"type\":\"read_order\",\"order_id\":1}}\n\n{oops}\n";
        let results: Vec<_> = EventsReader::new(text.as_bytes(), "e.jsonl").collect();
        assert!(results[0].is_ok());
        let err = results[1].as_ref().unwrap_err().to_string();
        assert!(err.starts_with("e.jsonl:3: not a valid event"), "{err}");
    }
}
