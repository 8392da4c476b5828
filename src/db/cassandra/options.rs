//! Cassandra's settings: replication, consistency levels, schema variant, batch mode
//! and lightweight transactions, declared for the CLI and read once at connect.

use scylla::statement::{Consistency, SerialConsistency};

use crate::db::{DbError, Setting, Settings, Value};

const LEVELS: &[&str] = &[
    "ANY",
    "ONE",
    "TWO",
    "THREE",
    "QUORUM",
    "ALL",
    "LOCAL_QUORUM",
    "EACH_QUORUM",
    "LOCAL_ONE",
];

/// Cassandra's settings: replication, consistency, schema and driver pool, and TLS
/// (login.rs).
pub const SETTINGS: &[Setting] = &[
    Setting {
        name: "rf",
        value: Value::Count { min: 1 },
        default: "1",
        help: "replication factor of the keyspace hatshop creates (SimpleStrategy)",
    },
    Setting {
        name: "replication",
        value: Value::Text("DC:N,…"),
        default: "",
        help: "NetworkTopologyStrategy instead of rf, e.g. dc1:2,dc2:1",
    },
    Setting {
        name: "durable_writes",
        value: Value::Switch,
        default: "true",
        help: "the keyspace's durable_writes: off, writes skip the commit log (a crash loses what is not yet flushed)",
    },
    Setting {
        name: "cl",
        value: Value::Choice(LEVELS),
        default: "QUORUM",
        help: "consistency level of reads and writes",
    },
    Setting {
        name: "read_cl",
        value: Value::Choice(LEVELS),
        default: "",
        help: "consistency level of reads [default: --cl]",
    },
    Setting {
        name: "write_cl",
        value: Value::Choice(LEVELS),
        default: "",
        help: "consistency level of writes [default: --cl]",
    },
    Setting {
        name: "schema",
        value: Value::Choice(&["by-order", "by-item"]),
        default: "by-order",
        help: "table design: items partitioned by order (query-first) or each item its own partition",
    },
    Setting {
        name: "batch",
        value: Value::Choice(&["logged", "unlogged", "none"]),
        default: "logged",
        help: "how the statements of one event are sent: a logged or unlogged batch, or all at once (async)",
    },
    Setting {
        name: "lwt",
        value: Value::Switch,
        default: "false",
        help: "update_status as a lightweight transaction (IF EXISTS)",
    },
    Setting {
        name: "timestamps",
        value: Value::Choice(&["client", "server"]),
        default: "client",
        help: "who stamps writes for last-write-wins: this client, monotonically (the Java driver's default), or each coordinator, whose clocks can order two quick writes of one client backwards",
    },
    Setting {
        name: "driver_retries",
        value: Value::Choice(&["none", "default"]),
        default: "none",
        help: "none: a failed request fails (hatshop's --retries repeats it, counted); default: the driver's DefaultRetryPolicy, which silently retries some timeouts and Unavailable inside the timed call",
    },
    Setting {
        name: "serial_cl",
        value: Value::Choice(&["SERIAL", "LOCAL_SERIAL"]),
        default: "SERIAL",
        help: "consistency of the Paxos round of a lightweight transaction (with --lwt)",
    },
    super::login::SSL,
    super::login::SSL_VERIFY,
    crate::db::tls::FILE_SETTINGS[0],
    crate::db::tls::FILE_SETTINGS[1],
    crate::db::tls::FILE_SETTINGS[2],
];

/// Where an order's line items live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// Items in `line_items_by_order`, one partition per order.
    ByOrder,
    /// Each item its own partition of `line_items`; the order lists its item ids.
    ByItem,
}

/// How the statements of one event are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchMode {
    Logged,
    Unlogged,
    /// Every statement on its own, all in flight at once.
    None,
}

/// Cassandra's settings, read and checked.
#[derive(Debug, Clone)]
pub struct CassandraOptions {
    /// The CQL replication map of the keyspace.
    pub replication: String,
    /// Whether the keyspace's writes go through the commit log.
    pub durable_writes: bool,
    pub read_cl: Consistency,
    pub write_cl: Consistency,
    pub schema: Schema,
    pub batch: BatchMode,
    pub lwt: bool,
    pub serial_cl: SerialConsistency,
    /// Client-side monotonic write timestamps (else the coordinators').
    pub client_timestamps: bool,
    /// The driver's own (silent) retries; off by default.
    pub driver_retries: bool,
}

impl CassandraOptions {
    /// Reads the settings; rules between them (rf or replication, not both) are checked here.
    pub fn parse(settings: &Settings) -> Result<Self, DbError> {
        let replication = match (
            settings.given_text("replication"),
            settings.given_text("rf"),
        ) {
            (Some(_), Some(_)) => {
                return Err(DbError::other("give either rf or replication, not both"));
            }
            (Some(dcs), None) => network_topology(dcs)?,
            (None, _) => format!(
                "{{'class': 'SimpleStrategy', 'replication_factor': {}}}",
                settings.count("rf")
            ),
        };
        let cl = settings.text("cl");
        // QUORUM on both sides by default: every read sees the writes before it (R + W > RF).
        let read_cl = consistency(settings.given_text("read_cl").unwrap_or(cl));
        let write_cl = consistency(settings.given_text("write_cl").unwrap_or(cl));
        if read_cl == Consistency::Any {
            return Err(DbError::other(
                "consistency level ANY is for writes only: give reads another level (--read-cl)",
            ));
        }
        let schema = match settings.choice("schema") {
            "by-item" => Schema::ByItem,
            _ => Schema::ByOrder,
        };
        let batch = match settings.choice("batch") {
            "unlogged" => BatchMode::Unlogged,
            "none" => BatchMode::None,
            _ => BatchMode::Logged,
        };
        Ok(CassandraOptions {
            replication,
            durable_writes: settings.switch("durable_writes"),
            read_cl,
            write_cl,
            schema,
            batch,
            lwt: settings.switch("lwt"),
            client_timestamps: settings.choice("timestamps") != "server",
            driver_retries: settings.choice("driver_retries") == "default",
            serial_cl: match settings.choice("serial_cl").to_ascii_uppercase().as_str() {
                "LOCAL_SERIAL" => SerialConsistency::LocalSerial,
                _ => SerialConsistency::Serial,
            },
        })
    }

    /// The settings as run.json records them.
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        let schema = match self.schema {
            Schema::ByOrder => "by-order",
            Schema::ByItem => "by-item",
        };
        let batch = match self.batch {
            BatchMode::Logged => "logged",
            BatchMode::Unlogged => "unlogged",
            BatchMode::None => "none",
        };
        let mut described = vec![
            ("replication", self.replication.clone()),
            ("durable_writes", self.durable_writes.to_string()),
            ("read_cl", consistency_name(self.read_cl).into()),
            ("write_cl", consistency_name(self.write_cl).into()),
            ("schema", schema.into()),
            ("batch", batch.into()),
            ("lwt", self.lwt.to_string()),
            (
                "timestamps",
                if self.client_timestamps {
                    "client"
                } else {
                    "server"
                }
                .into(),
            ),
            (
                "driver_retries",
                if self.driver_retries {
                    "default"
                } else {
                    "none"
                }
                .into(),
            ),
            ("prepared", "true".into()),
        ];
        if self.lwt {
            let serial = match self.serial_cl {
                SerialConsistency::LocalSerial => "LOCAL_SERIAL",
                SerialConsistency::Serial => "SERIAL",
            };
            described.push(("serial_cl", serial.into()));
        }
        described
    }
}

/// `dc1:2,dc2:1` → NetworkTopologyStrategy.
fn network_topology(dcs: &str) -> Result<String, DbError> {
    let mut parts = Vec::new();
    for dc in dcs.split(',') {
        let (name, n) = dc
            .split_once(':')
            .ok_or_else(|| DbError::other(format!("replication '{dcs}': expected dc1:2,dc2:1")))?;
        let n: u32 = n
            .parse()
            .map_err(|_| DbError::other(format!("replication '{dcs}': '{n}' is not a number")))?;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
        {
            return Err(DbError::other(format!(
                "replication '{dcs}': '{name}' is not a data centre name"
            )));
        }
        parts.push(format!("'{name}': {n}"));
    }
    Ok(format!(
        "{{'class': 'NetworkTopologyStrategy', {}}}",
        parts.join(", ")
    ))
}

/// A level the settings check has already accepted.
fn consistency(text: &str) -> Consistency {
    match text.to_ascii_uppercase().as_str() {
        "ANY" => Consistency::Any,
        "ONE" => Consistency::One,
        "TWO" => Consistency::Two,
        "THREE" => Consistency::Three,
        "ALL" => Consistency::All,
        "LOCAL_QUORUM" => Consistency::LocalQuorum,
        "EACH_QUORUM" => Consistency::EachQuorum,
        "LOCAL_ONE" => Consistency::LocalOne,
        _ => Consistency::Quorum,
    }
}

fn consistency_name(level: Consistency) -> &'static str {
    match level {
        Consistency::Any => "ANY",
        Consistency::One => "ONE",
        Consistency::Two => "TWO",
        Consistency::Three => "THREE",
        Consistency::Quorum => "QUORUM",
        Consistency::All => "ALL",
        Consistency::LocalQuorum => "LOCAL_QUORUM",
        Consistency::EachQuorum => "EACH_QUORUM",
        Consistency::LocalOne => "LOCAL_ONE",
        _ => "OTHER",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn parse(pairs: &[(&str, &str)]) -> Result<CassandraOptions, DbError> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let settings = Settings::checked("cassandra", SETTINGS, map).map_err(DbError::other)?;
        CassandraOptions::parse(&settings)
    }

    #[test]
    fn defaults_are_quorum_by_order_logged() {
        let o = parse(&[]).unwrap();
        assert_eq!(
            (o.read_cl, o.write_cl),
            (Consistency::Quorum, Consistency::Quorum)
        );
        assert_eq!(
            (o.schema, o.batch, o.lwt),
            (Schema::ByOrder, BatchMode::Logged, false)
        );
        assert!(o.replication.contains("'replication_factor': 1"));
        assert!(o.client_timestamps);
        assert!(
            !parse(&[("timestamps", "server")])
                .unwrap()
                .client_timestamps
        );
        // No silent retries unless asked for, and run.json says which.
        assert!(!o.driver_retries);
        assert!(o.describe().contains(&("driver_retries", "none".into())));
        assert!(
            parse(&[("driver_retries", "default")])
                .unwrap()
                .driver_retries
        );
    }

    #[test]
    fn levels_and_replication_are_read() {
        let o = parse(&[
            ("cl", "all"),
            ("write_cl", "ONE"),
            ("replication", "dc1:2,dc2:1"),
        ])
        .unwrap();
        assert_eq!(
            (o.read_cl, o.write_cl),
            (Consistency::All, Consistency::One)
        );
        assert!(o.replication.contains("'dc1': 2, 'dc2': 1"));
    }

    #[test]
    fn bad_settings_are_named() {
        let err = parse(&[("cl", "MOST")]).unwrap_err().message;
        assert!(err.contains("cl=MOST") && err.contains("QUORUM"), "{err}");
        let err = parse(&[("rff", "2")]).unwrap_err().message;
        assert!(err.contains("unknown setting 'rff'"), "{err}");
        assert!(parse(&[("rf", "2"), ("replication", "dc1:1")]).is_err());
        assert!(parse(&[("replication", "dc'1:1")]).is_err());
        let err = parse(&[("read_cl", "ANY")]).unwrap_err().message;
        assert!(err.contains("ANY is for writes only"), "{err}");
        assert!(parse(&[("write_cl", "ANY")]).is_ok());
    }
}
