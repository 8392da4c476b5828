//! `hatshop load` (study 002's bulk load) on SQLite here, and on the real servers
//! `./test.sh` starts (their URLs in HATSHOP_TEST_*; a missing one fails the test).
//! Each store's tests take its lock: they share its tables.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use common::{assert_one_line_error, cassandra, hatshop, json, lock, text, url};
use hatshop::result_dir::load_record::{BatchRow, BatchTrace};
use tempfile::TempDir;

static CASSANDRA: Mutex<()> = Mutex::new(());
static SQL_AND_REDIS: Mutex<()> = Mutex::new(());

/// batches.csv, by column name through the row type hatshop writes it with.
fn batches(dir: &Path) -> Vec<BatchRow> {
    csv::Reader::from_path(dir.join("batches.csv"))
        .unwrap()
        .deserialize()
        .map(Result::unwrap)
        .collect()
}

/// A load that must succeed; its folder.
fn load(tmp: &TempDir, name: &str, args: &[&str]) -> PathBuf {
    let out = tmp.path().join(name);
    let output = hatshop(tmp.path())
        .args(["load", "-o", out.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    out
}

/// A load that must fail: its one error line, and its folder.
fn failed_load(tmp: &TempDir, name: &str, args: &[&str]) -> (String, PathBuf) {
    let out = tmp.path().join(name);
    let output = hatshop(tmp.path())
        .args(["load", "-o", out.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert!(!output.status.success(), "{args:?} succeeded");
    let stderr = text(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        stderr.trim_end().ends_with(errors[0]),
        "the error comes last: {stderr}"
    );
    // The folder says what happened.
    let record = json(&out.join("load.json"));
    assert_eq!(record["status"], "failed");
    assert_eq!(record["error"].as_str(), errors[0].strip_prefix("error: "));
    (errors[0].to_string(), out)
}

/// The batch size an error line suggests (`--batch-size N`).
fn suggested_batch(line: &str) -> String {
    let after = line
        .split("--batch-size ")
        .nth(1)
        .expect("a suggested --batch-size");
    after.chars().take_while(char::is_ascii_digit).collect()
}

/// Every batch succeeded, the rows add up, and reading back found them all.
fn assert_loaded(out: &Path, rows: u64, batch_count: usize) {
    let batches = batches(out);
    assert_eq!(batches.len(), batch_count, "{}", out.display());
    assert!(batches.iter().all(|b| b.error.is_empty()), "{batches:?}");
    let total: u64 = batches.iter().map(|b| b.rows).sum();
    assert_eq!(total, rows);
    let record = json(&out.join("load.json"));
    assert_eq!(record["status"], "finished");
    assert_eq!(record["totals"]["rows"], rows);
    let check = &record["check"];
    assert_eq!(check["rows_found"], rows, "{check}");
    assert_eq!(check["mismatched"], 0, "{check}");
    assert!(check["sampled"].as_u64().unwrap() >= 100, "{check}");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("Batch latency, mean and max per"));
}

#[test]
fn sqlite_passes_write_new_rows_paced_and_read_back() {
    let tmp = TempDir::new().unwrap();
    let out = load(
        &tmp,
        "paced",
        &[
            "--rows",
            "3000",
            "--batch-size",
            "1000",
            "--repeat",
            "3",
            "--every",
            "300ms",
        ],
    );
    assert_loaded(&out, 9000, 9);
    // Pass k starts no earlier than k × 300 ms.
    for b in batches(&out) {
        assert!(b.start_s >= b.pass as f64 * 0.3 - 0.001, "{b:?}");
    }
    let record = json(&out.join("load.json"));
    assert_eq!(record["plan"]["every_s"], 0.3);
    // A report rewritten from the folder alone.
    let again = hatshop(tmp.path())
        .args(["report", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", text(&again.stderr));
}

#[test]
fn bad_load_flags_are_one_line_each() {
    let tmp = TempDir::new().unwrap();
    for (args, expected) in [
        (
            vec!["load", "--batch-size", "0"],
            "for '--batch-size <ROWS>': it must be at least 1",
        ),
        (
            vec!["load", "--columns", "100"],
            "--columns must be from 1 to 64",
        ),
        (
            vec!["load", "--preset", "seed-003"],
            "no load preset seed-003: the one preset is study-002",
        ),
        (
            vec!["load", "--every", "0s"],
            "--every must be longer than 0 s",
        ),
        (
            vec![
                "load",
                "--db",
                "postgres://127.0.0.1:1/x",
                "--connect-timeout",
                "2",
            ],
            "cannot connect to postgres://127.0.0.1:1/x",
        ),
    ] {
        assert_one_line_error(tmp.path(), &args, expected);
    }
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_150000_rows_in_batches_of_10000_are_15_timed_batches_that_read_back() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let db = cassandra("t_load");
    let out = load(
        &tmp,
        "seed",
        &["--db", &db, "--rows", "150000", "--batch-size", "10000"],
    );
    assert_loaded(&out, 150_000, 15);
    // The node was watched beside the batches, and its GC log read.
    let metrics = std::fs::read_to_string(out.join("server-metrics.csv")).unwrap();
    assert!(metrics.contains("node 1"), "{metrics}");
    let record = json(&out.join("load.json"));
    assert!(record["gc_log"].as_str().is_some(), "{record}");
    assert!(out.join("compactions.csv").exists());
    // One request per batch: loopback carried at least its keys and values.
    for b in batches(&out) {
        let wire = b
            .loopback_bytes
            .expect("loopback bytes of a batch alone in flight");
        assert!(wire >= b.payload_bytes, "{b:?}");
    }
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn a_cassandra_batch_far_over_the_fail_threshold_is_one_line_naming_it_and_what_fits() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let db = cassandra("t_load_limit");
    let (line, out) = failed_load(
        &tmp,
        "over",
        &["--db", &db, "--rows", "60000", "--batch-size", "60000"],
    );
    assert!(line.contains("batch_size_fail_threshold = 4MiB"), "{line}");
    assert_eq!(batches(&out).len(), 1);
    // The batch it says fits, fits.
    let fits = suggested_batch(&line);
    let rows = (fits.parse::<u64>().unwrap() * 2).to_string();
    let ok = load(
        &tmp,
        "fits",
        &[
            "--db",
            &db,
            "--rows",
            &rows,
            "--batch-size",
            &fits,
            "--verify-sample",
            "100",
        ],
    );
    assert_loaded(&ok, rows.parse().unwrap(), 2);
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_single_row_writes_logged_and_traced_batches_read_back() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let db = cassandra("t_load_kinds");
    for kind in ["none", "logged"] {
        let out = load(
            &tmp,
            kind,
            &[
                "--db",
                &db,
                "--rows",
                "4000",
                "--batch-size",
                "1000",
                "--batch-type",
                kind,
                "--verify-sample",
                "200",
            ],
        );
        assert_loaded(&out, 4000, 4);
    }
    // Traced batches: the coordinator's time never exceeds the client's. Small ones:
    // a node busy with trace writes drops some (each row is a trace event).
    let out = load(
        &tmp,
        "traced",
        &[
            "--db",
            &db,
            "--rows",
            "400",
            "--batch-size",
            "100",
            "--trace-sample",
            "1.0",
            "--verify-sample",
            "100",
        ],
    );
    assert_loaded(&out, 400, 4);
    let traces: Vec<BatchTrace> = csv::Reader::from_path(out.join("batch-traces.csv"))
        .unwrap()
        .deserialize()
        .map(Result::unwrap)
        .collect();
    assert_eq!(traces.len(), 4);
    for t in &traces {
        let server = t.server_us.expect("a server time");
        assert!(server > 0.0 && server <= t.client_us, "{t:?}");
    }
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("Client and server time of each traced batch"));
}

#[test]
#[ignore = "needs live MariaDB, PostgreSQL and Redis: ./test.sh starts them"]
fn sql_and_redis_loads_read_back() {
    let _guard = lock(&SQL_AND_REDIS);
    let tmp = TempDir::new().unwrap();
    for (name, db) in [
        ("mysql", url("HATSHOP_TEST_MYSQL")),
        ("postgres", url("HATSHOP_TEST_POSTGRES")),
        ("redis", url("HATSHOP_TEST_REDIS")),
    ] {
        let out = load(
            &tmp,
            name,
            &[
                "--db",
                &db,
                "--rows",
                "20000",
                "--batch-size",
                "5000",
                "-c",
                "2",
            ],
        );
        assert_loaded(&out, 20_000, 4);
    }
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn a_mariadb_batch_over_max_allowed_packet_is_one_line_naming_it() {
    let _guard = lock(&SQL_AND_REDIS);
    let tmp = TempDir::new().unwrap();
    // 200 rows of a 100 kB value: 40 MB of INSERT text, over the 16 MiB default.
    let (line, _) = failed_load(
        &tmp,
        "over",
        &[
            "--db",
            &url("HATSHOP_TEST_MYSQL"),
            "--rows",
            "200",
            "--batch-size",
            "200",
            "--columns",
            "1",
            "--value-size",
            "100000",
        ],
    );
    assert!(
        line.contains("is over the server's max_allowed_packet = "),
        "{line}"
    );
    let fits = suggested_batch(&line);
    load(
        &tmp,
        "fits",
        &[
            "--db",
            &url("HATSHOP_TEST_MYSQL"),
            "--rows",
            &fits,
            "--batch-size",
            &fits,
            "--columns",
            "1",
            "--value-size",
            "100000",
            "--verify-sample",
            "10",
        ],
    );
}
