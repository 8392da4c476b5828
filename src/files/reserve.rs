//! Room kept on a result folder's disk for the last records of a run.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};

/// Room kept on a folder's disk for its last records: a file of zeros written at the
/// start, removed just before those records, so that a disk that fills up during a run
/// still takes them.
pub struct Reserve {
    path: PathBuf,
}

impl Reserve {
    /// The reserve's name in its folder.
    pub const NAME: &str = ".hatshop-reserve";

    /// Writes `bytes` of zeros into `dir` (written, not sparse: a sparse file keeps no
    /// room).
    pub fn take(dir: &Path, bytes: usize) -> Result<Reserve> {
        let path = dir.join(Self::NAME);
        let reserve = Reserve { path };
        let cannot = |e: std::io::Error| {
            anyhow!(
                "cannot keep {} KiB free in {} for the run's last records: {e}",
                bytes / 1024,
                dir.display()
            )
        };
        let mut file = File::create(&reserve.path).map_err(cannot)?;
        let zeros = vec![0u8; 64 * 1024];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(zeros.len());
            file.write_all(&zeros[..n]).map_err(cannot)?;
            left -= n;
        }
        file.sync_all().map_err(cannot)?;
        Ok(reserve)
    }

    /// Gives the room back, for the records it was kept for.
    pub fn release(self) {}

    /// Removes a reserve a killed process left in `dir`.
    pub fn remove_left(dir: &Path) {
        let _ = std::fs::remove_file(dir.join(Self::NAME));
    }
}

impl Drop for Reserve {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
