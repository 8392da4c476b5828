//! An events file, read whole once before a run: every line an event, its counts, and
//! the sha256 of its bytes (so a run and its verify know it did not change).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use super::{EventsFileInfo, EventsReader, Phase, hex, lacks_state};

/// Reads the whole file once: every line must be an event, and the hash is taken.
pub fn check_events_file(path: &Path) -> Result<EventsFileInfo> {
    let file = open_regular(path)?;
    let mut sha = Sha256::new();
    let reader = HashingReader {
        inner: BufReader::with_capacity(1 << 20, file),
        sha: &mut sha,
    };
    let mut events = 0;
    let mut measured_events = 0;
    let mut has_states = true;
    for event in EventsReader::new(BufReader::new(reader), &path.display().to_string()) {
        let event = event?;
        events += 1;
        if event.phase == Phase::Measure {
            measured_events += 1;
        }
        has_states &= !lacks_state(&event.op);
    }
    if events == 0 {
        bail!("events file {} holds no events", path.display());
    }
    let path = path
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", path.display()))?;
    Ok(EventsFileInfo {
        path,
        sha256: hex(&sha.finalize()),
        events,
        measured_events,
        has_states,
    })
}

/// Opens an events file, which must be a regular file: it is read twice (checked and
/// hashed, then replayed) and hashed again by `verify`, which a FIFO, a device or
/// standard input cannot give (and a FIFO with no writer would hold the open).
pub fn open_regular(path: &Path) -> Result<File> {
    let refuse = |what: &str| {
        anyhow::anyhow!(
            "events file {}: {what}, and hatshop reads an events file more than once \
             (checked and hashed, then replayed): save the stream to a file first",
            path.display()
        )
    };
    if path.as_os_str() == "-" {
        return Err(refuse("standard input cannot be read twice"));
    }
    let meta = std::fs::metadata(path)
        .with_context(|| format!("cannot open events file {}", path.display()))?;
    if meta.is_dir() {
        bail!("events file {} is a folder; name a file", path.display());
    }
    if !meta.is_file() {
        return Err(refuse("it is not a regular file (a FIFO or a device)"));
    }
    File::open(path).with_context(|| format!("cannot open events file {}", path.display()))
}

/// The sha256 of a file's bytes.
pub fn file_sha256(path: &Path) -> Result<String> {
    let mut file = open_regular(path)?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
    }
    Ok(hex(&sha.finalize()))
}

/// Hashes every byte read through it.
struct HashingReader<'a, R> {
    inner: R,
    sha: &'a mut Sha256,
}

impl<R: Read> Read for HashingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sha.update(&buf[..n]);
        Ok(n)
    }
}
