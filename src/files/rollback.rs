//! A folder's files put back as they were when a command fails part-way.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Files of a folder a command is about to rewrite, kept as they were (each by a hard
/// link, which takes no room on a full disk) until the command is done: dropped
/// without [`Rollback::keep`], every file is put back as it was and those it made are
/// removed, so a command that fails part-way leaves the folder as it found it.
pub struct Rollback {
    /// Each file, and where its previous version is kept (none: it did not exist).
    saved: Vec<(PathBuf, Option<PathBuf>)>,
    kept: bool,
}

impl Rollback {
    /// Keeps the present versions of `names` in `dir`.
    pub fn of(dir: &Path, names: &[&str]) -> Result<Rollback> {
        let mut rollback = Rollback {
            saved: Vec::with_capacity(names.len()),
            kept: false,
        };
        for name in names {
            let path = dir.join(name);
            let before = path.exists().then(|| dir.join(format!(".{name}.before")));
            if let Some(before) = &before {
                let _ = std::fs::remove_file(before);
                std::fs::hard_link(&path, before).with_context(|| {
                    format!("cannot keep {} as it is before changing it", path.display())
                })?;
            }
            rollback.saved.push((path, before));
        }
        Ok(rollback)
    }

    /// The command is done: its new files stay, the previous versions go.
    pub fn keep(mut self) {
        self.kept = true;
        for (_, before) in &self.saved {
            if let Some(before) = before {
                let _ = std::fs::remove_file(before);
            }
        }
    }
}

impl Drop for Rollback {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        for (path, before) in &self.saved {
            let _ = match before {
                Some(before) => std::fs::rename(before, path),
                None => std::fs::remove_file(path),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::write_atomic;

    #[test]
    fn a_rollback_not_kept_puts_every_file_back() {
        let dir = tempfile::TempDir::new().unwrap();
        let (old, new) = (dir.path().join("old.json"), dir.path().join("new.json"));
        std::fs::write(&old, "before").unwrap();
        let rollback = Rollback::of(dir.path(), &["old.json", "new.json"]).unwrap();
        write_atomic(&old, b"after").unwrap();
        write_atomic(&new, b"made").unwrap();
        drop(rollback);
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "before");
        assert!(!new.exists());
        let rollback = Rollback::of(dir.path(), &["old.json", "new.json"]).unwrap();
        write_atomic(&old, b"after").unwrap();
        write_atomic(&new, b"made").unwrap();
        rollback.keep();
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "after");
        assert!(new.exists());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "no previous version is left behind");
    }
}
