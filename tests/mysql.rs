//! The same checks against the real MariaDB: verify under pools, the key-value presets
//! in both table shapes, prepares that do not grow, polite goodbyes, passwords that
//! never leak, shards. PostgreSQL's and Redis's are in tests/databases.rs.
//!
//! These need a live server: `./test.sh` starts it with `hatshop server start mariadb`
//! and passes its URL in HATSHOP_TEST_MYSQL; without it a test fails, it never skips.
//! The tests take one lock: they share the tables.

mod common;

use std::sync::Mutex;

use common::{
    assert_one_line_error, hatshop, json, key_value_presets, lock, op_rows, orders,
    prepares_by_run, text, url,
};
use mysql_async::prelude::Queryable;
use tempfile::TempDir;

static MYSQL: Mutex<()> = Mutex::new(());

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
        assert_eq!(store["settings"]["connections"], pool);
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

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_sbtest_shape_holds_the_records_and_refuses_longer_values() {
    let _guard = lock(&MYSQL);
    let db = format!("{}?kv_table=sbtest", url("HATSHOP_TEST_MYSQL"));
    // Writes, rewrites and reads of 120-byte values, verified record by record.
    key_value_presets(&db, &["--value-size", "120"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let columns: Vec<(String, String)> = runtime.block_on(async {
        let mut conn = mysql_async::Conn::from_url(url("HATSHOP_TEST_MYSQL"))
            .await
            .unwrap();
        let columns = conn
            .query(
                "SELECT column_name, column_type FROM information_schema.columns \
                 WHERE table_schema = DATABASE() AND table_name = 'kv' ORDER BY ordinal_position",
            )
            .await
            .unwrap();
        conn.disconnect().await.unwrap();
        columns
    });
    let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["id", "k", "c", "pad"], "{columns:?}");
    let tmp = TempDir::new().unwrap();
    assert_one_line_error(
        tmp.path(),
        &["run", "-w", "kv-50w-50r", "--events", "10", "--db", &db],
        "at most 120 bytes",
    );
}

/// A counter of the MariaDB server's `SHOW GLOBAL STATUS`.
async fn global_status(url: &str, name: &str) -> u64 {
    let mut conn = mysql_async::Conn::from_url(url).await.unwrap();
    let row: Option<(String, String)> = conn
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .await
        .unwrap();
    conn.disconnect().await.unwrap();
    row.unwrap().1.parse().unwrap()
}

async fn prepares(url: &str) -> u64 {
    global_status(url, "Com_stmt_prepare").await
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_run_verify_and_prepare_end_their_connections_politely() {
    let _guard = lock(&MYSQL);
    let db = url("HATSHOP_TEST_MYSQL");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let aborted = || runtime.block_on(global_status(&db, "Aborted_clients"));
    let before = aborted();
    let tmp = TempDir::new().unwrap();
    let out = common::run_ok(
        &tmp,
        "polite",
        &[
            "--db",
            &db,
            "-w",
            "kv-50w-50r",
            "--records",
            "2000",
            "--events",
            "500",
            "--verify",
        ],
    );
    common::verify_ok(tmp.path(), &out);
    hatshop(tmp.path())
        .args(["prepare", "--db", &db])
        .assert()
        .success();
    // Each connection dropped unannounced counts here, and is a warning in the server's log.
    assert_eq!(aborted(), before, "connections ended without a goodbye");
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_prepares_each_statement_once_per_connection() {
    let _guard = lock(&MYSQL);
    let db = url("HATSHOP_TEST_MYSQL");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // Orders through mysql_async; key-value events alone through hatshop's own wire.
    let key_value = ["-w", "kv-10w-40rw-50r", "--records", "500", "--warmup", "0"];
    for workload in [&[][..], &key_value] {
        let grew = prepares_by_run(&db, workload, || runtime.block_on(prepares(&db)));
        // Eight times the operations, the same prepares: setup prepares on every connection.
        assert_eq!(
            grew[0], grew[1],
            "{workload:?}: prepares grew with operations: {grew:?}"
        );
        assert!(grew[0] < 200, "{workload:?}: {grew:?}");
    }
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_tables_hatshop_did_not_make_are_left_alone() {
    let _guard = lock(&MYSQL);
    let db = url("HATSHOP_TEST_MYSQL");
    let base = db.rsplit_once('/').unwrap().0.to_string();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    admin(
        &db,
        "CREATE DATABASE IF NOT EXISTS someone_else; \
             CREATE TABLE IF NOT EXISTS someone_else.orders (id INT); \
             DELETE FROM someone_else.orders; INSERT INTO someone_else.orders VALUES (42)",
    );
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
    admin(
        &db,
        format!(
            "DROP USER IF EXISTS 'weird'@'127.%'; \
             CREATE USER 'weird'@'127.%' IDENTIFIED BY '{WEIRD_PASSWORD}'; \
             GRANT ALL PRIVILEGES ON hatshop.* TO 'weird'@'127.%'"
        ),
    );
    let hosts = hosts_of(&db);
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
        // Every file, the figures' CSVs in their folder too.
        let figures = out.join("figures");
        for dir in [&out, &figures] {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    everything += &String::from_utf8_lossy(&std::fs::read(path).unwrap());
                }
            }
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
    let stderr =
        common::assert_one_line_error(tmp.path(), &["run", "--db", &wrong], "Access denied");
    assert!(!stderr.contains("s@s#w"), "{stderr}");
}

/// Runs `sql` (statements separated by `;`) as the test's user.
fn admin(db: &str, sql: impl AsRef<str>) {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let mut conn = mysql_async::Conn::from_url(db).await.unwrap();
        conn.query_drop(sql.as_ref()).await.unwrap();
        conn.disconnect().await.unwrap();
    });
}

/// The `host:port` part of a MySQL URL.
fn hosts_of(db: &str) -> String {
    let after_user = db.split_once('@').map_or(db, |(_, rest)| rest);
    after_user.split('/').next().unwrap().to_string()
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_own_wire_logs_in_with_a_password_reads_back_and_says_so() {
    let _guard = lock(&MYSQL);
    let db = url("HATSHOP_TEST_MYSQL");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    admin(
        &db,
        "DROP USER IF EXISTS 'wire'@'127.%'; \
             CREATE USER 'wire'@'127.%' IDENTIFIED BY 'Wire-pass-1'; \
             GRANT ALL PRIVILEGES ON hatshop.* TO 'wire'@'127.%'",
    );
    let aborted = || runtime.block_on(global_status(&db, "Aborted_clients"));
    let before = aborted();
    let base = format!("mysql://wire:Wire-pass-1@{}/hatshop", hosts_of(&db));
    let tmp = TempDir::new().unwrap();
    // Rewrites and reads of 15,000-byte values (reads checked against the stream as
    // they come back), then verify reads every record back.
    for wire in ["own", "mysql_async"] {
        let out = common::run_ok(
            &tmp,
            wire,
            &[
                "--db",
                &format!("{base}?kv_wire={wire}"),
                "-w",
                "kv-10w-40rw-50r",
                "--records",
                "500",
                "--warmup",
                "0",
                "--events",
                "2000",
                "--value-size",
                "15000",
                "-c",
                "8",
                "--verify",
            ],
        );
        let run = json(&out.join("run.json"));
        assert_eq!(run["database"]["store"]["settings"]["kv_wire"], wire);
        let summary = json(&out.join("summary.json"));
        assert_eq!(summary["overall"]["errors"], 0, "{wire}: {summary}");
        let verify = json(&out.join("verify.json"));
        assert_eq!(
            verify["keys_found"], verify["keys_expected"],
            "{wire}: {verify}"
        );
    }
    // Orders go through mysql_async, whatever kv_wire says.
    let out = common::run_ok(&tmp, "orders", &["--db", &base, "--events", "200"]);
    let run = json(&out.join("run.json"));
    assert_eq!(
        run["database"]["store"]["settings"]["kv_wire"],
        "mysql_async"
    );
    // Each connection dropped unannounced counts here.
    assert_eq!(aborted(), before, "connections ended without a goodbye");
}

/// A user who logs in with MariaDB's ed25519 plugin: a key-value run goes over
/// hatshop's own wire (which signs the server's nonce as the plugin does) and
/// verifies; orders, over mysql_async, verify too.
#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_an_ed25519_login_runs_on_the_own_wire() {
    let _guard = lock(&MYSQL);
    let db = url("HATSHOP_TEST_MYSQL");
    // Debian's mariadb-server ships the plugin; installing it twice is refused.
    let installed = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let mut conn = mysql_async::Conn::from_url(db.as_str()).await.unwrap();
        let status: Option<String> = conn
            .query_first("SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'ed25519'")
            .await
            .unwrap();
        conn.disconnect().await.unwrap();
        status.is_some()
    });
    if !installed {
        admin(&db, "INSTALL SONAME 'auth_ed25519'");
    }
    admin(
        &db,
        "DROP USER IF EXISTS 'edwards'@'127.%'; \
         CREATE USER 'edwards'@'127.%' IDENTIFIED VIA ed25519 USING PASSWORD('Ed-pass-1'); \
         GRANT ALL PRIVILEGES ON hatshop.* TO 'edwards'@'127.%'",
    );
    let tmp = TempDir::new().unwrap();
    let edwards = format!("mysql://edwards:Ed-pass-1@{}/hatshop", hosts_of(&db));
    let out = common::run_ok(
        &tmp,
        "ed25519",
        &[
            "--db",
            &edwards,
            "-w",
            "kv-50w-50r",
            "--records",
            "200",
            "--warmup",
            "0",
            "--events",
            "1000",
            "-c",
            "4",
            "--verify",
        ],
    );
    let run = json(&out.join("run.json"));
    assert_eq!(
        run["database"]["store"]["settings"]["kv_wire"], "own",
        "the own wire was asked for (the default) and logs in with ed25519"
    );
    assert_eq!(json(&out.join("summary.json"))["overall"]["errors"], 0);
    let verify = json(&out.join("verify.json"));
    assert_eq!(verify["keys_found"], verify["keys_expected"], "{verify}");
    common::run_ok(
        &tmp,
        "ed25519-orders",
        &["--db", &edwards, "--events", "1000", "--verify"],
    );
    // A wrong password is still a one-line "Access denied", through either client.
    let wrong = format!("mysql://edwards:Ed-pass-2@{}/hatshop", hosts_of(&db));
    let stderr = common::assert_one_line_error(
        tmp.path(),
        &["run", "-w", "kv-50w-50r", "--db", &wrong],
        "Access denied",
    );
    assert!(!stderr.contains("Ed-pass"), "{stderr}");
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
    assert_eq!(op_rows(&merged).len(), 6000);
    let record = json(&merged.join("run.json"));
    assert_eq!(record["plan"]["concurrency"], 8);
    for (i, shard) in record["shards"].as_array().unwrap().iter().enumerate() {
        assert_eq!(shard["index"], i);
        assert!(shard["host"]["hostname"].is_string(), "{shard}");
    }
    common::verify_ok(tmp.path(), &merged);
}
