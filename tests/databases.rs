//! The same checks against every real database: Cassandra, MariaDB, PostgreSQL.
//!
//! These need live servers. `./test.sh` starts them with `hatshop server start …` and
//! passes their URLs in HATSHOP_TEST_CASSANDRA, HATSHOP_TEST_MARIADB and
//! HATSHOP_TEST_POSTGRES; a test whose variable is missing fails, it never skips.
//! Tests on one database take its lock: they share its tables.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::{hatshop, json};
use tempfile::TempDir;

static CASSANDRA: Mutex<()> = Mutex::new(());
static MARIADB: Mutex<()> = Mutex::new(());
static POSTGRES: Mutex<()> = Mutex::new(());

fn lock(m: &'static Mutex<()>) -> MutexGuard<'static, ()> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn url(var: &str) -> String {
    std::env::var(var)
        .unwrap_or_else(|_| panic!("{var} is not set: run ./test.sh, which starts the servers"))
}

/// The Cassandra URL with another keyspace (each test its own, so none sees another's tables).
fn cassandra(keyspace: &str) -> String {
    let base = url("HATSHOP_TEST_CASSANDRA");
    let hosts = base
        .trim_start_matches("cassandra://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    format!("cassandra://{hosts}/{keyspace}")
}

fn csv_rows(dir: &Path) -> Vec<csv::StringRecord> {
    csv::Reader::from_path(dir.join("ops.csv"))
        .unwrap()
        .records()
        .map(Result::unwrap)
        .collect()
}

/// A run that must succeed, with verification; returns the result folder.
fn run_and_verify(tmp: &TempDir, db: &str, extra: &[&str]) -> PathBuf {
    let out = tmp.path().join("run");
    let output = hatshop(tmp.path())
        .args([
            "run", "--quiet", "--db", db, "--events", "3000", "--seed", "5", "--verify", "--out",
        ])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{db} {extra:?}: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout.matches("0 missing, 0 extra, 0 differing").count(),
        2,
        "{stdout}"
    );
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["ops"], 3000);
    assert_eq!(summary["errors"], 0, "{summary}");
    assert_eq!(csv_rows(&out).len(), 3000);
    // The separate verify command agrees.
    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .success();
    out
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_by_order_verifies_under_concurrency() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let out = run_and_verify(&tmp, &cassandra("t_by_order"), &["-c", "16"]);
    let run = json(&out.join("run.json"));
    assert_eq!(run["database"]["store"]["settings"]["schema"], "by-order");
    assert_eq!(
        run["database"]["store"]["server_version"]
            .as_str()
            .unwrap()
            .split('.')
            .next(),
        Some("5")
    );
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_by_item_verifies_with_unbatched_async_writes() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let out = run_and_verify(
        &tmp,
        &cassandra("t_by_item"),
        &["-c", "8", "--schema", "by-item", "--batch", "none"],
    );
    assert_eq!(
        json(&out.join("run.json"))["database"]["store"]["settings"]["schema"],
        "by-item"
    );
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_cl_all_on_one_node_succeeds() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let out = run_and_verify(
        &tmp,
        &format!("{}?cl=ALL", cassandra("t_all")),
        &["-c", "8", "--batch", "unlogged"],
    );
    let settings = &json(&out.join("run.json"))["database"]["store"]["settings"];
    assert_eq!(settings["read_cl"], "ALL");
    assert_eq!(settings["write_cl"], "ALL");
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_rf2_on_one_node_is_unavailable_at_quorum_and_all() {
    let _guard = lock(&CASSANDRA);
    for cl in ["QUORUM", "ALL"] {
        let tmp = TempDir::new().unwrap();
        let out = tmp.path().join("run");
        hatshop(tmp.path())
            .args([
                "run",
                "--quiet",
                "--db",
                &cassandra("t_rf2"),
                "--rf",
                "2",
                "--cl",
                cl,
            ])
            .args(["--events", "500", "-c", "8", "--out"])
            .arg(&out)
            .assert()
            .success();
        let summary = json(&out.join("summary.json"));
        assert_eq!(summary["ops"], 500);
        assert_eq!(summary["errors"], 500, "{cl}: {summary}");
        for event in summary["events"].as_array().unwrap() {
            let kinds = event["errors_by_kind"].as_object().unwrap();
            assert_eq!(
                kinds.keys().collect::<Vec<_>>(),
                ["unavailable"],
                "{cl}: {event}"
            );
        }
        assert!(csv_rows(&out).iter().all(|r| &r[8] == "unavailable"));
    }
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_lwt_on_a_missing_order_is_not_applied() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    // Create order 1, then change the status of order 1 (there) and of order 2 (never created).
    let order = r#"{"order_id":1,"client_id":7,"customer":"Ada Hale","address":"1 Felt Street, Luton","created_at_ms":0,"status":"pending","subtotal_cents":999,"items":[{"line_item_id":1,"product":"Fez","colour":"Teal","size":"7","quantity":1,"unit_price_cents":999}]}"#;
    let events = format!(
        "{{\"seq\":0,\"phase\":\"load\",\"op\":{{\"type\":\"create_order\",\"order\":{order}}}}}\n\
         {{\"seq\":1,\"phase\":\"measure\",\"op\":{{\"type\":\"update_status\",\"order_id\":1,\"status\":\"dispatched\"}}}}\n\
         {{\"seq\":2,\"phase\":\"measure\",\"op\":{{\"type\":\"update_status\",\"order_id\":2,\"status\":\"dispatched\"}}}}\n"
    );
    std::fs::write(tmp.path().join("lwt.jsonl"), events).unwrap();
    let out = tmp.path().join("run");
    hatshop(tmp.path())
        .args([
            "run",
            "--quiet",
            "--db",
            &cassandra("t_lwt"),
            "--lwt",
            "--events-file",
            "lwt.jsonl",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let rows = csv_rows(&out);
    let by_seq = |seq: &str| rows.iter().find(|r| &r[3] == seq).unwrap().clone();
    assert_eq!(&by_seq("1")[7], "true");
    assert_eq!(&by_seq("2")[7], "false");
    assert_eq!(&by_seq("2")[8], "not_found");
    // Without IF EXISTS the same update is a blind upsert, and counts as done.
    let plain = tmp.path().join("plain");
    hatshop(tmp.path())
        .args([
            "run",
            "--quiet",
            "--db",
            &cassandra("t_lwt"),
            "--events-file",
            "lwt.jsonl",
            "--out",
        ])
        .arg(&plain)
        .assert()
        .success();
    assert!(csv_rows(&plain).iter().all(|r| &r[7] == "true"));
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mariadb_verifies_with_pool_1_and_4() {
    let _guard = lock(&MARIADB);
    let db = url("HATSHOP_TEST_MARIADB");
    for pool in ["1", "4"] {
        let tmp = TempDir::new().unwrap();
        let out = run_and_verify(&tmp, &db, &["--pool", pool, "-c", "8"]);
        assert_eq!(
            json(&out.join("run.json"))["database"]["store"]["settings"]["pool"],
            pool
        );
    }
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mariadb_wrong_password_gives_one_clear_line() {
    let _guard = lock(&MARIADB);
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_MARIADB").replace("mysql://root@", "mysql://root:n0t-the-pw@");
    let output = hatshop(tmp.path())
        .args(["run", "--db", &db])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("Access denied"), "{stderr}");
    assert!(
        !stderr.contains("n0t-the-pw"),
        "the password leaked: {stderr}"
    );
    // A run that never began leaves no result folder.
    let results = tmp.path().join("results");
    assert!(!results.exists() || std::fs::read_dir(&results).unwrap().next().is_none());
}

#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_verifies_under_concurrency() {
    let _guard = lock(&POSTGRES);
    let tmp = TempDir::new().unwrap();
    run_and_verify(
        &tmp,
        &url("HATSHOP_TEST_POSTGRES"),
        &["-c", "8", "--pool", "8"],
    );
}

#[test]
#[ignore = "needs mariadb-server installed: ./test.sh installs it"]
fn unreachable_databases_fail_fast_with_one_line() {
    let tmp = TempDir::new().unwrap();
    for db in [
        "mysql://root@127.0.0.1:1/hatshop",
        "postgres://postgres@127.0.0.1:1/hatshop",
        "cassandra://127.0.0.1:1/hatshop",
    ] {
        let started = Instant::now();
        let output = hatshop(tmp.path())
            .args(["run", "--db", db])
            .output()
            .unwrap();
        assert!(!output.status.success());
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{db} took {:?}",
            started.elapsed()
        );
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: cannot connect to {db}")),
            "{stderr}"
        );
    }
}

/// `hatshop server …` in a home of its own, so the suite's servers are not touched.
fn server(home: &Path, args: &[&str]) -> std::process::Output {
    StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
        .arg("server")
        .args(args)
        .arg("--home")
        .arg(home)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
#[ignore = "needs mariadb-server installed: ./test.sh installs it"]
fn server_lifecycle_start_status_restart_stop() {
    let home = TempDir::new().unwrap();
    let started = server(home.path(), &["start", "mariadb"]);
    assert!(started.status.success(), "{}", text(&started.stderr));
    let url = text(&started.stdout).trim().to_string();
    assert!(url.starts_with("mysql://root@127.0.0.1:"), "{url}");

    let status = text(&server(home.path(), &["status"]).stdout);
    assert!(
        status.contains("mariadb") && status.contains("running") && status.contains(&url),
        "{status}"
    );

    let again = server(home.path(), &["start", "mariadb"]);
    assert!(again.status.success());
    assert!(
        text(&again.stderr).contains("already running"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(text(&again.stdout).trim(), url);

    let stopped = server(home.path(), &["stop", "--all"]);
    assert!(text(&stopped.stdout).contains("mariadb: stopped"));
    let status = text(&server(home.path(), &["status"]).stdout);
    assert!(
        status.contains("mariadb") && status.contains("stopped") && !status.contains("running"),
        "{status}"
    );
}

#[test]
#[ignore = "needs mariadb-server installed: ./test.sh installs it"]
fn a_server_stopped_mid_run_ends_the_run_cleanly_with_every_operation_logged() {
    let home = TempDir::new().unwrap();
    let started = server(home.path(), &["start", "mariadb"]);
    assert!(started.status.success(), "{}", text(&started.stderr));
    let url = text(&started.stdout).trim().to_string();

    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("run");
    let child = StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
        .current_dir(tmp.path())
        .args([
            "run",
            "--quiet",
            "--db",
            &url,
            "--events",
            "200000",
            "--duration",
            "120",
            "-c",
            "4",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(out.join("ops.csv")).map_or(0, |m| m.len()) < 20_000 {
        assert!(Instant::now() < deadline, "the run never started measuring");
        std::thread::sleep(Duration::from_millis(50));
    }
    let stopped = server(home.path(), &["stop", "mariadb"]);
    assert!(text(&stopped.stdout).contains("stopped"));

    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let run = json(&out.join("run.json"));
    assert!(
        ["finished", "stopped_at_deadline"].contains(&run["status"].as_str().unwrap()),
        "{run}"
    );
    let measured = run["measured_ops"].as_u64().unwrap();
    assert_eq!(csv_rows(&out).len() as u64, measured);
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["ops"].as_u64().unwrap(), measured);
    let connection_errors: u64 = summary["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["errors_by_kind"]["connection"].as_u64().unwrap_or(0))
        .sum();
    assert!(connection_errors > 0, "{summary}");
    assert!(
        summary["errors"].as_u64().unwrap() < measured,
        "some operations succeeded before the stop"
    );
}
