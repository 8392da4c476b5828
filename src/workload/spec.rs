//! The workload spec: what a stream holds, read from TOML or taken from a preset.

use serde::{Deserialize, Serialize};

use super::domain::EventType;
use super::domain::MAX_ORDER_BYTES;
use super::keys::KeyDistribution;
use super::kv::{HEADER, MAX_VALUE_SIZE};
use super::payload::OrderBytes;

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
    /// Key-value records written before anything is measured (after the orders).
    #[serde(default)]
    pub initial_records: u64,
    /// Events of this stream the database already holds: its load and what earlier
    /// runs on that load applied (`--reuse-load` sets it). The stream goes on from
    /// there, so it is the same seeded stream as if one run had sent it all.
    #[serde(default, skip_serializing_if = "is_none")]
    pub held_events: u64,
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
    /// Bytes of every key-value record written.
    #[serde(default = "default_value_size")]
    pub value_size: u32,
    /// Bytes of each new order's payload column, drawn uniformly from a range
    /// (`"200..2000"`) or fixed (`500`); none by default, as the study's order rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_bytes: Option<OrderBytes>,
    /// Lanes run at once, unless `--concurrency` says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    /// Share (0 to 1) of order updates dealt to a lane other than the order's own,
    /// so that two clients race on one order (the study's Galera deadlocks). Not part
    /// of the stream: the same events, dealt differently.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conflicts: f64,
    /// Faults to inject during the measured phase (`[[faults]]` tables).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<super::FaultEntry>,
}

fn is_zero(share: &f64) -> bool {
    *share == 0.0
}

fn is_none(count: &u64) -> bool {
    *count == 0
}

/// Relative weights of the event types (any non-negative numbers).
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
    pub update_items: f64,
    #[serde(default)]
    pub update_status: f64,
    #[serde(default)]
    pub delete_order: f64,
    #[serde(default)]
    pub write: f64,
    #[serde(default)]
    pub rewrite: f64,
    #[serde(default)]
    pub read: f64,
    #[serde(default)]
    pub delete: f64,
}

impl Mix {
    /// An event type's weight in the mix.
    pub fn weight(&self, event: EventType) -> f64 {
        match event {
            EventType::CreateOrder => self.create_order,
            EventType::ReadOrder => self.read_order,
            EventType::UpdateOrder => self.update_order,
            EventType::UpdateItems => self.update_items,
            EventType::UpdateStatus => self.update_status,
            EventType::DeleteOrder => self.delete_order,
            EventType::Write => self.write,
            EventType::Rewrite => self.rewrite,
            EventType::Read => self.read,
            EventType::Delete => self.delete,
        }
    }

    /// The weights' sum.
    pub fn total(&self) -> f64 {
        EventType::ALL.iter().map(|&e| self.weight(e)).sum()
    }

    fn has_order_events(&self) -> bool {
        EventType::ALL[..6].iter().any(|&e| self.weight(e) > 0.0)
    }

    fn has_key_events(&self) -> bool {
        EventType::ALL[6..].iter().any(|&e| self.weight(e) > 0.0)
    }
}

/// Line items per new order, from `min` to `max`.
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

fn default_value_size() -> u32 {
    1500
}

/// A spec that cannot be used, with the reason in words.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("cannot read workload file {path}: {message}")]
    Read { path: String, message: String },
    #[error("workload file {path} is not a valid spec: {message}")]
    Parse { path: String, message: String },
    #[error(
        "unknown workload '{name}'{suggestion}: not a preset (see `hatshop workloads`) and no such file"
    )]
    Unknown { name: String, suggestion: String },
    #[error("{where_}: {problem}")]
    Invalid { where_: String, problem: String },
}

/// A problem with one field of a spec (`mix.write`, `concurrency`, …).
struct FieldProblem {
    field: &'static str,
    problem: String,
}

impl WorkloadSpec {
    /// Parses and validates; `origin` names the file in errors, with the line.
    pub fn from_toml(text: &str, origin: &str) -> Result<WorkloadSpec, SpecError> {
        let spec: WorkloadSpec = toml::from_str(text).map_err(|e| SpecError::Parse {
            path: origin.to_string(),
            message: describe_toml_error(text, &e),
        })?;
        spec.check().map_err(|p| {
            let where_ = match line_of(text, p.field) {
                Some(line) => format!("{origin}: line {line}"),
                None => origin.to_string(),
            };
            SpecError::Invalid {
                where_,
                problem: p.problem,
            }
        })?;
        Ok(spec)
    }

    /// The spec as TOML, to copy and edit.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a spec always serialises to TOML")
    }

    /// Checks a spec that did not come from a file (a preset with overrides).
    pub fn validate(&self) -> Result<(), SpecError> {
        self.check().map_err(|p| SpecError::Invalid {
            where_: format!("workload '{}'", self.name),
            problem: p.problem,
        })
    }

    fn check(&self) -> Result<(), FieldProblem> {
        let problem = |field: &'static str, problem: String| Err(FieldProblem { field, problem });
        for event in EventType::ALL {
            let w = self.mix.weight(event);
            if !w.is_finite() || w < 0.0 {
                return problem(
                    mix_field(event),
                    format!(
                        "mix.{} must be a non-negative number, got {w}",
                        event.as_str()
                    ),
                );
            }
        }
        if self.mix.total() <= 0.0 {
            return problem("mix", "mix weights are all zero".into());
        }
        if self.mix.has_order_events() && self.mix.create_order == 0.0 && self.initial_orders == 0 {
            return problem(
                "mix.create_order",
                "the mix reads, updates or deletes orders but none exist: set initial_orders or mix.create_order".into(),
            );
        }
        if self.mix.has_key_events() && self.mix.write == 0.0 && self.initial_records == 0 {
            return problem(
                "mix.write",
                "the mix reads, rewrites or deletes records but none exist: set initial_records or mix.write".into(),
            );
        }
        if self.items_per_order.min == 0 || self.items_per_order.min > self.items_per_order.max {
            return problem(
                "items_per_order",
                format!(
                    "items_per_order must satisfy 1 <= min <= max, got min = {}, max = {}",
                    self.items_per_order.min, self.items_per_order.max
                ),
            );
        }
        if self.items_per_order.max > 100 {
            return problem(
                "items_per_order",
                "items_per_order.max must be at most 100".into(),
            );
        }
        if !(self.zipf_exponent > 0.0 && self.zipf_exponent.is_finite()) {
            return problem(
                "zipf_exponent",
                "zipf_exponent must be a positive number".into(),
            );
        }
        self.check_value_size()?;
        self.check_order_bytes()?;
        if !(0.0..=1.0).contains(&self.conflicts) {
            return problem(
                "conflicts",
                format!(
                    "conflicts must be a share from 0 to 1, got {}",
                    self.conflicts
                ),
            );
        }
        if let Err(e) = super::faults::check_all(&self.faults) {
            return problem("faults", e);
        }
        if self.concurrency == Some(0) {
            return problem("concurrency", "concurrency must be at least 1".into());
        }
        self.check_held()?;
        if self.total_events() == u64::MAX {
            return problem("events", "the stream is too long".into());
        }
        Ok(())
    }

    /// held_events past the load, or none: a database holds the whole load or none of it.
    fn check_held(&self) -> Result<(), FieldProblem> {
        if self.held_events > 0 && self.held_events < self.load_events() {
            return Err(FieldProblem {
                field: "held_events",
                problem: format!(
                    "held_events = {} is less than the load's {} events: a database holds \
                     the whole load or none of it",
                    self.held_events,
                    self.load_events()
                ),
            });
        }
        Ok(())
    }

    /// value_size within what a record can hold, and given only where records are
    /// written.
    fn check_value_size(&self) -> Result<(), FieldProblem> {
        let problem = |field: &'static str, problem: String| Err(FieldProblem { field, problem });
        if !(HEADER as u32..=MAX_VALUE_SIZE).contains(&self.value_size) {
            return problem(
                "value_size",
                format!(
                    "value_size must be between {HEADER} and {MAX_VALUE_SIZE} bytes, got {}",
                    self.value_size
                ),
            );
        }
        // An order's size is its items (about 100 B, and 60 B an item), never
        // value_size: a size asked of a stream with no records would be recorded in
        // run.json and do nothing.
        if self.value_size != default_value_size() && !self.writes_records() {
            return problem(
                "value_size",
                format!(
                    "value_size = {} sets the size of key-value records, and this workload \
                     writes none: an order's size is set by items_per_order and order_bytes",
                    self.value_size
                ),
            );
        }
        Ok(())
    }

    /// order_bytes within what a payload may be, and given only where orders are made.
    fn check_order_bytes(&self) -> Result<(), FieldProblem> {
        let Some(range) = self.order_bytes else {
            return Ok(());
        };
        let problem = |problem: String| {
            Err(FieldProblem {
                field: "order_bytes",
                problem,
            })
        };
        if range.min > range.max || range.max > MAX_ORDER_BYTES {
            return problem(format!(
                "order_bytes must satisfy 0 <= min <= max <= {MAX_ORDER_BYTES}, got {range}"
            ));
        }
        if self.mix.create_order == 0.0 && self.initial_orders == 0 {
            return problem(format!(
                "order_bytes = {range} sets the size of new orders' payloads, and this \
                 workload makes none: set initial_orders or mix.create_order"
            ));
        }
        Ok(())
    }

    /// Whether any event, preloaded or measured, writes a key-value record: what
    /// value_size sizes.
    fn writes_records(&self) -> bool {
        self.mix.write > 0.0 || self.mix.rewrite > 0.0 || self.initial_records > 0
    }

    /// Whether every event, preloaded or measured, is a key-value one.
    pub fn key_value_only(&self) -> bool {
        !self.mix.has_order_events() && self.initial_orders == 0
    }

    /// Measured events of a run that `--duration` ends: more than any run can send (a
    /// year at 35 million a second), and exact in a JSON reader's doubles.
    pub const WITHOUT_END: u64 = 1 << 50;

    /// Whether the measured phase has no count of its own and ends with its time.
    pub fn without_end(&self) -> bool {
        self.events >= Self::WITHOUT_END
    }

    /// The load's events: the initial orders, then the initial records.
    pub fn load_events(&self) -> u64 {
        self.initial_orders.saturating_add(self.initial_records)
    }

    /// The first event the database does not hold yet: past the load, and past what
    /// earlier runs on it applied.
    pub fn first_unheld(&self) -> u64 {
        self.held_events.max(self.load_events())
    }

    /// Events in all phases: held (or initial data), warm-up and measured.
    pub fn total_events(&self) -> u64 {
        self.first_unheld()
            .saturating_add(self.warmup)
            .saturating_add(self.events)
    }

    /// What shapes this stream's events, whatever its counts: two specs of one shape
    /// give the same events, seq for seq, so a run of one can go on where a run of the
    /// other left the database (`--reuse-load`). Its hash names the shape.
    pub fn shape(&self) -> WorkloadSpec {
        WorkloadSpec {
            name: String::new(),
            description: String::new(),
            held_events: 0,
            warmup: 0,
            events: 0,
            concurrency: None,
            conflicts: 0.0,
            faults: Vec::new(),
            ..self.clone()
        }
    }
}

fn mix_field(event: EventType) -> &'static str {
    match event {
        EventType::CreateOrder => "mix.create_order",
        EventType::ReadOrder => "mix.read_order",
        EventType::UpdateOrder => "mix.update_order",
        EventType::UpdateItems => "mix.update_items",
        EventType::UpdateStatus => "mix.update_status",
        EventType::DeleteOrder => "mix.delete_order",
        EventType::Write => "mix.write",
        EventType::Rewrite => "mix.rewrite",
        EventType::Read => "mix.read",
        EventType::Delete => "mix.delete",
    }
}

/// The line that sets `field` (`table.key`, or a table name, or a top-level key).
fn line_of(text: &str, field: &str) -> Option<usize> {
    let (table, key) = match field.split_once('.') {
        Some((table, key)) => (table, Some(key)),
        None => ("", Some(field)),
    };
    let mut current = "";
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            // `[table]`, or `[[array]]` of tables.
            current = line.trim_start_matches('[').trim_end_matches(']').trim();
            if current == field {
                return Some(number + 1);
            }
            continue;
        }
        let Some((name, _)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim();
        if current == table && Some(name) == key {
            return Some(number + 1);
        }
        // `mix.write = 1` or an inline table at the top level.
        if current.is_empty() && (name == field || name == table) {
            return Some(number + 1);
        }
    }
    None
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
    fn a_value_size_is_refused_where_no_record_is_written() {
        let orders = "name = \"o\"\nevents = 10\nvalue_size = 1024\n[mix]\ncreate_order = 1\n";
        let error = WorkloadSpec::from_toml(orders, "o.toml")
            .unwrap_err()
            .to_string();
        assert!(error.contains("value_size = 1024"), "{error}");
        assert!(error.contains("items_per_order"), "{error}");
        let records = orders.replace("create_order", "write");
        WorkloadSpec::from_toml(&records, "r.toml").unwrap();
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
    fn semantic_errors_name_the_file_and_line() {
        let text = "name = \"x\"\nevents = 10\n[mix]\ncreate_order = 1\nread_order = -2\n";
        let err = WorkloadSpec::from_toml(text, "neg.toml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("neg.toml: line 5: mix.read_order"), "{err}");
        let text = "name = \"x\"\nevents = 10\nconcurrency = 0\n[mix]\ncreate_order = 1\n";
        let err = WorkloadSpec::from_toml(text, "c.toml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("c.toml: line 3: concurrency"), "{err}");
        let text = "name = \"x\"\nevents = 10\n[mix]\n";
        let err = WorkloadSpec::from_toml(text, "zero.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3") && err.contains("all zero"), "{err}");
    }

    #[test]
    fn reads_of_things_that_never_exist_are_refused() {
        let text = "name = \"x\"\nevents = 10\n[mix]\nread_order = 1\n";
        let err = WorkloadSpec::from_toml(text, "r.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("initial_orders"), "{err}");
        let text = "name = \"x\"\nevents = 10\n[mix]\nread = 1\n";
        let err = WorkloadSpec::from_toml(text, "k.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("initial_records"), "{err}");
    }
}
