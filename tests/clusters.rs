//! Real clusters started by `hatshop server start`: a 3-node Cassandra ring at RF 3 and
//! a 3-node MariaDB Galera cluster, each in a home of its own, stopped and wiped when
//! the test ends, also when it fails. Each test walks through its scenarios on one
//! cluster, since starting one takes half a minute; the two run side by side.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use common::{
    assert_one_line_error, errors_of, json, logged_calls, op_rows, server, text, verify_ok,
};
use serde_json::Value;
use tempfile::TempDir;

/// A cluster in a home of its own: wiped when dropped, also when a test fails.
struct Cluster {
    home: TempDir,
    kind: &'static str,
    url: String,
}

impl Cluster {
    fn start(kind: &'static str) -> Cluster {
        let home = TempDir::new().unwrap();
        let started = server(home.path(), &["start", kind, "--nodes", "3"]);
        let cluster = Cluster {
            home,
            kind,
            url: text(&started.stdout).trim().to_string(),
        };
        assert!(
            started.status.success(),
            "{kind} did not start: {}",
            text(&started.stderr)
        );
        cluster
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    fn node(&self, action: &str, node: &str) {
        let done = server(self.home(), &[action, self.kind, "--node", node]);
        assert!(
            done.status.success(),
            "{action} node {node}: {}",
            text(&done.stderr)
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        server(self.home.path(), &["wipe", "--all"]);
    }
}

/// `hatshop run --quiet --out tmp/NAME --db URL EXTRA…` and its exit status.
fn run(tmp: &TempDir, name: &str, url: &str, extra: &[&str]) -> (PathBuf, std::process::Output) {
    let out = tmp.path().join(name);
    let output = StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
        .current_dir(tmp.path())
        .args(["run", "--quiet", "--recreate", "--db", url, "--out"])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    (out, output)
}

fn run_ok(tmp: &TempDir, name: &str, url: &str, extra: &[&str]) -> PathBuf {
    let (out, output) = run(tmp, name, url, extra);
    assert!(
        output.status.success(),
        "{name}: {}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    out
}

/// The nodes named in the op log, with their operation counts.
fn nodes_in_op_log(out: &Path) -> std::collections::BTreeMap<String, u64> {
    let mut nodes = std::collections::BTreeMap::new();
    for row in op_rows(out) {
        let node = row.node.map_or(String::new(), |node| node.to_string());
        *nodes.entry(node).or_default() += 1;
    }
    nodes
}

/// A faults file in `tmp`.
fn faults(tmp: &TempDir, name: &str, text: &str) -> String {
    let path = tmp.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
#[ignore = "needs Java 17 and Maven for a Cassandra ring: ./test.sh installs them"]
fn a_three_node_ring_at_rf_3_keeps_quorum_through_a_killed_node() {
    let ring = Cluster::start("cassandra");
    assert_eq!(ring.url.matches(":9042").count(), 3, "{}", ring.url);
    let status = text(&server(ring.home(), &["status"]).stdout);
    let nodes = common::status_nodes(&status);
    assert_eq!(nodes.iter().filter(|n| n[2] == "up").count(), 3, "{status}");
    let tmp = TempDir::new().unwrap();
    let quorum = format!("{}?rf=3&cl=QUORUM", ring.url);

    // QUORUM writes and reads verify exactly; the driver's coordinators are all nodes.
    let out = run_ok(&tmp, "quorum", &quorum, &["--events", "3000", "--verify"]);
    let nodes = nodes_in_op_log(&out);
    for node in ["1", "2", "3"] {
        assert!(nodes.get(node).is_some_and(|n| *n > 100), "{nodes:?}");
    }
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["errors"], 0, "{summary}");

    // Node 2 killed 2 s into a QUORUM run: the other two keep answering; only calls
    // caught in flight on node 2 fail.
    let kill = faults(
        &tmp,
        "kill.toml",
        "[[faults]]\nat = \"2s\"\naction = \"kill\"\nnode = 2\n",
    );
    let home = ring.home().display().to_string();
    let out = run_ok(
        &tmp,
        "quorum-kill",
        &quorum,
        &[
            "--events",
            "1000000",
            "--duration",
            "8",
            "--op-timeout",
            "5",
            "--faults",
            &kill,
            "--home",
            &home,
        ],
    );
    let run_json = json(&out.join("run.json"));
    let fault = &run_json["faults"][0];
    assert_eq!(fault["action"], "kill");
    assert_eq!(fault["done"], true, "{fault}");
    assert!(fault["began_s"].as_f64().unwrap() >= 2.0, "{fault}");
    let summary = json(&out.join("summary.json"));
    let ops = summary["ops"].as_u64().unwrap();
    assert_eq!(
        op_rows(&out).len() as u64,
        logged_calls(&run_json),
        "every operation is logged"
    );
    assert!(
        summary["errors"].as_u64().unwrap() * 20 < ops,
        "QUORUM kept succeeding: {summary}"
    );
    let after_kill = successes_after(&out, 4.0);
    assert!(
        after_kill > 50,
        "operations went on after the kill: {after_kill}"
    );
    let faults_csv = std::fs::read_to_string(out.join("faults.csv")).unwrap();
    assert!(faults_csv.contains("node 2 killed"), "{faults_csv}");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("kill node 2"), "the charts mark the fault");
    // The slowest operations are matched against the fault (and GC pauses), and the
    // ring's nodes were watched.
    assert!(
        report.contains("<h2>The slowest 5 %</h2>"),
        "slowest section"
    );
    assert!(
        report.contains("<h2>Server resources</h2>"),
        "resources section"
    );

    // Node 2 back: the killed run verifies; writes caught by the kill are uncertain.
    ring.node("start", "2");
    verify_ok(tmp.path(), &out);
    let report = json(&out.join("verify.json"));
    let failed_writes = run_json["failed_writes"].as_u64().unwrap();
    assert!(
        report["uncertain_orders"].as_u64().unwrap() <= failed_writes,
        "{report}"
    );

    // With node 2 down again, ALL cannot be had: every call fails, and is counted.
    ring.node("kill", "2");
    let all = format!(
        "{}?rf=3&cl=ALL",
        ring.url.replace("/hatshop", "/hatshop_all")
    );
    let (down, output) = run(
        &tmp,
        "all-down",
        &all,
        &[
            "--events",
            "40",
            "--orders",
            "0",
            "--op-timeout",
            "5",
            "-c",
            "8",
            // Every call fails here on purpose.
            "--max-errors",
            "100%",
        ],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let summary = json(&down.join("summary.json"));
    assert_eq!(summary["errors"], summary["ops"], "{summary}");
    assert!(
        errors_of(&summary, "unavailable") + errors_of(&summary, "timeout") > 0,
        "{summary}"
    );
    // The coordinators' answers are counted by Cassandra's name for them.
    let codes: Vec<&String> = summary["overall"]["errors_by_code"]
        .as_object()
        .into_iter()
        .flat_map(|by_kind| by_kind.values())
        .filter_map(|codes| codes.as_object())
        .flat_map(|codes| codes.keys())
        .collect();
    assert!(
        codes
            .iter()
            .any(|c| ["Unavailable", "WriteTimeout", "ReadTimeout"].contains(&c.as_str())),
        "{summary}"
    );
}

/// Successful operations that began at or after `from_s` seconds into the measured
/// phase, from intervals.csv.
fn successes_after(out: &Path, from_s: f64) -> u64 {
    let mut reader = csv::Reader::from_path(out.join("intervals.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (event, start, ops, errors) = (
        column("event_type"),
        column("start_s"),
        column("ops"),
        column("errors"),
    );
    reader
        .records()
        .map(Result::unwrap)
        .filter(|row| &row[event] == "all" && row[start].parse::<f64>().unwrap() >= from_s)
        .map(|row| row[ops].parse::<u64>().unwrap() - row[errors].parse::<u64>().unwrap())
        .sum()
}

#[test]
#[ignore = "needs mariadb-server, galera-4 and mariadb-backup: ./test.sh installs them"]
fn a_three_node_galera_cluster_spreads_lanes_counts_conflicts_and_survives_a_kill() {
    let galera = Cluster::start("galera");
    assert_eq!(galera.url.matches(',').count(), 2, "{}", galera.url);
    let tmp = TempDir::new().unwrap();

    // Round-robin over the three nodes: every node serves, and the data verifies.
    let home = galera.home().display().to_string();
    let out = run_ok(
        &tmp,
        "round-robin",
        &galera.url,
        &["--events", "3000", "--verify", "--home", &home],
    );
    let nodes = nodes_in_op_log(&out);
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    assert!(nodes.values().all(|n| *n == 1000), "{nodes:?}");
    let settings = &json(&out.join("run.json"))["database"]["store"]["settings"];
    assert_eq!(settings["galera"], "true", "{settings}");
    assert_eq!(settings["route"], "round-robin", "{settings}");
    let server = &json(&out.join("run.json"))["database"]["server"];
    assert_eq!(server["name"], "galera", "{server}");
    assert_eq!(server["nodes"], 3, "{server}");

    // Key-value events alone go over hatshop's own wire, round-robin too. One lane,
    // every statement waiting for the writes before it (sync_wait=7, sent on each
    // connection): a rewrite on one node finds the record written on another, and
    // every read finds what the stream says.
    let joiner = if galera.url.contains('?') { '&' } else { '?' };
    let causal = format!("{}{joiner}sync_wait=7", galera.url);
    let out = run_ok(
        &tmp,
        "key-value",
        &causal,
        &[
            "-w",
            "kv-10w-40rw-50r",
            "--records",
            "300",
            "--warmup",
            "0",
            "--events",
            "900",
            "-c",
            "1",
            "--verify",
            "--home",
            &home,
        ],
    );
    let nodes = nodes_in_op_log(&out);
    assert!(nodes.values().all(|n| *n == 300), "{nodes:?}");
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["errors"], 0, "{summary}");
    let settings = &json(&out.join("run.json"))["database"]["store"]["settings"];
    assert_eq!(settings["kv_wire"], "own", "{settings}");
    assert_eq!(settings["sync_wait"], "7", "{settings}");

    // Lanes racing on few orders: certification failures and deadlocks, by code.
    let out = run_ok(
        &tmp,
        "conflicts",
        &galera.url,
        &[
            "--events",
            "6000",
            "--orders",
            "40",
            "-c",
            "8",
            "--conflicts",
            "0.5",
            "--verify",
            // Conflicts are the point here.
            "--max-errors",
            "100%",
        ],
    );
    let summary = json(&out.join("summary.json"));
    assert!(errors_of(&summary, "conflict") > 0, "{summary}");
    let messages = summary["events"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| {
            e["first_errors"]["conflict"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|m| m.as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    assert!(
        messages
            .iter()
            .all(|m| m.contains("1213") || m.contains("1020") || m.contains("1180")),
        "each conflict keeps its code: {messages:?}"
    );
    // …and is counted by it: every conflict has a server code, and they add up.
    let by_code = summary["overall"]["errors_by_code"]["conflict"]
        .as_object()
        .unwrap_or_else(|| panic!("conflicts by code: {summary}"));
    assert!(
        by_code
            .keys()
            .all(|code| ["1213", "1020", "1180"].contains(&code.as_str())),
        "{by_code:?}"
    );
    let counted: u64 = by_code.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(counted, errors_of(&summary, "conflict"), "{summary}");
    let ops = common::exported_csv(&out);
    assert!(
        ops.lines()
            .next()
            .unwrap()
            .split(',')
            .any(|c| c == "error_code"),
        "the op log names each failure's code"
    );
    let verify = json(&out.join("verify.json"));
    assert!(verify["raced_orders"].as_u64().unwrap() > 0, "{verify}");
    assert_eq!(verify["differing_orders"], 0, "{verify}");

    // A node out of range is one line, before anything runs.
    let far = faults(
        &tmp,
        "far.toml",
        "[[faults]]\nat = \"1s\"\naction = \"kill\"\nnode = 4\n",
    );
    assert_one_line_error(
        tmp.path(),
        &[
            "run",
            "--db",
            &galera.url,
            "--faults",
            &far,
            "--home",
            &home,
        ],
        "node 4 is out of range: galera has 3 nodes",
    );

    // Node 2 killed 2 s in: the other two go on serving; every operation is logged.
    let kill = faults(
        &tmp,
        "kill.toml",
        "[[faults]]\nat = \"2s\"\naction = \"kill\"\nnode = 2\n",
    );
    let out = run_ok(
        &tmp,
        "kill",
        &galera.url,
        &[
            "--events",
            "1000000",
            "--duration",
            "12",
            "--op-timeout",
            "5",
            "--faults",
            &kill,
            "--home",
            &home,
        ],
    );
    let run_json = json(&out.join("run.json"));
    assert_eq!(
        run_json["faults"][0]["done"], true,
        "{}",
        run_json["faults"]
    );
    let summary = json(&out.join("summary.json"));
    assert_eq!(
        op_rows(&out).len() as u64,
        logged_calls(&run_json),
        "every operation is logged"
    );
    let by_node: Vec<&Value> = summary["nodes"].as_array().unwrap().iter().collect();
    let node = |n: &str| by_node.iter().find(|r| r["event_type"] == n).unwrap();
    // Node 2 failed from the kill on; nodes 1 and 3 kept succeeding.
    assert!(
        node("node 2")["errors"].as_u64().unwrap() > 0,
        "{by_node:?}"
    );
    for survivor in ["node 1", "node 3"] {
        assert!(node(survivor)["ok"].as_u64().unwrap() > 100, "{by_node:?}");
    }
    assert!(
        successes_after(&out, 9.0) > 50,
        "the survivors served after the kill"
    );
}
