//! Files the user names outside hatshop's folders (`--export-json`, `compare -o`):
//! checked before any work, and written the way `hatshop generate` writes, through a
//! device, a pipe or a link as a stream, never replacing what hatshop did not make.

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, anyhow};

use super::write_atomic;

/// Writes a file the user named outside hatshop's folders (`--export-json`, `compare
/// -o`) the way `hatshop generate` does: a path that exists (a device, a pipe, a link,
/// a file the user made) is written through as a stream, so its type, links and owner
/// stay; a new path is written whole or not at all.
pub fn write_out(path: &Path, bytes: &[u8]) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => {
            let cannot = |e: std::io::Error| anyhow!("cannot write {}: {e}", path.display());
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(path)
                .map_err(cannot)?;
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
/// for `-`, else the file, opened and written through so that a device, a pipe or a
/// link stays what it is; buffered by the megabyte.
pub struct OutStream {
    /// What messages call it: "standard output", or the path.
    pub name: String,
    pub to_stdout: bool,
    pub writer: Box<dyn Write>,
}

impl OutStream {
    /// Opens `target` (`-`: standard output).
    pub fn open(target: &Path) -> Result<OutStream> {
        const BUFFER: usize = 1 << 20;
        if target.as_os_str() == "-" {
            return Ok(OutStream {
                name: "standard output".into(),
                to_stdout: true,
                writer: Box::new(BufWriter::with_capacity(BUFFER, std::io::stdout().lock())),
            });
        }
        let file = std::fs::File::create(target)
            .with_context(|| format!("cannot write {}", target.display()))?;
        Ok(OutStream {
            name: target.display().to_string(),
            to_stdout: false,
            writer: Box::new(BufWriter::with_capacity(BUFFER, file)),
        })
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
