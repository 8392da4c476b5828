//! Settings and credential files a store's own tools read (cqlshrc, `~/.my.cnf`), read
//! as those tools read them: a regular file of bounded size, or none.

use std::io;
use std::path::Path;

use crate::regular_file::{SETTINGS_FILE_LIMIT, read_bounded_text};

/// A settings or credential file a store's own tools would read (cqlshrc, `~/.my.cnf`):
/// its text, or `None` where there is none; one that cannot be read as such a file
/// is said in a warning and left out, as those tools leave it.
pub fn read_settings_file(path: &Path) -> Option<String> {
    match read_bounded_text(path, SETTINGS_FILE_LIMIT) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            crate::console::note!("warning: {} {e}: not read", path.display());
            None
        }
    }
}
