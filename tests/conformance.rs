//! One set of checks that every store passes, from the one list of stores: order events
//! created, read, updated and deleted and verified exactly; key-value writes, rewrites
//! and reads verified exactly; an op log whose rows, read by column name, agree with the
//! summary; and a server that cannot be reached, one line within the connect timeout.
//!
//! Each server that starts in seconds (MariaDB, PostgreSQL, Redis) is also started in a
//! home of the test's own and killed mid-run: the run must end, failed, in one line, with
//! every operation that ran in its folder.
//!
//! `null://` and SQLite run in every `cargo test`; the servers' checks need the servers
//! `./test.sh` starts (their URLs in HATSHOP_TEST_*), and fail, never skip, without them.
//! A store added to the list is held to the unreachable-server check at once; its line
//! in `stores!` below gives it the rest.

mod common;

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{
    OwnHome, cassandra as cassandra_url, csv_maps, hatshop, json, lock, op_rows, run_and_verify,
    server, text, url,
};
use tempfile::TempDir;

/// Order events of every type over a few live orders, in four lanes.
const ORDERS: &[&str] = &[
    "-w",
    "hatshop-random",
    "--orders",
    "50",
    "--events",
    "1000",
    "-c",
    "4",
];

/// Writes, rewrites and reads of key-value records, in four lanes.
const KEY_VALUE: &[&str] = &[
    "-w",
    "kv-10w-40rw-50r",
    "--records",
    "300",
    "--warmup",
    "100",
    "--events",
    "1000",
    "-c",
    "4",
];

/// ops.csv, read by column name, holds one row per measured operation of the summary,
/// each of a known event type, none failed.
fn op_log_agrees_with_summary(out: &Path) {
    let summary = json(&out.join("summary.json"));
    let rows = csv_maps(&out.join("ops.csv"));
    assert_eq!(
        Some(rows.len() as u64),
        summary["ops"].as_u64(),
        "{summary}"
    );
    let known: Vec<&str> = summary["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|event| event["event_type"].as_str())
        .collect();
    for row in &rows {
        assert!(
            known.contains(&row["event_type"].as_str()),
            "{row:?} not in {known:?}"
        );
        assert_eq!(row["success"], "true", "{row:?}");
    }
}

/// The checks of a store that keeps data, run against `$db` (an expression, evaluated
/// in each test so a missing server variable fails that test).
macro_rules! store_keeps_what_the_stream_says {
    ($store:ident, $db:expr, $guard:expr $(, $ignore:meta)?) => {
        mod $store {
            use super::*;

            #[test]
            $(#[$ignore])?
            fn orders_verify_exactly() {
                let _guard = $guard;
                let tmp = TempDir::new().unwrap();
                let out = run_and_verify(&tmp, &$db("orders"), ORDERS);
                op_log_agrees_with_summary(&out);
                let verify = json(&out.join("verify.json"));
                assert!(verify["orders_found"].as_u64().unwrap() > 0, "{verify}");
            }

            #[test]
            $(#[$ignore])?
            fn key_value_records_verify_exactly() {
                let _guard = $guard;
                let tmp = TempDir::new().unwrap();
                let out = run_and_verify(&tmp, &$db("kv"), KEY_VALUE);
                op_log_agrees_with_summary(&out);
                let verify = json(&out.join("verify.json"));
                assert!(verify["keys_found"].as_u64().unwrap() >= 300, "{verify}");
            }
        }
    };
}

static MYSQL: Mutex<()> = Mutex::new(());
static POSTGRES: Mutex<()> = Mutex::new(());
static REDIS: Mutex<()> = Mutex::new(());
static VOLDEMORT: Mutex<()> = Mutex::new(());

store_keeps_what_the_stream_says!(sqlite, |_| "sqlite://".to_string(), ());
store_keeps_what_the_stream_says!(
    cassandra,
    |test: &str| cassandra_url(&format!("conformance_{test}")),
    (),
    ignore = "needs a live Cassandra: ./test.sh starts one"
);
store_keeps_what_the_stream_says!(
    mysql,
    |_| url("HATSHOP_TEST_MYSQL"),
    lock(&MYSQL),
    ignore = "needs a live MariaDB: ./test.sh starts one"
);
store_keeps_what_the_stream_says!(
    postgres,
    |_| url("HATSHOP_TEST_POSTGRES"),
    lock(&POSTGRES),
    ignore = "needs a live PostgreSQL: ./test.sh starts one"
);
store_keeps_what_the_stream_says!(
    redis,
    |_| url("HATSHOP_TEST_REDIS"),
    lock(&REDIS),
    ignore = "needs a live Redis: ./test.sh starts one"
);
store_keeps_what_the_stream_says!(
    voldemort,
    |_| url("HATSHOP_TEST_VOLDEMORT"),
    lock(&VOLDEMORT),
    ignore = "needs the suite's Voldemort: ./test.sh starts it"
);

#[test]
fn the_null_store_logs_every_operation_and_keeps_nothing() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("null");
    hatshop(tmp.path())
        .args(["run", "--quiet", "--db", "null://", "--out"])
        .arg(&out)
        .args(ORDERS)
        .assert()
        .success();
    op_log_agrees_with_summary(&out);
    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicates::str::contains("keeps no data"));
}

/// Every store that names a host, from its own example URL with port 1 (nothing
/// listens there): a one-line error that names the URL, well within the timeout.
#[test]
fn every_server_store_out_of_reach_is_one_line_within_the_connect_timeout() {
    let tmp = TempDir::new().unwrap();
    let mut tried = 0;
    for store in hatshop::db::STORES {
        let Some((head, rest)) = store.example.split_once("127.0.0.1:") else {
            continue; // embedded, or no server
        };
        let after_port = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        let db = format!("{head}127.0.0.1:1{after_port}");
        let started = Instant::now();
        let output = hatshop(tmp.path())
            .args(["run", "--db", &db])
            .output()
            .unwrap();
        assert!(!output.status.success(), "{db}");
        assert!(
            started.elapsed() < Duration::from_secs(12),
            "{db} took {:?}",
            started.elapsed()
        );
        let stderr = text(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{db}: {stderr}");
        // The URL as given, up to its settings (which the message lists in order).
        let location = db.split('?').next().unwrap();
        assert!(
            stderr.starts_with(&format!("error: cannot connect to {location}")),
            "{stderr}"
        );
        tried += 1;
    }
    assert!(tried >= 5, "only {tried} stores name a host");
}

/// A `kind` server of the test's own, killed mid-run, that does not come back: once no
/// operation has reached it for three connect timeouts, the run ends as failed, in one
/// line, its folder whole.
fn a_server_gone_for_good_ends_the_run(kind: &str) {
    let home = OwnHome(TempDir::new().unwrap());
    let started = server(home.0.path(), &["start", kind]);
    assert!(started.status.success(), "{}", text(&started.stderr));
    let url = text(&started.stdout).trim().to_string();
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("run");
    let out_arg = out.to_str().unwrap();
    let mut child = common::spawn(
        tmp.path(),
        &[
            "run",
            "--quiet",
            "--db",
            &url,
            "-w",
            "kv-50w-50r",
            "--records",
            "100",
            "--warmup",
            "0",
            "--events",
            "50000000",
            "-c",
            "4",
            "--connect-timeout",
            "1",
            "--out",
            out_arg,
        ],
    );
    common::wait_for_bytes(&out.join("ops.csv"), 20_000);
    let killed = server(home.0.path(), &["kill", kind]);
    assert!(killed.status.success(), "{}", text(&killed.stderr));
    let since_kill = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if since_kill.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("{kind}: the run went on for a minute against a dead server");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // Three connect timeouts of 1 s, and the calls in flight.
    assert!(
        since_kill.elapsed() < Duration::from_secs(15),
        "{kind}: {:?}",
        since_kill.elapsed()
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{kind}: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{kind}: {stderr}");
    assert!(
        errors[0].starts_with("error: the run failed: no operation reached the store for 3 s"),
        "{kind}: {stderr}"
    );
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "failed", "{run}");
    let measured = run["measured_ops"].as_u64().unwrap();
    assert_eq!(op_rows(&out).len() as u64, measured, "{kind}");
    assert!(measured < 50_000_000);
}

#[test]
#[ignore = "needs mariadb-server installed: ./test.sh installs it"]
fn mariadb_gone_for_good_ends_the_run_in_one_line() {
    a_server_gone_for_good_ends_the_run("mariadb");
}

#[test]
#[ignore = "needs postgresql installed: ./test.sh installs it"]
fn postgres_gone_for_good_ends_the_run_in_one_line() {
    a_server_gone_for_good_ends_the_run("postgres");
}

#[test]
#[ignore = "needs redis-server installed: ./test.sh installs it"]
fn redis_gone_for_good_ends_the_run_in_one_line() {
    a_server_gone_for_good_ends_the_run("redis");
}

#[test]
#[ignore = "needs Cassandra's jars: ./test.sh fetches them"]
fn cassandra_gone_for_good_ends_the_run_in_one_line() {
    a_server_gone_for_good_ends_the_run("cassandra");
}

#[test]
#[ignore = "needs Voldemort built from source: ./test.sh builds it"]
fn voldemort_gone_for_good_ends_the_run_in_one_line() {
    a_server_gone_for_good_ends_the_run("voldemort");
}
