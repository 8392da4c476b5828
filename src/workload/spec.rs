//! The workload spec: what a stream holds, read from TOML or taken from a preset.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::domain::EventType;
use super::keys::KeyDistribution;
use super::presets;

/// A workload: everything that decides the event stream, plus the suggested concurrency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Orders created before anything is measured.
    #[serde(default)]
    pub initial_orders: u64,
    /// Events applied after the load and not recorded.
    #[serde(default)]
    pub warmup: u64,
    /// Measured events.
    pub events: u64,
    pub mix: Mix,
    #[serde(default)]
    pub key_distribution: KeyDistribution,
    #[serde(default = "default_zipf_exponent")]
    pub zipf_exponent: f64,
    #[serde(default)]
    pub items_per_order: ItemsPerOrder,
    /// Lanes run at once, unless `--concurrency` says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
}

/// Relative weights of the five event types (any non-negative numbers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Mix {
    #[serde(default)]
    pub create_order: f64,
    #[serde(default)]
    pub read_order: f64,
    #[serde(default)]
    pub update_order: f64,
    #[serde(default)]
    pub update_status: f64,
    #[serde(default)]
    pub delete_order: f64,
}

impl Mix {
    pub fn weight(&self, event: EventType) -> f64 {
        match event {
            EventType::CreateOrder => self.create_order,
            EventType::ReadOrder => self.read_order,
            EventType::UpdateOrder => self.update_order,
            EventType::UpdateStatus => self.update_status,
            EventType::DeleteOrder => self.delete_order,
        }
    }

    pub fn total(&self) -> f64 {
        EventType::ALL.iter().map(|&e| self.weight(e)).sum()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemsPerOrder {
    pub min: u32,
    pub max: u32,
}

impl Default for ItemsPerOrder {
    fn default() -> Self {
        ItemsPerOrder { min: 1, max: 5 }
    }
}

fn default_seed() -> u64 {
    42
}

fn default_zipf_exponent() -> f64 {
    0.99
}

/// A spec that cannot be used, with the reason in words.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("cannot read workload file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("workload file {path} is not a valid spec: {message}")]
    Parse { path: String, message: String },
    #[error("unknown workload '{0}': not a preset (see `hatshop workloads`) and no such file")]
    Unknown(String),
    #[error("workload '{name}': {problem}")]
    Invalid { name: String, problem: String },
}

impl WorkloadSpec {
    /// A preset name or the path of a TOML file.
    pub fn load(name_or_path: &str) -> Result<WorkloadSpec, SpecError> {
        if let Some(spec) = presets::find(name_or_path) {
            return Ok(spec);
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            return Err(SpecError::Unknown(name_or_path.to_string()));
        }
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Read {
            path: name_or_path.to_string(),
            source,
        })?;
        Self::from_toml(&text, name_or_path)
    }

    /// Parses and validates; `origin` names the file in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<WorkloadSpec, SpecError> {
        let spec: WorkloadSpec = toml::from_str(text).map_err(|e| SpecError::Parse {
            path: origin.to_string(),
            message: describe_toml_error(text, &e),
        })?;
        spec.validate()?;
        Ok(spec)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a spec always serialises to TOML")
    }

    pub fn validate(&self) -> Result<(), SpecError> {
        let invalid = |problem: String| SpecError::Invalid {
            name: self.name.clone(),
            problem,
        };
        for event in EventType::ALL {
            let w = self.mix.weight(event);
            if !w.is_finite() || w < 0.0 {
                return Err(invalid(format!(
                    "mix.{} must be a non-negative number, got {w}",
                    event.as_str()
                )));
            }
        }
        if self.mix.total() <= 0.0 {
            return Err(invalid("mix weights are all zero".into()));
        }
        if self.items_per_order.min == 0 || self.items_per_order.min > self.items_per_order.max {
            return Err(invalid(format!(
                "items_per_order must satisfy 1 <= min <= max, got min = {}, max = {}",
                self.items_per_order.min, self.items_per_order.max
            )));
        }
        if self.items_per_order.max > 100 {
            return Err(invalid("items_per_order.max must be at most 100".into()));
        }
        if !(self.zipf_exponent > 0.0 && self.zipf_exponent.is_finite()) {
            return Err(invalid("zipf_exponent must be a positive number".into()));
        }
        if self.concurrency == Some(0) {
            return Err(invalid("concurrency must be at least 1".into()));
        }
        Ok(())
    }

    /// All events of the stream: load, warm-up and measured.
    pub fn total_events(&self) -> u64 {
        self.initial_orders + self.warmup + self.events
    }
}

/// The toml crate's message, reduced to one line that starts with the line number.
fn describe_toml_error(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim().replace('\n', " ");
    match error.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {message}")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_round_trips_through_toml() {
        for spec in presets::all() {
            let again = WorkloadSpec::from_toml(&spec.to_toml(), "test").unwrap();
            assert_eq!(again, spec);
        }
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let text = "name = \"x\"\nevents = 10\n[mix\ncreate_order = 1\n";
        let err = WorkloadSpec::from_toml(text, "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad.toml") && err.contains("line 3"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn an_unknown_field_is_refused() {
        let text = "name = \"x\"\nevents = 10\nevnts = 3\n[mix]\ncreate_order = 1\n";
        let err = WorkloadSpec::from_toml(text, "typo.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3") && err.contains("evnts"), "{err}");
    }

    #[test]
    fn zero_weights_are_refused() {
        let text = "name = \"x\"\nevents = 10\n[mix]\n";
        let err = WorkloadSpec::from_toml(text, "zero.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("all zero"), "{err}");
    }
}
