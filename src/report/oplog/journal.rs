//! `ops/_journal`: the rows no closed part holds yet, in hatshop's own format, written
//! as the run goes so that a killed run keeps them. It starts again, empty, each time
//! a part is closed; its header names the part its rows belong in, so a journal whose
//! part was closed before the kill could empty it is known and left out.
//!
//! Each row is its length (u32) then its fields, little-endian; a row the kill cut is
//! shorter than its length says, and is left out and counted.

use std::fs::File;
use std::io::{BufReader, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::LoggedOp;

/// The journal's file name in `ops/`.
pub const JOURNAL: &str = "_journal";

const MAGIC: &[u8] = b"hatshop op journal 1\n";

const FAILED: u8 = 1;
const DUE: u8 = 2;
const QUEUED: u8 = 4;
const CODE: u8 = 8;

/// The journal a run writes.
pub struct Journal {
    file: File,
    path: PathBuf,
    buffer: Vec<u8>,
    run_id: String,
    database: String,
}

impl Journal {
    /// Creates the journal at `path`, for rows of part `next_part` on.
    pub fn create(path: &Path, run_id: &str, database: &str, next_part: u32) -> Result<Journal> {
        let file =
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        let mut journal = Journal {
            file,
            path: path.to_path_buf(),
            buffer: Vec::with_capacity(1 << 20),
            run_id: run_id.to_string(),
            database: database.to_string(),
        };
        journal.start(next_part)?;
        Ok(journal)
    }

    /// Empties the journal: every row so far is in closed parts; the next go into part
    /// `next_part`.
    pub fn start(&mut self, next_part: u32) -> Result<()> {
        self.buffer.clear();
        let cannot = || format!("cannot write {}", self.path.display());
        self.file.set_len(0).with_context(cannot)?;
        self.file.seek(SeekFrom::Start(0)).with_context(cannot)?;
        self.buffer.extend_from_slice(MAGIC);
        self.buffer.extend_from_slice(&next_part.to_le_bytes());
        for text in [&self.run_id, &self.database] {
            self.buffer
                .extend_from_slice(&(text.len() as u16).to_le_bytes());
            self.buffer.extend_from_slice(text.as_bytes());
        }
        self.flush()
    }

    /// Adds a row to what the next [`Self::flush`] writes.
    pub fn push(&mut self, op: &LoggedOp) {
        let b = &mut self.buffer;
        let at = b.len();
        b.extend_from_slice(&0u32.to_le_bytes());
        for value in [op.seq, op.target, op.sent_ns, op.latency_ns] {
            b.extend_from_slice(&value.to_le_bytes());
        }
        b.extend_from_slice(&op.attempts.to_le_bytes());
        b.extend_from_slice(&op.node.to_le_bytes());
        let flags = if op.error.is_some() { FAILED } else { 0 }
            | if op.intended_start_ns.is_some() {
                DUE
            } else {
                0
            }
            | if op.queue_ns.is_some() { QUEUED } else { 0 }
            | if op.error_code.is_some() { CODE } else { 0 };
        b.push(flags);
        for value in [op.intended_start_ns, op.queue_ns].into_iter().flatten() {
            b.extend_from_slice(&value.to_le_bytes());
        }
        short_text(b, op.event_type);
        if let Some((kind, message)) = &op.error {
            short_text(b, kind);
            b.extend_from_slice(&(message.len() as u32).to_le_bytes());
            b.extend_from_slice(message.as_bytes());
        }
        if let Some(code) = &op.error_code {
            short_text(b, code);
        }
        let len = (b.len() - at - 4) as u32;
        b[at..at + 4].copy_from_slice(&len.to_le_bytes());
    }

    /// Bytes pushed and not yet written.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Hands what was pushed to the file, where a killed process leaves it.
    pub fn flush(&mut self) -> Result<()> {
        self.file
            .write_all(&self.buffer)
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        self.buffer.clear();
        Ok(())
    }

    /// Removes the journal: every row is in closed parts.
    pub fn remove(self) -> Result<()> {
        std::fs::remove_file(&self.path)
            .with_context(|| format!("cannot remove {}", self.path.display()))
    }
}

/// A text of at most 255 bytes (names and codes; a longer one is cut at a character).
fn short_text(b: &mut Vec<u8>, text: &str) {
    let mut end = text.len().min(255);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    b.push(end as u8);
    b.extend_from_slice(&text.as_bytes()[..end]);
}

/// What a journal's header says.
pub struct JournalHead {
    /// The part its rows belong in.
    pub next_part: u32,
    pub run_id: String,
    pub database: String,
}

/// A journal being read.
pub struct JournalReader {
    input: BufReader<File>,
    path: PathBuf,
    row: Vec<u8>,
}

/// Opens the journal at `path`: `None` when it holds no header yet (it was being
/// started again when the run was killed, so its rows are all in parts).
pub fn open(path: &Path) -> Result<Option<(JournalHead, JournalReader)>> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut magic = vec![0u8; MAGIC.len()];
    match input.read_exact(&mut magic) {
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(None),
        read => read.with_context(|| format!("cannot read {}", path.display()))?,
    }
    if magic != MAGIC {
        bail!("{} is not a hatshop op log journal", path.display());
    }
    let mut reader = JournalReader {
        input,
        path: path.to_path_buf(),
        row: Vec::new(),
    };
    let head = (|| -> Result<Option<JournalHead>> {
        let Some(part) = reader.exact(4)? else {
            return Ok(None);
        };
        let next_part = u32::from_le_bytes(part.try_into().expect("4 bytes"));
        let mut texts = Vec::new();
        for _ in 0..2 {
            let Some(len) = reader.exact(2)? else {
                return Ok(None);
            };
            let len = u16::from_le_bytes(len.try_into().expect("2 bytes")) as usize;
            let Some(text) = reader.exact(len)? else {
                return Ok(None);
            };
            texts.push(String::from_utf8_lossy(text).into_owned());
        }
        let database = texts.pop().unwrap_or_default();
        let run_id = texts.pop().unwrap_or_default();
        Ok(Some(JournalHead {
            next_part,
            run_id,
            database,
        }))
    })()?;
    Ok(head.map(|head| (head, reader)))
}

impl JournalReader {
    /// The next `len` bytes; `None` at the end (or where the kill cut the file).
    fn exact(&mut self, len: usize) -> Result<Option<&[u8]>> {
        self.row.resize(len, 0);
        match self.input.read_exact(&mut self.row) {
            Ok(()) => Ok(Some(&self.row)),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", self.path.display())),
        }
    }

    /// The next row, or the end: the file's, or a row the kill cut.
    pub fn next(&mut self) -> Result<JournalRow> {
        let Some(len) = self.exact(4)? else {
            return Ok(JournalRow::End);
        };
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let path = self.path.clone();
        let Some(row) = self.exact(len)? else {
            return Ok(JournalRow::Cut);
        };
        decode(row)
            .map(JournalRow::Row)
            .with_context(|| format!("{} holds a row that is not valid", path.display()))
    }
}

/// What [`JournalReader::next`] found.
pub enum JournalRow {
    Row(LoggedOp),
    /// The last row, cut by the kill.
    Cut,
    End,
}

/// A row's fields, read in the order [`Journal::push`] wrote them.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            bail!("a field runs past its row");
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into()?))
    }

    fn u64_if(&mut self, present: bool) -> Result<Option<u64>> {
        present.then(|| self.u64()).transpose()
    }

    fn short_text(&mut self) -> Result<String> {
        let len = self.take(1)?[0] as usize;
        Ok(String::from_utf8_lossy(self.take(len)?).into_owned())
    }
}

fn decode(row: &[u8]) -> Result<LoggedOp> {
    let mut f = Fields(row);
    let (seq, target, sent_ns, latency_ns) = (f.u64()?, f.u64()?, f.u64()?, f.u64()?);
    let attempts = u32::from_le_bytes(f.take(4)?.try_into()?);
    let node = u16::from_le_bytes(f.take(2)?.try_into()?);
    let flags = f.take(1)?[0];
    let intended_start_ns = f.u64_if(flags & DUE != 0)?;
    let queue_ns = f.u64_if(flags & QUEUED != 0)?;
    let event_type = super::event_type(&f.short_text()?)?.as_str();
    let error = if flags & FAILED != 0 {
        let kind = super::error_kind(&f.short_text()?);
        let len = u32::from_le_bytes(f.take(4)?.try_into()?) as usize;
        Some((kind, String::from_utf8_lossy(f.take(len)?).into_owned()))
    } else {
        None
    };
    let error_code = (flags & CODE != 0).then(|| f.short_text()).transpose()?;
    Ok(LoggedOp {
        event_type,
        seq,
        target,
        sent_ns,
        latency_ns,
        error,
        error_code,
        node,
        attempts,
        intended_start_ns,
        queue_ns,
        shard: None,
    })
}
