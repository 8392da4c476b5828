//! What every store keeps: order events created, read, updated and deleted, and
//! key-value writes, rewrites and reads (over each client stack the store has), each
//! verified exactly, with an op log whose rows, read by column name, agree with the
//! summary.

use std::path::Path;

use super::common::{
    assert_one_line_error, assert_ran_on_the_asked_wire, cassandra as cassandra_url,
    each_client_stack, hatshop, json, lock, op_maps, run_and_verify, url,
};
use super::{MYSQL, POSTGRES, REDIS, VOLDEMORT};
use tempfile::TempDir;

/// Order events of every type over a few live orders, in four lanes; each new order
/// with a payload, so reads and verify judge its text.
const ORDERS: &[&str] = &[
    "-w",
    "hatshop-random",
    "--orders",
    "50",
    "--events",
    "1000",
    "--order-bytes",
    "1..3000",
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

/// An initial load of orders and records together, each lane's share in several
/// batches of the store's bulk path and a last one part full; the orders with payloads
/// that the bulk path writes too.
const MIXED_LOAD: &[&str] = &[
    "-w",
    "hatshop-random",
    "--orders",
    "2000",
    "--order-bytes",
    "1..3000",
    "--records",
    "1500",
    "--events",
    "500",
    "--load-batch",
    "128",
    "-c",
    "4",
];

/// The op log, read by column name, holds one row per measured operation of the summary,
/// each of a known event type, none failed.
fn op_log_agrees_with_summary(out: &Path) {
    let summary = json(&out.join("summary.json"));
    let rows = op_maps(out);
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

/// A run with `--reuse-load` goes on from the orders and records the run before it
/// left, judges its reads of them, and verifies exactly; a database that lives in
/// memory holds nothing for a second run, which says so in one line.
fn goes_on_from_the_last(tmp: &TempDir, db: &str) {
    if db.contains(":memory:") {
        let said = assert_one_line_error(
            tmp.path(),
            &["run", "--db", db, "--reuse-load", "--events", "10"],
            "it holds no tables of hatshop's",
        );
        assert!(said.contains("cannot be gone on from"), "{said}");
        return;
    }
    // `sqlite://` alone is a file in each run's folder: both runs need the one file.
    let db = match db {
        "sqlite://" => format!("sqlite://{}", tmp.path().join("one.db").display()),
        _ => db.to_string(),
    };
    let first = run_and_verify(tmp, &db, MIXED_LOAD);
    let mut going_on = MIXED_LOAD.to_vec();
    going_on.push("--reuse-load");
    let second = run_and_verify(tmp, &db, &going_on);
    // The first run was verified exact: the second reads back only what it wrote,
    // through the store's own reads of one order and one record.
    let verdict = json(&second.join("verify.json"));
    let first = json(&first.join("run.json"));
    let second = json(&second.join("run.json"));
    assert_eq!(second["went_on_from"]["run"], first["run_id"], "{second}");
    assert_eq!(verdict["rests_on"]["run"], first["run_id"], "{verdict}");
    assert!(verdict["orders_found"].as_u64().unwrap() > 0, "{verdict}");
    assert!(second["unmeasured"]["load"].is_null(), "{second}");
    assert_eq!(
        second["events"]["workload"]["held_events"], 4000,
        "{second}"
    );

    // Records, read back one by one the same way.
    let records = [
        "-w",
        "kv-10w-40rw-50r",
        "--records",
        "4000",
        "--warmup",
        "0",
        "--events",
        "300",
    ];
    run_and_verify(tmp, &db, &records);
    let going_on = run_and_verify(tmp, &db, &[&records[..], &["--reuse-load"]].concat());
    let verdict = json(&going_on.join("verify.json"));
    assert!(verdict["rests_on"].is_object(), "{verdict}");
    assert!(verdict["keys_found"].as_u64().unwrap() > 0, "{verdict}");
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
                let run = json(&out.join("run.json"));
                let spec = &run["events"]["workload"];
                assert_eq!(spec["order_bytes"], "1..3000", "{run}");
            }

            #[test]
            $(#[$ignore])?
            fn a_load_in_many_batches_verifies_exactly() {
                let _guard = $guard;
                let tmp = TempDir::new().unwrap();
                let out = run_and_verify(&tmp, &$db("load"), MIXED_LOAD);
                let run = json(&out.join("run.json"));
                let load = &run["unmeasured"]["load"];
                assert_eq!(load["rows"], 3500, "{run}");
                assert_eq!(load["batch"], 128, "{run}");
                assert!(load["rows_per_s"].as_f64().unwrap() > 0.0, "{run}");
                let page = std::fs::read_to_string(out.join("report.html")).unwrap();
                assert!(page.contains("<td>load</td><td>3,500 rows in "), "the page says the load");
                let verify = json(&out.join("verify.json"));
                // The measured events are order events alone: the records stay as loaded.
                assert_eq!(verify["keys_found"], 1500, "{verify}");
                assert!(verify["orders_found"].as_u64().unwrap() > 0, "{verify}");
            }

            #[test]
            $(#[$ignore])?
            fn a_run_goes_on_from_the_whole_stream_the_last_left() {
                let _guard = $guard;
                let tmp = TempDir::new().unwrap();
                goes_on_from_the_last(&tmp, &$db("reuse"));
            }

            #[test]
            $(#[$ignore])?
            fn key_value_records_verify_exactly() {
                let _guard = $guard;
                let tmp = TempDir::new().unwrap();
                for db in each_client_stack(&$db("kv")) {
                    let out = run_and_verify(&tmp, &db, KEY_VALUE);
                    assert_ran_on_the_asked_wire(&out, &db);
                    op_log_agrees_with_summary(&out);
                    let verify = json(&out.join("verify.json"));
                    assert!(verify["keys_found"].as_u64().unwrap() >= 300, "{db}: {verify}");
                }
            }
        }
    };
}

store_keeps_what_the_stream_says!(sqlite, |_| "sqlite://".to_string(), ());
// A database that lives in memory is verified as its run ends, never after.
store_keeps_what_the_stream_says!(sqlite_in_memory, |_| "sqlite://:memory:".to_string(), ());
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

#[test]
fn a_store_with_two_client_stacks_is_checked_on_each() {
    for (db, stacks) in [
        ("mysql://127.0.0.1/hatshop", 2),
        ("postgres://127.0.0.1/hatshop?sslmode=disable", 2),
        ("rediss://127.0.0.1/0", 2),
        ("cassandra://127.0.0.1/hatshop", 1),
        ("sqlite://", 1),
    ] {
        let urls = each_client_stack(db);
        assert_eq!(urls.len(), stacks, "{urls:?}");
        assert_eq!(urls[0], db);
    }
    assert_eq!(
        each_client_stack("postgres://127.0.0.1/hatshop?sslmode=disable")[1],
        "postgres://127.0.0.1/hatshop?sslmode=disable&kv_wire=tokio-postgres"
    );
}
