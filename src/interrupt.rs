//! Ctrl-C and SIGTERM, heard on a thread of their own, so that no stage can miss them
//! (blocking database calls on the async workers once delayed them by seconds).
//!
//! A command that can stop cleanly says so with a [`Listening`] guard, whose callback
//! the signal thread runs at once on the first signal (a run sets its stop flag there,
//! so lanes see it even when every async worker is busy); every wait in hatshop also
//! races [`wait`] or checks [`requested`]. With nobody
//! listening, the first signal ends the process, as it would without hatshop. A second
//! signal always ends the process at once (exit 130), after the last words a command
//! left with [`on_second_signal`] (a run marks its folder interrupted). This module is
//! the one place below `main` that exits the process: that is what a second Ctrl-C is for.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use tokio::sync::watch;

/// Exit code of a run stopped by a signal, as shells expect.
pub const EXIT_CODE: i32 = 130;

type Callback = Box<dyn Fn() + Send>;

static SIGNALS: AtomicUsize = AtomicUsize::new(0);
static NEXT_LISTENER: AtomicUsize = AtomicUsize::new(0);
static LISTENERS: Mutex<Vec<(usize, Callback)>> = Mutex::new(Vec::new());
static LAST_WORDS: Mutex<Option<Box<dyn Fn() + Send>>> = Mutex::new(None);

fn channel() -> &'static watch::Sender<bool> {
    static CHANNEL: OnceLock<watch::Sender<bool>> = OnceLock::new();
    CHANNEL.get_or_init(|| watch::channel(false).0)
}

/// Starts the signal thread; call once, first thing in `main`.
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                let count = SIGNALS.fetch_add(1, Ordering::SeqCst) + 1;
                if count == 1 {
                    let listeners = LISTENERS.lock().unwrap_or_else(|p| p.into_inner());
                    if !listeners.is_empty() {
                        for (_, callback) in listeners.iter() {
                            callback();
                        }
                        channel().send_replace(true);
                        continue;
                    }
                }
                if let Some(words) = LAST_WORDS
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .as_ref()
                {
                    words();
                }
                eprintln!("\nstopped at once by a second signal");
                std::process::exit(EXIT_CODE);
            }
        })?;
    Ok(())
}

/// While alive, the first signal asks to stop instead of ending the process.
pub struct Listening(usize);

impl Listening {
    /// Listens; the signal thread runs `on_signal` at once when the first signal comes.
    pub fn with(on_signal: impl Fn() + Send + 'static) -> Listening {
        let id = NEXT_LISTENER.fetch_add(1, Ordering::SeqCst);
        LISTENERS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((id, Box::new(on_signal)));
        if requested() {
            // The signal came while the listener was being set up: act on it now.
            let listeners = LISTENERS.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((_, callback)) = listeners.iter().find(|(i, _)| *i == id) {
                callback();
            }
        }
        Listening(id)
    }

    /// Listens without a callback: the command checks [`requested`] or awaits [`wait`].
    pub fn new() -> Listening {
        Listening::with(|| {})
    }
}

impl Default for Listening {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        LISTENERS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(id, _)| *id != self.0);
    }
}

/// Whether a signal has come.
pub fn requested() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

/// Resolves once a signal has come.
pub async fn wait() {
    let mut rx = channel().subscribe();
    if requested() {
        return;
    }
    let _ = rx.wait_for(|&stop| stop).await;
}

/// What to do before a second signal ends the process (replaces any earlier words).
pub fn on_second_signal(words: impl Fn() + Send + 'static) {
    *LAST_WORDS.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new(words));
}

/// Forgets the last words (the folder they would mark is complete).
pub fn clear_last_words() {
    *LAST_WORDS.lock().unwrap_or_else(|p| p.into_inner()) = None;
}

/// Sleeps in small steps for a blocking wait (server start), returning early once a
/// signal came; true if it did.
pub fn sleep_unless_requested(duration: std::time::Duration) -> bool {
    let step = std::time::Duration::from_millis(50);
    let end = std::time::Instant::now() + duration;
    while std::time::Instant::now() < end {
        if requested() {
            return true;
        }
        std::thread::sleep(step.min(end.saturating_duration_since(std::time::Instant::now())));
    }
    requested()
}
