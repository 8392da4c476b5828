//! `ops/_journal`: the rows no closed part holds yet, in hatshop's own format, written
//! as the run goes so that a killed run keeps them. It starts again, empty, each time
//! a part is closed; its header names the part its rows belong in, so a journal whose
//! part was closed before the kill could empty it is known and left out.
//!
//! Each record (the header, then one per row) is framed to prove itself: its length
//! (u32) and that length's CRC-32, its fields (little-endian), then their CRC-32. Only
//! the last record can be cut by a kill (shorter than its length says: left out and
//! counted); a record anywhere that fails a check is damage, which every reader refuses
//! and names by its byte offset, and `recover` keeps the damaged file beside.

use std::fs::File;
use std::io::{BufReader, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::LoggedOp;

/// The journal's file name in `ops/`.
pub const JOURNAL: &str = "_journal";

const MAGIC: &[u8] = b"hatshop op journal 2\n";

/// A record's length and that length's CRC.
const FRAME: usize = 8;

/// Past this a record's length cannot be one hatshop wrote (an error message is cut
/// far below it), whatever its CRC says.
const MAX_RECORD: usize = 16 << 20;

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
        let file = fresh(path, &header(run_id, database, next_part))?;
        Ok(Journal {
            file,
            path: path.to_path_buf(),
            buffer: Vec::with_capacity(1 << 20),
            run_id: run_id.to_string(),
            database: database.to_string(),
        })
    }

    /// Empties the journal: every row so far is in closed parts; the next go into part
    /// `next_part`.
    pub fn start(&mut self, next_part: u32) -> Result<()> {
        self.buffer.clear();
        self.file = fresh(&self.path, &header(&self.run_id, &self.database, next_part))?;
        Ok(())
    }

    /// Adds a row to what the next [`Self::flush`] writes.
    pub fn push(&mut self, op: &LoggedOp) {
        let b = &mut self.buffer;
        let at = open_record(b);
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
        close_record(b, at);
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

/// A journal at `path` that holds `header`, put in place of any before it in one
/// rename: a kill never leaves a journal without its header.
fn fresh(path: &Path, header: &[u8]) -> Result<File> {
    let new = path.with_file_name(format!("{JOURNAL}.new"));
    let cannot = || format!("cannot write {}", path.display());
    let mut file = File::create(&new).with_context(cannot)?;
    file.write_all(header).with_context(cannot)?;
    std::fs::rename(&new, path).with_context(cannot)?;
    Ok(file)
}

/// The magic line and the header record: the part the rows belong in, and their run.
fn header(run_id: &str, database: &str, next_part: u32) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    let at = open_record(&mut b);
    b.extend_from_slice(&next_part.to_le_bytes());
    for text in [run_id, database] {
        let text = &text.as_bytes()[..text.len().min(u16::MAX as usize)];
        b.extend_from_slice(&(text.len() as u16).to_le_bytes());
        b.extend_from_slice(text);
    }
    close_record(&mut b, at);
    b
}

/// Room for a record's frame in `b`; the index its fields start at.
fn open_record(b: &mut Vec<u8>) -> usize {
    b.extend_from_slice(&[0; FRAME]);
    b.len()
}

/// Frames the record whose fields start at `at`: its length and the length's CRC
/// before them, their CRC after.
fn close_record(b: &mut Vec<u8>, at: usize) {
    let len = (b.len() - at) as u32;
    let crc = crc32fast::hash(&b[at..]);
    b.extend_from_slice(&crc.to_le_bytes());
    let frame = &mut b[at - FRAME..at];
    frame[..4].copy_from_slice(&len.to_le_bytes());
    frame[4..].copy_from_slice(&crc32fast::hash(&len.to_le_bytes()).to_le_bytes());
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
    record: Vec<u8>,
    /// The offset of the next record.
    at: u64,
    rows: u64,
}

/// A journal record that fails its checks: not what a kill leaves, so no reader takes
/// the rows after it.
#[derive(Debug)]
pub struct JournalDamage {
    pub path: PathBuf,
    /// The offset of the record that failed.
    pub at: u64,
    /// The whole rows before it.
    pub rows_before: u64,
    /// The most rows the bytes from it to the file's end can have held: the rows the
    /// damage may have taken.
    pub rows_after_at_most: u64,
    pub what: &'static str,
}

/// No row's record is shorter: its frame, four 8-byte fields, its flags and its CRC
/// (its other fields only add to it). Bytes past a damage hold at most this many rows
/// each.
const MIN_ROW_BYTES: u64 = (FRAME + 4 * 8 + 1 + 4) as u64;

impl JournalDamage {
    fn at(path: &Path, at: u64, rows_before: u64, what: &'static str) -> JournalDamage {
        // Read from the file's length now: a journal is not written while it is read.
        let len = std::fs::metadata(path).map_or(at, |m| m.len());
        JournalDamage {
            path: path.to_path_buf(),
            at,
            rows_before,
            rows_after_at_most: len.saturating_sub(at).div_ceil(MIN_ROW_BYTES),
            what,
        }
    }
}

const FAILS_CHECK: &str = "a record fails its checksum";

impl std::fmt::Display for JournalDamage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is damaged at byte {} (after {} whole rows): {}",
            self.path.display(),
            self.at,
            self.rows_before,
            self.what
        )
    }
}

impl std::error::Error for JournalDamage {}

/// Opens the journal at `path`, and reads its header.
pub fn open(path: &Path) -> Result<(JournalHead, JournalReader)> {
    let file =
        crate::files::open_own(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut reader = JournalReader {
        input: BufReader::with_capacity(1 << 20, file),
        path: path.to_path_buf(),
        record: Vec::new(),
        at: 0,
        rows: 0,
    };
    if reader.fill(MAGIC.len())? < MAGIC.len() || reader.record != MAGIC {
        let mut damage = reader.damage(0);
        damage.what = "it does not start as a journal of this hatshop's (damaged, or written \
                       by an older version)";
        return Err(damage.into());
    }
    reader.at = MAGIC.len() as u64;
    let head = match reader.record()? {
        Record::Whole => decode_head(&reader.record),
        _ => None,
    };
    let Some(head) = head else {
        return Err(reader.damage(MAGIC.len() as u64).into());
    };
    Ok((head, reader))
}

fn decode_head(record: &[u8]) -> Option<JournalHead> {
    let mut f = Fields(record);
    let next_part = u32::from_le_bytes(f.take(4).ok()?.try_into().ok()?);
    let mut text = || -> Option<String> {
        let len = u16::from_le_bytes(f.take(2).ok()?.try_into().ok()?) as usize;
        Some(String::from_utf8_lossy(f.take(len).ok()?).into_owned())
    };
    let (run_id, database) = (text()?, text()?);
    Some(JournalHead {
        next_part,
        run_id,
        database,
    })
}

/// What reading one record found.
enum Record {
    /// It is in `record`, its checks passed.
    Whole,
    /// The file ends within it: cut by the kill.
    Cut,
    /// The file ends before it.
    End,
    /// It fails a check.
    Damaged,
}

impl JournalReader {
    /// Reads up to `len` bytes into `record`; how many there were before the end.
    fn fill(&mut self, len: usize) -> Result<usize> {
        self.record.resize(len, 0);
        let mut got = 0;
        while got < len {
            match self.input.read(&mut self.record[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot read {}", self.path.display()));
                }
            }
        }
        self.record.truncate(got);
        Ok(got)
    }

    /// The next record's fields, checked.
    fn record(&mut self) -> Result<Record> {
        match self.fill(FRAME)? {
            0 => return Ok(Record::End),
            n if n < FRAME => return Ok(Record::Cut),
            _ => {}
        }
        let len: [u8; 4] = self.record[..4].try_into().expect("4 bytes");
        let len_crc = u32::from_le_bytes(self.record[4..].try_into().expect("4 bytes"));
        if crc32fast::hash(&len) != len_crc {
            return Ok(Record::Damaged);
        }
        let len = u32::from_le_bytes(len) as usize;
        if len > MAX_RECORD {
            return Ok(Record::Damaged);
        }
        if self.fill(len + 4)? < len + 4 {
            return Ok(Record::Cut);
        }
        let crc = u32::from_le_bytes(self.record[len..].try_into().expect("4 bytes"));
        self.record.truncate(len);
        if crc32fast::hash(&self.record) != crc {
            return Ok(Record::Damaged);
        }
        self.at += (FRAME + len + 4) as u64;
        Ok(Record::Whole)
    }

    /// The record at `at` failed its checks.
    fn damage(&self, at: u64) -> JournalDamage {
        JournalDamage::at(&self.path, at, self.rows, FAILS_CHECK)
    }

    /// The next row, or the end: the file's, or a row the kill cut. A record that
    /// fails its checks is a [`JournalDamage`] error.
    pub fn next(&mut self) -> Result<JournalRow> {
        let at = self.at;
        match self.record()? {
            Record::End => Ok(JournalRow::End),
            Record::Cut => Ok(JournalRow::Cut),
            Record::Damaged => Err(self.damage(at).into()),
            // Checked, yet not a row this hatshop writes: damaged all the same.
            Record::Whole => match decode(&self.record) {
                Ok(row) => {
                    self.rows += 1;
                    Ok(JournalRow::Row(row))
                }
                Err(_) => Err(self.damage(at).into()),
            },
        }
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
