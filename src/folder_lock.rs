//! One writer per result folder: an exclusive lock on a file inside it, held until the
//! process ends. Two runs given the same `--out` at once cannot both see the folder
//! empty and write into it; the second is refused at once, told who holds it.
//!
//! The lock is the kernel's (`flock`), so it goes with its process however that ends:
//! a killed run leaves the file but not the lock, and its folder is refused as not empty
//! by what it wrote, not by a stale lock. The same lock keeps `recover`, `report`,
//! `verify` and `export` off a folder another command writes, and tells a live run from
//! a killed one or a copy (whose lock file no process holds).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::Path;
use std::sync::Mutex;

use anyhow::{Result, anyhow, bail};

/// The lock's name in its folder; it also says who took it.
pub const NAME: &str = ".hatshop.lock";

/// Locks held by this process: dropped only when it exits.
static HELD: Mutex<Vec<File>> = Mutex::new(Vec::new());

/// Takes `dir`'s lock (the `what` folder: result, sweep, …) for the rest of the process,
/// then refuses the folder if it holds anything but the lock.
pub fn claim_empty(dir: &Path, what: &str) -> Result<()> {
    let path = dir.join(NAME);
    let cannot = |e: std::io::Error| anyhow!("cannot lock {what} folder {}: {e}", dir.display());
    // A folder of someone else's files is refused as it is, without a lock left in it.
    if !path.exists() && !holds_nothing_else(dir) {
        return Err(not_empty(dir, what));
    }
    let mut file = lock(dir, what, "choose another with --out")?;
    // Checked again under the lock: a run that held it before may have written.
    if !holds_nothing_else(dir) {
        return Err(not_empty(dir, what));
    }
    let holder = format!(
        "hatshop (pid {} on {})",
        std::process::id(),
        crate::procfs::hostname()
    );
    file.set_len(0).map_err(cannot)?;
    file.rewind().map_err(cannot)?;
    file.write_all(holder.as_bytes()).map_err(cannot)?;
    HELD.lock().unwrap_or_else(|p| p.into_inner()).push(file);
    Ok(())
}

/// Takes the lock of the existing folder `dir` for the rest of the process, for a
/// command that writes into it (`recover`, `report`, `verify`, `export`): refused,
/// naming the holder, while another command writes it.
pub fn claim_existing(dir: &Path, what: &str) -> Result<()> {
    let file = lock(dir, what, "try again once it is done")?;
    HELD.lock().unwrap_or_else(|p| p.into_inner()).push(file);
    Ok(())
}

/// Opens `dir`'s lock file (made if need be) and takes its lock; refused, naming the
/// holder and saying what to do (`then`), while another process holds it.
fn lock(dir: &Path, what: &str, then: &str) -> Result<File> {
    let cannot = |e: std::io::Error| anyhow!("cannot lock {what} folder {}: {e}", dir.display());
    let mut file = open_lock_file(dir, true).map_err(cannot)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = match holder.trim() {
                "" => "another hatshop",
                named => named,
            };
            bail!(
                "{what} folder {} is being written by {holder}: {then}",
                dir.display()
            );
        }
        Err(TryLockError::Error(e)) => Err(cannot(e)),
    }
}

/// Whether a process holds `dir`'s lock now (this one included); `None` where the
/// folder has no lock file.
pub fn held(dir: &Path) -> Option<bool> {
    let file = open_lock_file(dir, false).ok()?;
    match file.try_lock_shared() {
        // Let go at once: only asked.
        Ok(()) => Some(false),
        Err(TryLockError::WouldBlock) => Some(true),
        Err(TryLockError::Error(_)) => None,
    }
}

/// Opens (with `create`, makes) `dir`'s lock file as what it must be: a regular file
/// of the folder's own, never through a link (whose target the lock's holder line
/// would overwrite), a FIFO or a device (whose open or write could block or fill).
fn open_lock_file(dir: &Path, create: bool) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(NAME);
    let file = OpenOptions::new()
        .read(true)
        .write(create)
        .create(create)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => std::io::Error::other(format!(
                "{} is a link: hatshop follows no link in a result folder",
                path.display()
            )),
            _ => e,
        })?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(file)
}

fn not_empty(dir: &Path, what: &str) -> anyhow::Error {
    anyhow!(
        "{what} folder {} is not empty: choose another with --out",
        dir.display()
    )
}

/// Whether `dir` holds nothing but its lock (or nothing at all): work that claimed it
/// never wrote into it. A lock that is not a regular file (a link, a FIFO) is something
/// else.
pub fn holds_nothing_else(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(|entry| entry.ok()).all(|entry| {
            entry.file_name() == NAME && entry.file_type().is_ok_and(|kind| kind.is_file())
        })
    })
}
