//! The checks against a real Cassandra node, started by `./test.sh` (its URL in
//! HATSHOP_TEST_CASSANDRA; missing, the test fails, never skips): schemas, consistency
//! levels, replication a node cannot meet, lightweight transactions, what the node did
//! during a run, server-side traces, and keyspaces hatshop did not make. Each test has
//! its own keyspace and takes the lock: they share the node.

mod common;

use std::collections::HashMap;
use std::sync::Mutex;

use common::{
    cassandra, csv_maps, hatshop, json, key_value_presets, lock, op_rows, orders, run_ok,
};
use tempfile::TempDir;

static CASSANDRA: Mutex<()> = Mutex::new(());

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra_by_order_verifies_under_concurrency() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let out = orders(&tmp, &cassandra("t_by_order"), &["-c", "16"]);
    let run = json(&out.join("run.json"));
    assert_eq!(run["database"]["store"]["settings"]["schema"], "by-order");
    assert_eq!(
        run["host"]["client_threads"], 1,
        "the store's choice: {run}"
    );
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
    let db = cassandra("t_watched");
    let out = run_ok(
        &tmp,
        "watched",
        &[
            "--db",
            &db,
            "--events",
            "1000000",
            "--duration",
            "2.5",
            "-c",
            "8",
        ],
    );
    // The node hatshop started, beside the client, once a second.
    let rows = csv_maps(&out.join("server-metrics.csv"));
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
    // Before measuring, it waited until the node had no flush or compaction left.
    let work = &run["unmeasured"]["server_work"];
    assert!(
        work["waited_s"].as_f64().unwrap() < 30.0 && work.get("left").is_none(),
        "{work}"
    );
    assert!(out.join("gc.csv").exists());
    // Compactions were read from the node's system.log (none is a valid result).
    let compactions = std::fs::read_to_string(out.join("compactions.csv")).unwrap();
    assert!(compactions.starts_with("node,began_at,at_s,took_ms,keyspace,table,sstables"));
    // Its thread pools were read once a second over CQL (system_views, node-local):
    // the pool that takes requests completed the run's requests.
    let pools = csv_maps(&out.join("thread-pools.csv"));
    let requests: Vec<&HashMap<String, String>> = pools
        .iter()
        .filter(|r| r["node"] == "1" && r["pool"] == "Native-Transport-Requests")
        .collect();
    assert!(requests.len() >= 2, "{pools:?}");
    let served = requests
        .iter()
        .filter_map(|r| r["completed_s"].parse::<f64>().ok())
        .fold(0.0, f64::max);
    assert!(served > 100.0, "{requests:?}");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<h2>Server resources</h2>") && report.contains("CPU over time"));
    assert!(report.contains("<h3>GC pauses</h3>") && report.contains("<h3>Thread pools</h3>"));
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn every_traced_cassandra_operation_took_the_server_no_longer_than_the_client() {
    let _guard = lock(&CASSANDRA);
    let tmp = TempDir::new().unwrap();
    let db = cassandra("t_traced");
    let out = run_ok(
        &tmp,
        "traced",
        &[
            "--db",
            &db,
            "--events",
            "300",
            "-c",
            "2",
            "--trace-sample",
            "1.0",
        ],
    );
    let ops = json(&out.join("summary.json"))["ops"].as_u64().unwrap();
    let rows = csv_maps(&out.join("traces.csv"));
    // Every measured operation was traced (a failed one has no trace).
    assert!(
        rows.len() as u64 * 100 >= ops * 95,
        "{} of {ops}",
        rows.len()
    );
    // A node busy with a fresh start may drop some trace writes ("_TRACE messages
    // were dropped" in its log): those operations have no server time; most must have one.
    let timed: Vec<_> = rows
        .iter()
        .filter(|row| !row["server_us"].is_empty())
        .collect();
    assert!(
        timed.len() * 100 >= rows.len() * 80,
        "{} of {} traced operations have a server time",
        timed.len(),
        rows.len()
    );
    for row in timed {
        let client: f64 = row["client_us"].parse().unwrap();
        let server: f64 = row["server_us"].parse().unwrap();
        assert!(server > 0.0 && server <= client, "{row:?}");
    }
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<h2>Client and server time</h2>"));
    // SQLite has no server: one line says so.
    hatshop(tmp.path())
        .args(["run", "--trace-sample", "0.5"])
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "Cassandra, MariaDB/MySQL and PostgreSQL only, not sqlite://",
        ));
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
            // Nothing loaded first: a load that fails stops a run before it measures.
            .args([
                "--orders",
                "0",
                "--warmup",
                "0",
                "--events",
                "500",
                "-c",
                "8",
                // Every call fails here on purpose.
                "--max-errors",
                "100%",
            ])
            .arg("--out")
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
        assert!(op_rows(&out).iter().all(|r| r.error_kind == "unavailable"));
        // Refused at once: definite failures, not applied, each listed for verify.
        let run = json(&out.join("run.json"));
        let failed = common::csv_maps(&out.join("failed_writes.csv"));
        assert!(!failed.is_empty());
        assert_eq!(run["failed_writes"], failed.len() as u64);
        assert!(failed.iter().all(|w| w["error_kind"] == "unavailable"));
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
            // One of the two updates fails on purpose.
            "--max-errors",
            "100%",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let rows = op_rows(&out);
    let by_seq = |seq: u64| rows.iter().find(|r| r.seq == seq).unwrap();
    assert!(by_seq(1).success);
    assert!(!by_seq(2).success);
    assert_eq!(by_seq(2).error_kind, "not_found");
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
    assert!(op_rows(&plain).iter().all(|r| r.success));
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

/// A study's wait for a settled server: the suite's idle node reads as at rest within
/// the deadline; a node that does not answer is said, never waited on as if busy.
#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn a_settled_node_reads_as_quiet_and_an_unreachable_one_is_said() {
    use hatshop::observe::settle::{Settled, settle};
    use hatshop::observe::thread_pools::Node;
    use std::time::Duration;
    let _guard = lock(&CASSANDRA);
    let base = common::url("HATSHOP_TEST_CASSANDRA");
    let host = base
        .trim_start_matches("cassandra://")
        .split(['/', ',', '?'])
        .next()
        .unwrap()
        .to_string();
    let address = if host.contains(':') {
        host
    } else {
        format!("{host}:9042")
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let live = Node {
        node: 1,
        address: address.parse().unwrap(),
    };
    match runtime.block_on(settle(vec![live], Duration::from_secs(60))) {
        Settled::Quiet(took) => assert!(took < Duration::from_secs(60)),
        other => panic!("the suite's node did not settle: {other:?}"),
    }
    let gone = Node {
        node: 2,
        address: "127.0.0.1:1".parse().unwrap(),
    };
    match runtime.block_on(settle(vec![gone], Duration::from_secs(5))) {
        Settled::Unknown(why) => assert!(why.starts_with("node 2: "), "{why}"),
        other => panic!("an unreachable node was not said: {other:?}"),
    }
}
