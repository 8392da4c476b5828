//! Text for people, on stdout and stderr, that never stops the work: when the reader
//! goes away (`hatshop run | head -1`) printing stops quietly and the run still
//! finishes its folder. (With SIGPIPE's default action the process died at the first
//! line after the pipe closed; with Rust's `println!` it panicked.)

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// Why standard output could not be written when its reader was still there (a full
/// disk, a device error): the command then ends with that error, never a quiet exit 0.
static STDOUT_FAILED: Mutex<Option<String>> = Mutex::new(None);
/// Standard output carries data for a script (`--export-json -`): text for people goes
/// to standard error instead.
static STDOUT_IS_DATA: AtomicBool = AtomicBool::new(false);

/// From now on, text for people goes to standard error, and standard output carries
/// only what [`data`] writes.
pub fn keep_stdout_for_data() {
    STDOUT_IS_DATA.store(true, Ordering::Relaxed);
}

/// Writes data for a script to stdout (see [`keep_stdout_for_data`]).
pub fn data(text: &str) {
    write_stdout(text);
}

/// Writes `text` to stdout (stderr while stdout carries data); once the reader is gone,
/// writes nothing more.
pub fn out(text: &str) {
    if STDOUT_IS_DATA.load(Ordering::Relaxed) {
        err(text);
        return;
    }
    write_stdout(text);
}

fn write_stdout(text: &str) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let mut failed = STDOUT_FAILED.lock().unwrap_or_else(|p| p.into_inner());
            failed.get_or_insert_with(|| e.to_string());
        }
    }
}

/// Why standard output could not be written, where its reader was there to take it.
pub fn stdout_failure() -> Option<String> {
    STDOUT_FAILED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Writes `text` to stderr, ignoring a closed stderr.
pub fn err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// A line on stdout (`println!` that survives a closed pipe).
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::console::out(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// A line on stderr (`eprintln!` that survives a closed stderr).
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::console::err(&format!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {note, say};

/// How many columns text for people may take: `$COLUMNS` where set (as `ls` reads it),
/// else the width of the terminal it goes to, else no bound (a pipe, a file, a CI log).
pub fn text_width() -> Option<usize> {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0)
    {
        return Some(columns);
    }
    let fd = if STDOUT_IS_DATA.load(Ordering::Relaxed) {
        libc::STDERR_FILENO
    } else {
        libc::STDOUT_FILENO
    };
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ fills the winsize it is given and nothing else; on a file
    // descriptor that is no terminal it fails and leaves it as it was.
    let asked = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) };
    (asked == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}
