//! Cassandra's settings: replication, consistency levels, schema variant, batch mode
//! and lightweight transactions, read from `?key=value` and the flags.

use scylla::statement::Consistency;

use super::rows::other;
use crate::db::DbError;
use crate::db::settings::Settings;

const KNOWN: &[&str] = &[
    "rf",
    "replication",
    "cl",
    "read_cl",
    "write_cl",
    "schema",
    "batch",
    "lwt",
];

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

#[derive(Debug, Clone)]
pub struct CassandraOptions {
    /// The CQL replication map of the keyspace.
    pub replication: String,
    pub read_cl: Consistency,
    pub write_cl: Consistency,
    pub schema: Schema,
    pub batch: BatchMode,
    pub lwt: bool,
}

impl CassandraOptions {
    pub fn parse(settings: &Settings) -> Result<Self, DbError> {
        let mut reader = settings.reader("cassandra");
        let rf: Option<u32> = reader.parsed("rf", "a replication factor")?;
        let replication = match (reader.text("replication"), rf) {
            (Some(_), Some(_)) => return Err(other("give either rf or replication, not both")),
            (Some(dcs), None) => network_topology(&dcs)?,
            (None, rf) => format!(
                "{{'class': 'SimpleStrategy', 'replication_factor': {}}}",
                rf.unwrap_or(1)
            ),
        };
        let cl = reader.text("cl");
        // QUORUM on both sides: every read sees the writes before it (R + W > RF).
        let read_cl = consistency(
            &reader
                .text("read_cl")
                .or(cl.clone())
                .unwrap_or("QUORUM".into()),
        )?;
        let write_cl = consistency(&reader.text("write_cl").or(cl).unwrap_or("QUORUM".into()))?;
        let schema = match reader.text("schema").as_deref() {
            None | Some("by-order") => Schema::ByOrder,
            Some("by-item") => Schema::ByItem,
            Some(value) => {
                return Err(other(format!(
                    "schema '{value}': expected by-order or by-item"
                )));
            }
        };
        let batch = match reader.text("batch").as_deref() {
            None | Some("logged") => BatchMode::Logged,
            Some("unlogged") => BatchMode::Unlogged,
            Some("none") => BatchMode::None,
            Some(value) => {
                return Err(other(format!(
                    "batch '{value}': expected logged, unlogged or none"
                )));
            }
        };
        let lwt = reader.parsed("lwt", "true or false")?.unwrap_or(false);
        reader.finish(KNOWN)?;
        Ok(CassandraOptions {
            replication,
            read_cl,
            write_cl,
            schema,
            batch,
            lwt,
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
        vec![
            ("replication", self.replication.clone()),
            ("read_cl", consistency_name(self.read_cl).into()),
            ("write_cl", consistency_name(self.write_cl).into()),
            ("schema", schema.into()),
            ("batch", batch.into()),
            ("lwt", self.lwt.to_string()),
            ("prepared", "true".into()),
        ]
    }
}

/// `dc1:2,dc2:1` → NetworkTopologyStrategy.
fn network_topology(dcs: &str) -> Result<String, DbError> {
    let mut parts = Vec::new();
    for dc in dcs.split(',') {
        let (name, n) = dc
            .split_once(':')
            .ok_or_else(|| other(format!("replication '{dcs}': expected dc1:2,dc2:1")))?;
        let n: u32 = n
            .parse()
            .map_err(|_| other(format!("replication '{dcs}': '{n}' is not a number")))?;
        parts.push(format!("'{name}': {n}"));
    }
    Ok(format!(
        "{{'class': 'NetworkTopologyStrategy', {}}}",
        parts.join(", ")
    ))
}

fn consistency(text: &str) -> Result<Consistency, DbError> {
    Ok(match text.to_ascii_uppercase().as_str() {
        "ANY" => Consistency::Any,
        "ONE" => Consistency::One,
        "TWO" => Consistency::Two,
        "THREE" => Consistency::Three,
        "QUORUM" => Consistency::Quorum,
        "ALL" => Consistency::All,
        "LOCAL_QUORUM" => Consistency::LocalQuorum,
        "EACH_QUORUM" => Consistency::EachQuorum,
        "LOCAL_ONE" => Consistency::LocalOne,
        other_level => {
            return Err(other(format!(
                "unknown consistency level '{other_level}': expected ONE, TWO, THREE, QUORUM, ALL, \
                 LOCAL_QUORUM, EACH_QUORUM, LOCAL_ONE or ANY"
            )));
        }
    })
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
        CassandraOptions::parse(&Settings::new(map))
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
        assert!(
            parse(&[("cl", "MOST")])
                .unwrap_err()
                .message
                .contains("'MOST'")
        );
        assert!(
            parse(&[("rff", "2")])
                .unwrap_err()
                .message
                .contains("unknown setting 'rff'")
        );
        assert!(parse(&[("rf", "2"), ("replication", "dc1:1")]).is_err());
    }
}
