//! Files the user names outside hatshop's folders (`--export-json`, `compare -o`):
//! checked before any work, and written the way `hatshop generate` writes, through a
//! device, a pipe or a link as a stream, never replacing what hatshop did not make. A
//! new path is written whole or not at all, and no output is ever opened on a file a
//! result folder holds: its readers need every one.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use super::{Part, write_atomic};

/// The file that makes a folder a result folder.
pub const RUN_RECORD: &str = "run.json";

/// Writes a file the user named outside hatshop's folders (`--export-json`, `compare
/// -o`) the way `hatshop generate` does: a path that exists (a device, a pipe, a link,
/// a file the user made) is written through as a stream, so its type, links and owner
/// stay; a new path is written whole or not at all.
pub fn write_out(path: &Path, bytes: &[u8]) -> Result<()> {
    refuse_result_file(path)?;
    match std::fs::symlink_metadata(path) {
        Ok(_) => {
            let cannot = |e: std::io::Error| anyhow!("cannot write {}: {e}", path.display());
            let mut file = open_through(path)?;
            match file.write_all(bytes).and_then(|()| file.flush()) {
                Err(e) if closed_pipe(&e) => Ok(()),
                written => written.map_err(cannot),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => write_atomic(path, bytes),
        Err(e) => Err(anyhow!("cannot write {}: {e}", path.display())),
    }
}

/// A stream a command writes where the user said (`generate`, `export`): standard output
/// for `-`; a path that exists (a device, a pipe, a link, the user's file) opened and
/// written through so that it stays what it is; a new path written beside under a
/// temporary name and put in place by [`OutStream::finish`], so that a full disk or a
/// kill never leaves it cut. Buffered by the megabyte.
pub struct OutStream {
    /// What messages call it: "standard output", or the path.
    pub name: String,
    pub to_stdout: bool,
    pub writer: BufWriter<Target>,
}

/// Where an [`OutStream`] goes.
pub enum Target {
    Stdout(std::io::StdoutLock<'static>),
    Through(File),
    New(Part),
}

impl Write for Target {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            Target::Stdout(out) => out.write(bytes),
            Target::Through(file) => file.write(bytes),
            Target::New(part) => part.write(bytes),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Target::Stdout(out) => out.flush(),
            Target::Through(file) => file.flush(),
            Target::New(part) => part.flush(),
        }
    }
}

impl OutStream {
    /// Opens `target` (`-`: standard output); refused where it is a file of a result
    /// folder.
    pub fn open(target: &Path) -> Result<OutStream> {
        let (name, to_stdout, target) = if target.as_os_str() == "-" {
            let out = Target::Stdout(std::io::stdout().lock());
            ("standard output".to_string(), true, out)
        } else {
            refuse_result_file(target)?;
            let name = target.display().to_string();
            let out = match std::fs::symlink_metadata(target) {
                Ok(_) => Target::Through(open_through(target)?),
                Err(_) => Target::New(Part::create(target)?),
            };
            (name, false, out)
        };
        Ok(Self::buffered(name, to_stdout, target))
    }

    /// Opens `target`, a file the command itself keeps in a result folder (`export`'s
    /// `ops.csv`): hatshop made it, so a new one replaces it whole, never cut by a kill.
    pub fn open_own(target: &Path) -> Result<OutStream> {
        Ok(Self::buffered(
            target.display().to_string(),
            false,
            Target::New(Part::create(target)?),
        ))
    }

    fn buffered(name: String, to_stdout: bool, target: Target) -> OutStream {
        const BUFFER: usize = 1 << 20;
        OutStream {
            name,
            to_stdout,
            writer: BufWriter::with_capacity(BUFFER, target),
        }
    }

    /// Writes out what is buffered and, for a new path, puts the file in place: an
    /// error (a full disk, a closed device) is the command's, never a quiet exit 0.
    pub fn finish(self) -> Result<()> {
        let name = self.name;
        let target = self.writer.into_inner().map_err(|e| {
            anyhow::Error::new(e.into_error()).context(format!("cannot write {name}"))
        })?;
        match target {
            Target::New(part) => part.commit(),
            Target::Through(file) => file
                .sync_all()
                .or_else(|e| match e.raw_os_error() {
                    // A device or a pipe has nothing to sync.
                    Some(libc::EINVAL | libc::EROFS) => Ok(()),
                    _ => Err(e),
                })
                .with_context(|| format!("cannot write {name}")),
            Target::Stdout(mut out) => out.flush().with_context(|| format!("cannot write {name}")),
        }
    }
}

/// Refuses `path` where it is a file of a result folder (a folder that holds
/// run.json, or one inside it), however it is named (a link, `..`): every file there
/// is read by `report`, `verify`, `export` or `recover`, so none is written over. A
/// new file beside run.json is let be.
pub fn refuse_result_file(path: &Path) -> Result<()> {
    let Some(resolved) = resolved(path) else {
        return Ok(());
    };
    let exists = resolved.exists();
    for (depth, folder) in resolved.ancestors().skip(1).enumerate() {
        if folder.join(RUN_RECORD).is_file() && (depth > 0 || exists) {
            bail!(
                "{} is a file of the result folder {}, which hatshop reads: name a path \
                 outside it",
                path.display(),
                folder.display()
            );
        }
    }
    Ok(())
}

/// `path` with its links and `..` resolved: itself where it exists, else its folder.
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = std::fs::canonicalize(path) {
        return Some(real);
    }
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(folder).ok()?.join(path.file_name()?))
}

/// The longest an output that is a FIFO waits for its reader.
const FIFO_READER_DEADLINE: Duration = Duration::from_secs(30);

/// Opens a path that exists for writing through. A FIFO is opened only once a reader
/// is there: asked again every 50 ms, up to [`FIFO_READER_DEADLINE`], and not past a
/// Ctrl-C or SIGTERM (a plain open would wait for a reader, deaf to both).
fn open_through(path: &Path) -> Result<File> {
    let cannot = || format!("cannot write {}", path.display());
    let is_fifo = std::fs::metadata(path).is_ok_and(|meta| meta.file_type().is_fifo());
    if !is_fifo {
        return OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .with_context(cannot);
    }
    let until = Instant::now() + FIFO_READER_DEADLINE;
    loop {
        match OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
        {
            Ok(file) => {
                // Written as any file from here: a slow reader slows the writes.
                // SAFETY: fcntl on a descriptor this function owns.
                unsafe {
                    let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
                    libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
                }
                return Ok(file);
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
            Err(e) => return Err(e).with_context(cannot),
        }
        if crate::interrupt::requested() {
            bail!("{}: interrupted while waiting for a reader", cannot());
        }
        if Instant::now() >= until {
            bail!(
                "{}: it is a FIFO and nothing read it within {} s",
                cannot(),
                FIFO_READER_DEADLINE.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether `e` is a reader that stopped early (`generate - | head`): it took what it
/// wanted, and the command ends quietly.
pub fn closed_pipe(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

/// Whether `path` is, or will be, a plain file (a new path, a file, or a link to one):
/// what may have files beside it. A device, a pipe or a folder is not.
pub fn is_plain_file(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(meta) => meta.is_file(),
        Err(_) => true,
    }
}

/// Checks before any work that [`write_out`] will be able to write `path`, which
/// `flag` named: one line that says why not, so that no finished run is lost to a
/// typo in an output path.
pub fn check_out(flag: &str, path: &Path) -> Result<()> {
    let refuse = |why: String| anyhow!("{flag} {}: {why}", path.display());
    refuse_result_file(path).map_err(|e| anyhow!("{flag} {e}"))?;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(refuse("is a folder; name a file".into())),
        Ok(_) => writable(path).map_err(|e| refuse(format!("cannot be written ({e})"))),
        // A link whose target is gone, or a path not there yet: its folder must be.
        Err(_) => {
            let folder = match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent,
                _ => Path::new("."),
            };
            if !folder.is_dir() {
                return Err(refuse(format!("there is no folder {}", folder.display())));
            }
            writable(folder).map_err(|e| {
                refuse(format!(
                    "its folder {} cannot be written ({e})",
                    folder.display()
                ))
            })
        }
    }
}

/// Whether this process may write `path`, asked of the kernel without opening it (a
/// pipe opened for writing would wait for its reader).
fn writable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("a NUL byte in the path"))?;
    // SAFETY: `name` is a NUL-terminated path that outlives the call.
    if unsafe { libc::access(name.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
