//! hatshop's statistics in a result folder (summary.json, intervals.csv, latency.hlog)
//! carry their sha256 in `SHA256SUMS`, in sha256sum's own format (`sha256sum -c
//! SHA256SUMS` checks them too), and are read back only through [`read`], which
//! refuses by name a file whose bytes are not the ones hatshop wrote: an edit (a p99
//! below the p50, a count that never ran) is never drawn as a measurement. A seal says
//! the file is as written; it is no signature, and guards against a changed file, not
//! against someone who computes the sums again.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::files::{RESULT_FILE_LIMIT, read_own, write_atomic};

/// The sums of a folder's sealed files.
pub const SHA256SUMS: &str = "SHA256SUMS";

/// The most SHA256SUMS holds: a line per sealed file.
const SUMS_LIMIT: u64 = 64 << 10;

/// Writes SHA256SUMS for `names`, the files of `dir` just written.
pub fn write(dir: &Path, names: &[&str]) -> Result<()> {
    let mut sums = String::new();
    for name in names {
        let path = dir.join(name);
        let bytes = read_own(&path, RESULT_FILE_LIMIT)
            .with_context(|| format!("cannot seal {}", path.display()))?;
        sums.push_str(&format!("{}  {name}\n", sha256_hex(&bytes)));
    }
    write_atomic(&dir.join(SHA256SUMS), sums.as_bytes())
}

/// The bytes of `name` in `dir`, checked against SHA256SUMS. A folder without one
/// reads as it is only where its run.json says it was never sealed (a folder written
/// before hatshop sealed its statistics, or one that has no run.json of its own).
pub fn read(dir: &Path, name: &str) -> Result<Vec<u8>> {
    let path = dir.join(name);
    let bytes = read_own(&path, RESULT_FILE_LIMIT)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let sums_path = dir.join(SHA256SUMS);
    let sums = match read_own(&sums_path, SUMS_LIMIT) {
        Ok(sums) => sums,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if was_sealed(dir) {
                bail!(
                    "{} is gone, though run.json says hatshop sealed this folder's \
                     statistics: {} cannot be shown as the run's",
                    sums_path.display(),
                    path.display()
                );
            }
            return Ok(bytes);
        }
        Err(e) => return Err(anyhow!("cannot read {}: {e}", sums_path.display())),
    };
    let Some(want) = parse(&sums).remove(name) else {
        bail!(
            "{} does not list {name}: it is not a file hatshop wrote here",
            sums_path.display()
        );
    };
    if sha256_hex(&bytes) != want {
        bail!(
            "{} was changed after hatshop wrote it (its sha256 is not the one {SHA256SUMS} \
             gives): its numbers are not shown as the run's",
            path.display()
        );
    }
    Ok(bytes)
}

/// [`read`], parsed as JSON.
pub fn read_json<T: serde::de::DeserializeOwned>(dir: &Path, name: &str) -> Result<T> {
    crate::files::parse_json(&dir.join(name), &read(dir, name)?)
}

/// The sums by file name; lines that are not `SUM  NAME` are passed over.
fn parse(sums: &[u8]) -> HashMap<String, String> {
    String::from_utf8_lossy(sums)
        .lines()
        .filter_map(|line| line.split_once("  "))
        .map(|(sum, name)| (name.to_string(), sum.to_string()))
        .collect()
}

/// Whether the folder's run.json says its statistics were sealed.
fn was_sealed(dir: &Path) -> bool {
    #[derive(Deserialize)]
    struct Sealed {
        #[serde(default)]
        sealed: bool,
    }
    crate::files::read_json::<Sealed>(&dir.join(super::RUN_JSON)).is_ok_and(|r| r.sealed)
}

fn sha256_hex(bytes: &[u8]) -> String {
    crate::workload::hex(&Sha256::digest(bytes))
}
