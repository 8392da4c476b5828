//! `ops/_parts`: the parts the op log closed, each with its row count and the sha256 of
//! its file, so that a reader takes exactly the parts the run wrote and refuses one that
//! changed, went missing or was added (Parquet pages carry no checksums as the crate
//! writes them). Rewritten whole each time a part closes, before the part takes its
//! readable name; `sha256sum ops/part-*.parquet` gives the same hashes.

use std::io::{self, Read, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// The manifest's file name in `ops/`.
pub const MANIFEST: &str = "_parts";

const HEADER: &str = "hatshop op log parts 1";

/// A closed part as the writer left it.
#[derive(Debug, Clone, PartialEq)]
pub struct PartSum {
    pub index: u32,
    pub rows: u64,
    /// sha256 of the whole file, in lowercase hex.
    pub sha256: String,
}

/// The parts an op log closed, in order.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Manifest {
    pub parts: Vec<PartSum>,
    /// Its writer finished: every row is in these parts, and no journal is left to read.
    pub finished: bool,
}

/// The manifest's last line once its writer finished.
const END: &str = "end";

/// The most a manifest holds: a line per part, and a long run has thousands.
const MOST_MANIFEST_BYTES: u64 = 16 << 20;

impl Manifest {
    /// The manifest in the op log folder `ops`; `None` where there is none.
    pub fn read(ops: &Path) -> Result<Option<Manifest>> {
        let path = ops.join(MANIFEST);
        let text = match crate::files::read_own(&path, MOST_MANIFEST_BYTES) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let damaged = || format!("{} is damaged: its parts cannot be checked", path.display());
        let text = String::from_utf8(text).ok().with_context(damaged)?;
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            bail!("{}", damaged());
        }
        let mut parts = Vec::new();
        let mut finished = false;
        for line in lines {
            if finished {
                bail!("{}", damaged());
            }
            if line == END {
                finished = true;
                continue;
            }
            let part = parse_line(line).with_context(damaged)?;
            if part.index as usize != parts.len() {
                bail!("{}", damaged());
            }
            parts.push(part);
        }
        Ok(Some(Manifest { parts, finished }))
    }

    /// Writes it whole into `ops`: a kill leaves the previous version.
    pub fn write(&self, ops: &Path) -> Result<()> {
        let mut text = format!("{HEADER}\n");
        for part in &self.parts {
            text.push_str(&format!(
                "{} {} {}\n",
                super::names::part_name(part.index),
                part.rows,
                part.sha256
            ));
        }
        if self.finished {
            text.push_str(END);
            text.push('\n');
        }
        crate::files::write_atomic(&ops.join(MANIFEST), text.as_bytes())
    }

    /// The index the next closed part takes.
    pub fn next_part(&self) -> u32 {
        self.parts.len() as u32
    }
}

fn parse_line(line: &str) -> Result<PartSum> {
    let mut fields = line.split(' ');
    let (Some(name), Some(rows), Some(sha256), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        bail!("a line of the wrong shape");
    };
    let index = super::names::part_index(name).context("not a part's name")?;
    if !rows.bytes().all(|b| b.is_ascii_digit()) {
        bail!("not a row count");
    }
    let rows = rows.parse().context("not a row count")?;
    if sha256.len() != 64
        || !sha256
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        bail!("not a sha256");
    }
    Ok(PartSum {
        index,
        rows,
        sha256: sha256.to_string(),
    })
}

/// A writer that hashes what passes through it, so a part's sha256 costs no second
/// read of the file.
pub struct Hashed<W> {
    inner: W,
    sha: Sha256,
}

impl<W: Write> Hashed<W> {
    /// Hashes what is written to `inner`.
    pub fn new(inner: W) -> Self {
        Hashed {
            inner,
            sha: Sha256::new(),
        }
    }

    /// The writer and the hash of all that was written.
    pub fn finish(self) -> (W, String) {
        (self.inner, hex(&self.sha.finalize()))
    }
}

impl<W: Write> Write for Hashed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The sha256 of the file at `path`.
pub fn sha256_of(path: &Path) -> Result<String> {
    let cannot = || format!("cannot read {}", path.display());
    let mut file = crate::files::open_own(path).with_context(cannot)?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).with_context(cannot)?;
        if n == 0 {
            return Ok(hex(&sha.finalize()));
        }
        sha.update(&buf[..n]);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(index: u32) -> PartSum {
        PartSum {
            index,
            rows: 10 + index as u64,
            sha256: format!("{:064x}", index + 1),
        }
    }

    #[test]
    fn a_manifest_reads_back_as_written() {
        let tmp = tempfile::TempDir::new().unwrap();
        assert_eq!(Manifest::read(tmp.path()).unwrap(), None);
        for finished in [false, true] {
            let manifest = Manifest {
                parts: vec![sum(0), sum(1)],
                finished,
            };
            manifest.write(tmp.path()).unwrap();
            assert_eq!(Manifest::read(tmp.path()).unwrap(), Some(manifest));
        }
    }

    #[test]
    fn a_changed_byte_anywhere_is_refused_or_changes_a_checked_value() {
        let tmp = tempfile::TempDir::new().unwrap();
        let manifest = Manifest {
            parts: vec![sum(0), sum(1)],
            finished: true,
        };
        manifest.write(tmp.path()).unwrap();
        let path = tmp.path().join(MANIFEST);
        let bytes = std::fs::read(&path).unwrap();
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x04;
            std::fs::write(&path, &flipped).unwrap();
            // Either refused, or a row count or hash that the part itself then fails.
            if let Ok(Some(read)) = Manifest::read(tmp.path()) {
                assert_ne!(read, manifest, "a flip at byte {at} went unseen");
            }
        }
    }

    #[test]
    fn the_hash_of_what_was_written_is_the_files() {
        let tmp = tempfile::TempDir::new().unwrap();
        let path = tmp.path().join("f");
        let mut writer = Hashed::new(std::fs::File::create(&path).unwrap());
        writer.write_all(b"hatshop").unwrap();
        let (_, sha) = writer.finish();
        assert_eq!(sha, sha256_of(&path).unwrap());
        // `printf hatshop | sha256sum`
        assert_eq!(
            sha,
            "f0d33971d838010bb6d03c8d707c5894d70cd281c36bcf558f730996ba83e054"
        );
    }
}
