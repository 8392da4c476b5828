//! A path opened as what it must be: a regular file, of bounded size where it is read
//! whole (a certificate, a key, a password or settings file, a workload, a result
//! folder's own files). A FIFO or a device given in its place is refused at once, never
//! opened for a read that could block past Ctrl-C (a FIFO with no writer) or fill the
//! memory (`/dev/zero`); a result folder's file is never read through a link.

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The most a certificate, key, password or option file holds: a long certificate
/// chain is tens of kilobytes.
pub const SETTINGS_FILE_LIMIT: u64 = 1 << 20;

/// The bytes of the regular file at `path`, at most `limit` of them; an error that
/// says what the path is instead, or how large.
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_whole(open_regular(path, 0)?, limit)
}

/// The most one of a result folder's own files holds: a day-long run's intervals and
/// histograms are tens of megabytes.
pub const RESULT_FILE_LIMIT: u64 = 1 << 30;

/// [`read_bounded`] for a file hatshop wrote into a result folder: a symbolic link in
/// its place is refused, so that a folder cannot hand hatshop another file's bytes.
pub fn read_own(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_whole(open_own(path)?, limit)
}

/// A file hatshop wrote into a result folder, opened for reading as it is read in
/// parts (the op log's): a regular file, never a link, a FIFO or a device.
pub fn open_own(path: &Path) -> io::Result<File> {
    open_regular(path, libc::O_NOFOLLOW).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => io::Error::other("is a symbolic link, not a file hatshop wrote"),
        _ => e,
    })
}

/// The whole of `file`, at most `limit` bytes.
fn read_whole(file: File, limit: u64) -> io::Result<Vec<u8>> {
    let too_large = || {
        io::Error::other(format!(
            "is larger than a file of its kind may be ({limit} bytes)"
        ))
    };
    let len = file.metadata()?.len();
    if len > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The file at `path`, opened for reading where it is a regular file.
fn open_regular(path: &Path, flags: i32) -> io::Result<File> {
    // Non-blocking, so that opening a FIFO with no writer returns at once; a regular
    // file reads as ever.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | flags)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let kind = meta.file_type();
        let what = if kind.is_dir() {
            "a folder"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a file"
        };
        return Err(io::Error::other(format!("is {what}, not a regular file")));
    }
    Ok(file)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_bounded_text(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_bounded(path, limit)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_folders_and_large_files_are_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("hatshop-bounded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        let _ = std::fs::remove_file(&fifo);
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        let large = dir.join("large");
        std::fs::write(&large, vec![b'x'; 100]).unwrap();
        let small = dir.join("small");
        std::fs::write(&small, b"secret").unwrap();
        let error = |path: &Path, limit| read_bounded(path, limit).unwrap_err().to_string();
        assert_eq!(error(&fifo, 10), "is a FIFO, not a regular file");
        assert_eq!(
            error(Path::new("/dev/zero"), 10),
            "is a device, not a regular file"
        );
        assert_eq!(error(&dir, 10), "is a folder, not a regular file");
        assert!(error(&large, 99).starts_with("is larger than"));
        assert_eq!(read_bounded(&large, 100).unwrap().len(), 100);
        assert_eq!(read_bounded_text(&small, 10).unwrap(), "secret");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
