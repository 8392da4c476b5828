//! `--trace-sample` on the SQL servers: MariaDB's performance_schema times each
//! sampled operation's statements, PostgreSQL's pg_stat_statements gives totals per
//! statement. Both against the real servers `./test.sh` starts (which have them on).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use common::{csv_maps, json, lock, run_and_verify, url};
use tempfile::TempDir;

/// MariaDB's tests share its tables: one at a time.
static MARIADB: Mutex<()> = Mutex::new(());

/// A traced run that verifies, whose run.json names where server times came from.
fn traced_run(tmp: &TempDir, db: &str, extra: &[&str], source: &str) -> PathBuf {
    let out = run_and_verify(tmp, db, extra);
    let said = json(&out.join("run.json"))["server_time"].clone();
    assert!(said.as_str().unwrap().starts_with(source), "{said}");
    out
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mariadb_times_every_sampled_operation_by_its_statements() {
    let _guard = lock(&MARIADB);
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_MYSQL");
    let out = traced_run(
        &tmp,
        &db,
        &["--events", "600", "-c", "2", "--trace-sample", "1.0"],
        "MariaDB performance_schema",
    );
    let traces = csv_maps(&out.join("traces.csv"));
    assert_eq!(traces.len(), 600, "every measured operation was sampled");
    // Per event type: how many statements each sent, and the means.
    let mut by: BTreeMap<String, (Vec<usize>, f64, f64)> = BTreeMap::new();
    for row in &traces {
        let server: f64 = row["server_us"]
            .parse()
            .unwrap_or_else(|_| panic!("no server time: {row:?}"));
        assert!(server > 0.0, "{row:?}");
        let entry = by.entry(row["event_type"].clone()).or_default();
        entry.0.push(row["requests"].parse().unwrap());
        entry.1 += row["client_us"].parse::<f64>().unwrap();
        entry.2 += server;
    }
    assert_eq!(by.len(), 6, "{:?}", by.keys());
    for (event, (statements, client, server)) in &by {
        // One statement alone; a transaction is START TRANSACTION … COMMIT around its own.
        let expected: &[usize] = match event.as_str() {
            "read_order" | "update_order" | "update_status" => &[1],
            "delete_order" => &[4],
            "create_order" => &[3, 4],
            _ => &[4, 5, 6, 7, 8],
        };
        assert!(
            statements.iter().all(|n| expected.contains(n)),
            "{event}: {statements:?}"
        );
        // The server's time is part of what the client waited for, on average.
        assert!(
            server < client,
            "{event}: server {server} vs client {client}"
        );
    }
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<h2>Client and server time</h2>"));
    assert!(report.contains("performance_schema.events_statements_history"));
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mariadb_times_key_value_statements_sent_over_hatshops_own_wire() {
    let _guard = lock(&MARIADB);
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_MYSQL");
    let out = traced_run(
        &tmp,
        &db,
        &[
            "-w",
            "kv-50w-50r",
            "--records",
            "200",
            "--warmup",
            "0",
            "--events",
            "400",
            "-c",
            "2",
            "--trace-sample",
            "1.0",
        ],
        "MariaDB performance_schema",
    );
    let settings = &json(&out.join("run.json"))["database"]["store"]["settings"];
    assert_eq!(settings["kv_wire"], "own", "{settings}");
    let traces = csv_maps(&out.join("traces.csv"));
    assert_eq!(traces.len(), 400, "every measured operation was sampled");
    let (mut client, mut server) = (0.0, 0.0);
    for row in &traces {
        let server_us: f64 = row["server_us"]
            .parse()
            .unwrap_or_else(|_| panic!("no server time: {row:?}"));
        assert!(server_us > 0.0 && row["requests"] == "1", "{row:?}");
        server += server_us;
        client += row["client_us"].parse::<f64>().unwrap();
    }
    // The server's time is part of what the client waited for, on average (one
    // statement's can end a little after its reply left).
    assert!(server < client, "server {server} vs client {client}");
}

#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_statement_totals_count_every_operation_of_the_run() {
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_POSTGRES");
    let out = traced_run(
        &tmp,
        &db,
        &["--events", "600", "--warmup", "0", "--trace-sample", "0.01"],
        "pg_stat_statements",
    );
    let statements = csv_maps(&out.join("server-statements.csv"));
    let summary = json(&out.join("summary.json"));
    let measured = |event: &str| {
        summary["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["event_type"] == event)
            .map_or(0, |e| e["count"].as_u64().unwrap())
    };
    let calls = |event: &str| -> u64 {
        statements
            .iter()
            .filter(|s| s["event_type"] == event && s["once_per_op"] == "true")
            .map(|s| s["calls"].parse::<u64>().unwrap())
            .sum()
    };
    // The server counted each measured operation's statements once: the initial
    // orders went in by COPY, which is no create_order statement.
    for event in [
        "create_order",
        "read_order",
        "update_order",
        "update_status",
        "update_items",
        "delete_order",
    ] {
        assert_eq!(calls(event), measured(event), "{event}: {statements:?}");
    }
    assert!(
        statements
            .iter()
            .any(|s| s["event_type"].is_empty() && s["statement"] == "COMMIT"),
        "{statements:?}"
    );
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<h2>Client and server time</h2>"));
    assert!(report.contains("<table id=\"statements\">"));
}
