//! The process's environment and home, as libpq reads them: behind a trait, so a test
//! gives its own.

use std::path::PathBuf;

/// The process's environment and home, as libpq reads them (a test gives its own).
pub trait Environment {
    fn var(&self, name: &str) -> Option<String>;
    fn home(&self) -> Option<PathBuf>;
}

/// The real environment.
pub struct ProcessEnvironment;

impl Environment for ProcessEnvironment {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }

    fn home(&self) -> Option<PathBuf> {
        std::env::var_os("HOME").map(PathBuf::from)
    }
}
