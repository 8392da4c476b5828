//! The same checks against every real database: Cassandra, MariaDB, PostgreSQL, Redis.
//!
//! These need live servers. `./test.sh` starts them with `hatshop server start …` and
//! passes their URLs in HATSHOP_TEST_CASSANDRA, HATSHOP_TEST_MYSQL,
//! HATSHOP_TEST_POSTGRES and HATSHOP_TEST_REDIS; a test whose variable is missing
//! fails, it never skips. Tests on one database take its lock: they share its tables.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{cassandra, csv_rows, hatshop, json, lock, text, url};
use mysql_async::prelude::Queryable;
use tempfile::TempDir;

static CASSANDRA: Mutex<()> = Mutex::new(());
static MYSQL: Mutex<()> = Mutex::new(());
static POSTGRES: Mutex<()> = Mutex::new(());
static REDIS: Mutex<()> = Mutex::new(());

/// A run that must succeed, with verification; returns the result folder.
fn run_and_verify(tmp: &TempDir, db: &str, extra: &[&str]) -> PathBuf {
    let out = tmp.path().join(format!("run{}", extra.len()));
    let _ = std::fs::remove_dir_all(&out);
    let output = hatshop(tmp.path())
        .args([
            "run", "--quiet", "--db", db, "--seed", "5", "--verify", "--out",
        ])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{db} {extra:?}: {}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["errors"], 0, "{db} {extra:?}: {summary}");
    let verify = json(&out.join("verify.json"));
    assert_eq!(
        verify["first_differences"],
        serde_json::json!([]),
        "{verify}"
    );
    // The separate verify command agrees.
    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .success();
    out
}

fn orders(tmp: &TempDir, db: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["--events", "3000"];
    args.extend_from_slice(extra);
    let out = run_and_verify(tmp, db, &args);
    assert_eq!(csv_rows(&out).len(), 3000);
    out
}

const KV_PRESETS: [&str; 4] = [
    "kv-50w-50r",
    "kv-10w-40rw-50r",
    "kv-50rw-50r",
    "kv-90rw-10r",
];

/// Every key-value preset, small, on one store.
fn key_value_presets(db: &str, extra: &[&str]) {
    for preset in KV_PRESETS {
        let tmp = TempDir::new().unwrap();
        let mut args = vec![
            "-w",
            preset,
            "--records",
            "600",
            "--warmup",
            "100",
            "--events",
            "1500",
            "-c",
            "8",
        ];
        args.extend_from_slice(extra);
        let out = run_and_verify(&tmp, db, &args);
        let verify = json(&out.join("verify.json"));
        assert!(
            verify["keys_found"].as_u64().unwrap() >= 600,
            "{preset}: {verify}"
        );
    }
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_by_order_verifies_under_concurrency() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let out = orders(&tmp, &cassandra("t_by_order"), &["-c", "16"]);
    let run = json(&out.join("run.json"));
    assert_eq!(run["database"]["store"]["settings"]["schema"], "by-order");
    assert!(
        run["database"]["store"]["server_version"]
            .as_str()
            .unwrap()
            .starts_with("Apache Cassandra 5."),
        "{run}"
    );
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn a_cassandra_run_samples_the_node_and_reads_its_gc_log() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("watched");
    let output = hatshop(tmp.path())
        .args(["run", "--quiet", "--db", &cassandra("t_watched")])
        .args([
            "--events",
            "1000000",
            "--duration",
            "2.5",
            "-c",
            "8",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    // The node hatshop started, beside the client, once a second.
    let mut reader = csv::Reader::from_path(out.join("server-metrics.csv")).unwrap();
    let rows: Vec<HashMap<String, String>> = reader.deserialize().map(Result::unwrap).collect();
    let node: Vec<&HashMap<String, String>> =
        rows.iter().filter(|r| r["source"] == "node 1").collect();
    assert!(node.len() >= 2, "{rows:?}");
    for r in &node {
        let rss: f64 = r["rss_mb"].parse().unwrap();
        assert!(rss > 100.0, "a Cassandra JVM holds more than 100 MB: {r:?}");
    }
    let busy = node
        .iter()
        .map(|r| r["cpu_pct"].parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    assert!(busy > 5.0, "the node worked: {node:?}");
    assert!(rows.iter().any(|r| r["source"] == "client"));
    // Its GC log was read (no pause in 2.5 s is a valid result; a parse failure is not).
    let run = json(&out.join("run.json"));
    let gc = run["gc_log"].as_str().unwrap();
    assert!(gc.contains(" on 1 node during the run"), "{gc}");
    assert!(out.join("gc.csv").exists());
    // Compactions were read from the node's system.log (none is a valid result).
    let compactions = std::fs::read_to_string(out.join("compactions.csv")).unwrap();
    assert!(compactions.starts_with("node,began_at,at_s,took_ms,keyspace,table,sstables"));
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<h2>Server resources</h2>") && report.contains("CPU over time"));
    assert!(report.contains("<h3>GC pauses</h3>"));
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn every_traced_cassandra_operation_took_the_server_no_longer_than_the_client() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("traced");
    let output = hatshop(tmp.path())
        .args(["run", "--quiet", "--db", &cassandra("t_traced")])
        .args([
            "--events",
            "300",
            "-c",
            "2",
            "--trace-sample",
            "1.0",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let ops = json(&out.join("summary.json"))["ops"].as_u64().unwrap();
    let mut reader = csv::Reader::from_path(out.join("traces.csv")).unwrap();
    let rows: Vec<HashMap<String, String>> = reader.deserialize().map(Result::unwrap).collect();
    // Every measured operation was traced (a failed one has no trace).
    assert!(
        rows.len() as u64 * 100 >= ops * 95,
        "{} of {ops}",
        rows.len()
    );
    for row in &rows {
        let client: f64 = row["client_us"].parse().unwrap();
        let server: f64 = row["server_us"]
            .parse()
            .unwrap_or_else(|_| panic!("no server time: {row:?}"));
        assert!(server > 0.0 && server <= client, "{row:?}");
    }
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<h2>Client and server time</h2>"));
    // Tracing is CQL's: another store says so in one line.
    hatshop(tmp.path())
        .args(["run", "--trace-sample", "0.5"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("Cassandra (CQL tracing) only"));
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_by_item_verifies_with_unbatched_async_writes() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let out = orders(
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
fn cassandra_key_value_presets_verify() {
    let _guard = lock(&CASSANDRA);
    key_value_presets(&cassandra("t_kv"), &[]);
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_cl_all_on_one_node_succeeds() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let out = orders(
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
        // Refused at once: definite failures, not applied.
        let run = json(&out.join("run.json"));
        assert!(run["unmeasured_errors"].as_u64().unwrap() >= 500);
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
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_keyspaces_hatshop_did_not_make_are_left_alone() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    common::assert_one_line_error(
        tmp.path(),
        &["run", "--db", &cassandra("system_auth"), "--events", "10"],
        "refusing to drop keyspace system_auth",
    );
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_verifies_with_pool_1_4_8_names_the_server_and_shows_pool_waits_as_queue() {
    let _guard = lock(&MYSQL);
    let db = url("HATSHOP_TEST_MYSQL");
    for pool in ["1", "4", "8"] {
        let tmp = TempDir::new().unwrap();
        let out = orders(&tmp, &db, &["--pool", pool, "-c", "8"]);
        // Eight lanes on one connection wait for it longer than they are served: the
        // wait is queue time, apart from service time. With a connection per lane,
        // the wait is a pool's bookkeeping, far below a round trip.
        let all = &json(&out.join("summary.json"))["overall"];
        let queue_mean = all["queue"]["mean_us"].as_f64().unwrap();
        match pool {
            "1" => assert!(queue_mean > all["mean_us"].as_f64().unwrap(), "{all}"),
            "8" => assert!(
                all["queue"]["p50_us"].as_f64().unwrap()
                    < all["percentiles_us"]["p50"].as_f64().unwrap() / 5.0,
                "{all}"
            ),
            _ => {}
        }
        let store = &json(&out.join("run.json"))["database"]["store"];
        assert_eq!(store["settings"]["pool"], pool);
        assert_eq!(store["name"], "mysql");
        assert!(
            store["server_version"]
                .as_str()
                .unwrap()
                .starts_with("MariaDB 10."),
            "{store}"
        );
    }
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_key_value_presets_verify() {
    let _guard = lock(&MYSQL);
    key_value_presets(&url("HATSHOP_TEST_MYSQL"), &[]);
}

/// `Com_stmt_prepare` of the MariaDB server.
async fn prepares(url: &str) -> u64 {
    let mut conn = mysql_async::Conn::from_url(url).await.unwrap();
    let row: Option<(String, String)> = conn
        .query_first("SHOW GLOBAL STATUS LIKE 'Com_stmt_prepare'")
        .await
        .unwrap();
    conn.disconnect().await.unwrap();
    row.unwrap().1.parse().unwrap()
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_prepares_each_statement_once_per_connection() {
    let _guard = lock(&MYSQL);
    let db = url("HATSHOP_TEST_MYSQL");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut grew = Vec::new();
    for events in ["1000", "8000"] {
        let before = runtime.block_on(prepares(&db));
        let tmp = TempDir::new().unwrap();
        hatshop(tmp.path())
            .args([
                "run", "--quiet", "--db", &db, "--events", events, "--pool", "4",
            ])
            .assert()
            .success();
        grew.push(runtime.block_on(prepares(&db)) - before);
    }
    // Eight times the operations, the same prepares: setup prepares on every connection.
    assert_eq!(grew[0], grew[1], "prepares grew with operations: {grew:?}");
    assert!(grew[0] < 200, "{grew:?}");
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_tables_hatshop_did_not_make_are_left_alone() {
    let _guard = lock(&MYSQL);
    let db = url("HATSHOP_TEST_MYSQL");
    let base = db.rsplit_once('/').unwrap().0.to_string();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut conn = mysql_async::Conn::from_url(db.as_str()).await.unwrap();
        conn.query_drop(
            "CREATE DATABASE IF NOT EXISTS someone_else; \
             CREATE TABLE IF NOT EXISTS someone_else.orders (id INT); \
             DELETE FROM someone_else.orders; INSERT INTO someone_else.orders VALUES (42)",
        )
        .await
        .unwrap();
        conn.disconnect().await.unwrap();
    });
    let tmp = TempDir::new().unwrap();
    common::assert_one_line_error(
        tmp.path(),
        &[
            "run",
            "--db",
            &format!("{base}/someone_else"),
            "--events",
            "10",
        ],
        "refusing to drop orders",
    );
    runtime.block_on(async {
        let mut conn = mysql_async::Conn::from_url(db.as_str()).await.unwrap();
        let id: Option<i32> = conn
            .query_first("SELECT id FROM someone_else.orders")
            .await
            .unwrap();
        assert_eq!(id, Some(42));
        conn.query_drop("DROP DATABASE someone_else").await.unwrap();
        conn.disconnect().await.unwrap();
    });
}

/// A password with every character that once leaked or broke URL parsing.
const WEIRD_PASSWORD: &str = "p/a?s@s#w%rd";

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn passwords_with_any_character_reach_the_server_and_appear_nowhere() {
    let _guard = lock(&MYSQL);
    let db = url("HATSHOP_TEST_MYSQL");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut conn = mysql_async::Conn::from_url(db.as_str()).await.unwrap();
        conn.query_drop(format!(
            "DROP USER IF EXISTS 'weird'@'127.%'; \
             CREATE USER 'weird'@'127.%' IDENTIFIED BY '{WEIRD_PASSWORD}'; \
             GRANT ALL PRIVILEGES ON hatshop.* TO 'weird'@'127.%'"
        ))
        .await
        .unwrap();
        conn.disconnect().await.unwrap();
    });
    let hosts = db
        .trim_start_matches("mysql://")
        .split_once('@')
        .unwrap()
        .1
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let encoded = "p%2Fa%3Fs%40s%23w%25rd";
    let forms = [
        (
            format!("mysql://weird:{WEIRD_PASSWORD}@{hosts}/hatshop"),
            false,
        ),
        (format!("mysql://weird:{encoded}@{hosts}/hatshop"), false),
        (
            format!("mysql://weird@{hosts}/hatshop?password={encoded}"),
            false,
        ),
        (format!("mysql://weird:{encoded}@{hosts}/hatshop"), true),
    ];
    for (url, through_env) in forms {
        let tmp = TempDir::new().unwrap();
        let out = tmp.path().join("run");
        let mut cmd = hatshop(tmp.path());
        cmd.args(["run", "--events", "500", "--verify", "--out"])
            .arg(&out);
        if through_env {
            cmd.env("HATSHOP_DB", &url);
        } else {
            cmd.args(["--db", &url]);
        }
        let output = cmd.output().unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
        let mut everything = text(&output.stdout) + &text(&output.stderr);
        // verify on its own takes the URL from HATSHOP_DB too (run.json has no password).
        let verify = hatshop(tmp.path())
            .env("HATSHOP_DB", &url)
            .arg("verify")
            .arg(&out)
            .output()
            .unwrap();
        assert!(verify.status.success(), "{}", text(&verify.stderr));
        everything += &(text(&verify.stdout) + &text(&verify.stderr));
        hatshop(tmp.path())
            .arg("report")
            .arg(&out)
            .assert()
            .success();
        for entry in std::fs::read_dir(&out).unwrap() {
            everything += &String::from_utf8_lossy(&std::fs::read(entry.unwrap().path()).unwrap());
        }
        for secret in [WEIRD_PASSWORD, encoded, "s@s#w"] {
            assert!(
                !everything.contains(secret),
                "{url}: '{secret}' appears in the output or folder"
            );
        }
    }
    // A wrong password, in every form, fails in one line that holds no password.
    let tmp = TempDir::new().unwrap();
    let wrong = format!("mysql://weird:{WEIRD_PASSWORD}x@{hosts}/hatshop");
    let output = hatshop(tmp.path())
        .args(["run", "--db", &wrong])
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert!(!output.status.success());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("Access denied"), "{stderr}");
    assert!(!stderr.contains("s@s#w"), "{stderr}");
}

#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_verifies_under_concurrency_and_key_value_presets() {
    let _guard = lock(&POSTGRES);
    let tmp = TempDir::new().unwrap();
    let out = orders(
        &tmp,
        &url("HATSHOP_TEST_POSTGRES"),
        &["-c", "8", "--pool", "8"],
    );
    assert!(
        json(&out.join("run.json"))["database"]["store"]["server_version"]
            .as_str()
            .unwrap()
            .starts_with("PostgreSQL 15"),
    );
    key_value_presets(&url("HATSHOP_TEST_POSTGRES"), &[]);
}

#[test]
#[ignore = "needs a live Redis: ./test.sh starts one"]
fn redis_orders_and_key_value_presets_verify() {
    let _guard = lock(&REDIS);
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_REDIS");
    let out = orders(&tmp, &db, &["-c", "8"]);
    let store = &json(&out.join("run.json"))["database"]["store"];
    assert!(
        store["server_version"]
            .as_str()
            .unwrap()
            .starts_with("Redis "),
        "{store}"
    );
    assert_eq!(store["settings"]["persistence"], "none");
    key_value_presets(&db, &[]);
    key_value_presets(&db, &["--pipeline", "4"]);
}

#[test]
#[ignore = "needs mariadb-server, postgresql and redis-server: ./test.sh installs them"]
fn unreachable_databases_fail_fast_with_one_line() {
    let tmp = TempDir::new().unwrap();
    for db in [
        "mysql://root@127.0.0.1:1/hatshop",
        "postgres://postgres@127.0.0.1:1/hatshop",
        "cassandra://127.0.0.1:1/hatshop",
        "redis://127.0.0.1:1/0",
    ] {
        let started = Instant::now();
        let output = hatshop(tmp.path())
            .args(["run", "--db", db])
            .output()
            .unwrap();
        assert!(!output.status.success());
        assert!(
            started.elapsed() < Duration::from_secs(12),
            "{db} took {:?}",
            started.elapsed()
        );
        let stderr = text(&output.stderr);
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

/// Stops every server of a home when dropped, also when a test fails.
struct OwnHome(TempDir);

impl Drop for OwnHome {
    fn drop(&mut self) {
        server(self.0.path(), &["stop", "--all"]);
    }
}

#[test]
#[ignore = "needs mariadb-server and redis-server: ./test.sh installs them"]
fn server_lifecycle_start_status_restart_stop() {
    let home = OwnHome(TempDir::new().unwrap());
    let home = home.0.path();
    for (kind, prefix) in [
        ("mariadb", "mysql://root@127.0.0.1:"),
        ("redis", "redis://127.0.0.1:"),
    ] {
        let started = server(home, &["start", kind]);
        assert!(started.status.success(), "{}", text(&started.stderr));
        let url = text(&started.stdout).trim().to_string();
        assert!(url.starts_with(prefix), "{url}");
        let again = server(home, &["start", kind]);
        assert!(again.status.success());
        assert!(
            text(&again.stderr).contains("already running"),
            "{}",
            text(&again.stderr)
        );
        assert_eq!(text(&again.stdout).trim(), url);
    }
    let status = text(&server(home, &["status"]).stdout);
    assert!(
        status.contains("mysql") && status.contains("redis"),
        "{status}"
    );
    // One line per server says it runs (node lines follow, indented).
    let running = status
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("running"))
        .count();
    assert_eq!(running, 2, "{status}");
    let nodes_up = status
        .lines()
        .filter(|l| l.trim_start().starts_with("node ") && l.contains(" up "))
        .count();
    assert_eq!(nodes_up, 2, "{status}");
    let stopped = text(&server(home, &["stop", "--all"]).stdout);
    assert!(
        stopped.contains("mysql: stopped") && stopped.contains("redis: stopped"),
        "{stopped}"
    );
    let status = text(&server(home, &["status"]).stdout);
    assert!(!status.contains("running"), "{status}");
}

#[test]
#[ignore = "needs redis-server: ./test.sh installs it"]
fn redis_persistence_lands_in_run_json() {
    let home = OwnHome(TempDir::new().unwrap());
    let started = server(
        home.0.path(),
        &["start", "redis", "--persistence", "aof-everysec"],
    );
    assert!(started.status.success(), "{}", text(&started.stderr));
    let url = text(&started.stdout).trim().to_string();
    let tmp = TempDir::new().unwrap();
    let out = run_and_verify(
        &tmp,
        &url,
        &[
            "-w",
            "kv-50w-50r",
            "--records",
            "100",
            "--warmup",
            "0",
            "--events",
            "300",
        ],
    );
    assert_eq!(
        json(&out.join("run.json"))["database"]["store"]["settings"]["persistence"],
        "aof-everysec"
    );
    let status = text(&server(home.0.path(), &["status"]).stdout);
    assert!(status.contains("persistence=aof-everysec"), "{status}");
}

/// Starts a run in the background against `url`, waits until it measures, runs
/// `fault`, and returns the run's result folder after it ends.
fn run_through(tmp: &TempDir, url: &str, fault: impl FnOnce()) -> PathBuf {
    let out = tmp.path().join("run");
    let child = StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
        .current_dir(tmp.path())
        .args([
            "run",
            "--quiet",
            "--db",
            url,
            "--events",
            "400000",
            "--duration",
            "25",
            "-c",
            "4",
            "--op-timeout",
            "5",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_bytes(&out.join("ops.csv"), 20_000);
    fault();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    out
}

#[test]
#[ignore = "needs mariadb-server installed: ./test.sh installs it"]
fn a_server_stopped_mid_run_ends_the_run_cleanly_with_every_operation_logged() {
    let home = OwnHome(TempDir::new().unwrap());
    let started = server(home.0.path(), &["start", "mariadb"]);
    assert!(started.status.success(), "{}", text(&started.stderr));
    let url = text(&started.stdout).trim().to_string();
    let tmp = TempDir::new().unwrap();
    let out = run_through(&tmp, &url, || {
        let stopped = server(home.0.path(), &["stop", "mariadb"]);
        assert!(text(&stopped.stdout).contains("stopped"));
    });
    let run = json(&out.join("run.json"));
    let measured = run["measured_ops"].as_u64().unwrap();
    assert_eq!(csv_rows(&out).len() as u64, measured);
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["ops"].as_u64().unwrap(), measured);
    // Calls on connections the stop cut (outcome unknown), then calls that found no
    // connection to be had (not sent).
    let kind = |kind: &str| {
        summary["overall"]["errors_by_kind"][kind]
            .as_u64()
            .unwrap_or(0)
    };
    assert!(kind("connection") + kind("unavailable") > 0, "{summary}");
    assert!(
        summary["errors"].as_u64().unwrap() < measured,
        "some succeeded before the stop"
    );
}

#[test]
#[ignore = "needs postgresql installed: ./test.sh installs it"]
fn postgres_reconnects_after_a_server_restart() {
    let home = OwnHome(TempDir::new().unwrap());
    let started = server(home.0.path(), &["start", "postgres"]);
    assert!(started.status.success(), "{}", text(&started.stderr));
    let url = text(&started.stdout).trim().to_string();
    let port = url
        .rsplit_once(':')
        .unwrap()
        .1
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let tmp = TempDir::new().unwrap();
    let out = run_through(&tmp, &url, || {
        server(home.0.path(), &["stop", "postgres"]);
        std::thread::sleep(Duration::from_millis(1500));
        let again = server(home.0.path(), &["start", "postgres", "--port", &port]);
        assert!(again.status.success(), "{}", text(&again.stderr));
    });
    let rows = csv_rows(&out);
    let first_failure = rows
        .iter()
        .position(|r| &r[7] == "false")
        .expect("some ops failed");
    let recovered = rows[first_failure..]
        .iter()
        .filter(|r| &r[7] == "true")
        .count();
    assert!(
        recovered > 100,
        "only {recovered} successes after the restart"
    );
    // The run verifies: failed writes are known, and those with unknown outcomes are
    // not judged.
    let verify = hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", text(&verify.stdout));
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_two_shards_at_once_merge_and_verify_exactly() {
    let _guard = lock(&MYSQL);
    let db = url("HATSHOP_TEST_MYSQL");
    let tmp = TempDir::new().unwrap();
    hatshop(tmp.path())
        .args(["prepare", "--db", &db])
        .assert()
        .success();
    let shards = common::run_shards(
        &tmp,
        2,
        &["--db", &db, "-c", "4", "--seed", "9", "--events", "6000"],
    );
    let records: Vec<_> = shards.iter().map(|s| json(&s.join("run.json"))).collect();
    // The two clients ran at the same time, against the same tables.
    let at = |r: &serde_json::Value, key: &str| r[key].as_str().unwrap().to_string();
    assert!(at(&records[0], "started_at") < at(&records[1], "finished_at"));
    assert!(at(&records[1], "started_at") < at(&records[0], "finished_at"));
    let merged = tmp.path().join("merged");
    hatshop(tmp.path())
        .arg("merge")
        .args(&shards)
        .arg("-o")
        .arg(&merged)
        .assert()
        .success();
    let summary = json(&merged.join("summary.json"));
    assert_eq!(summary["ops"], 6000);
    assert_eq!(summary["errors"], 0, "{summary}");
    assert_eq!(csv_rows(&merged).len(), 6000);
    let record = json(&merged.join("run.json"));
    assert_eq!(record["plan"]["concurrency"], 8);
    for (i, shard) in record["shards"].as_array().unwrap().iter().enumerate() {
        assert_eq!(shard["index"], i);
        assert!(shard["host"]["hostname"].is_string(), "{shard}");
    }
    hatshop(tmp.path())
        .arg("verify")
        .arg(&merged)
        .assert()
        .success();
}
