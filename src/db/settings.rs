//! Store settings: `?key=value` from the URL, overridden by command-line flags. Each
//! binding takes the keys it knows; any key left over is an error that lists them.

use std::collections::BTreeMap;
use std::str::FromStr;

use super::{DbError, ErrorKind};

#[derive(Debug, Clone, Default)]
pub struct Settings {
    values: BTreeMap<String, String>,
}

impl Settings {
    pub fn new(values: BTreeMap<String, String>) -> Self {
        Settings { values }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.values.insert(key.to_string(), value.into());
    }

    /// A view that records which keys a binding used.
    pub fn reader(&self, store: &'static str) -> SettingsReader {
        SettingsReader {
            store,
            left: self.values.clone(),
        }
    }
}

pub struct SettingsReader {
    store: &'static str,
    left: BTreeMap<String, String>,
}

impl SettingsReader {
    pub fn text(&mut self, key: &str) -> Option<String> {
        self.left.remove(key)
    }

    pub fn parsed<T: FromStr>(&mut self, key: &str, expected: &str) -> Result<Option<T>, DbError> {
        match self.left.remove(key) {
            None => Ok(None),
            Some(value) => value.parse().map(Some).map_err(|_| {
                DbError::new(
                    ErrorKind::Other,
                    format!("{} setting {key}={value}: expected {expected}", self.store),
                )
            }),
        }
    }

    /// Fails on keys nobody took.
    pub fn finish(self, known: &[&str]) -> Result<(), DbError> {
        match self.left.keys().next() {
            None => Ok(()),
            Some(key) => Err(DbError::new(
                ErrorKind::Other,
                format!(
                    "unknown setting '{key}' for {}:// (known: {})",
                    self.store,
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            )),
        }
    }
}
