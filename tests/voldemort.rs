//! Project Voldemort, built from the upstream archive hatshop carries and started by
//! `hatshop server start voldemort`: the suite's 3-node server (N=3 R=2 W=2, from
//! ./test.sh), and servers in homes of their own for the build, routing and fault
//! scenarios.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::sync::Mutex;
use std::time::Duration;

use common::{
    errors_of, json, key_value_presets, lock, logged_calls, op_rows, orders, run_and_verify,
    server, text, url, verify_ok,
};
use hatshop::db::{
    AnyStore, Applied, ConnectOptions, DbUrl, ErrorKind, Ownership, Settings, Store,
};
use hatshop::workload::KeyText;
use tempfile::TempDir;

/// Tests on the suite's server share its one store.
static SUITE_SERVER: Mutex<()> = Mutex::new(());

fn server_ok(home: &Path, args: &[&str]) -> String {
    let out = server(home, args);
    assert!(
        out.status.success(),
        "server {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout).trim().to_string()
}

/// A Voldemort server in a home of its own, wiped when dropped.
struct OwnServer {
    home: TempDir,
    url: String,
}

impl OwnServer {
    fn start(args: &[&str]) -> OwnServer {
        let home = TempDir::new().unwrap();
        let mut all = vec!["start", "voldemort"];
        all.extend_from_slice(args);
        let started = server(home.path(), &all);
        let own = OwnServer {
            url: text(&started.stdout).trim().to_string(),
            home,
        };
        assert!(started.status.success(), "{}", text(&started.stderr));
        own
    }

    /// The built classes and the jars, as the server record names them.
    fn classpath(&self) -> String {
        let record = json(&self.home.path().join("servers/voldemort/server.json"));
        let settings = &record["settings"];
        format!(
            "{}:{}/*",
            settings["classes"].as_str().unwrap(),
            settings["lib"].as_str().unwrap()
        )
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        server(self.home.path(), &["wipe", "--all"]);
    }
}

/// Upstream's own shell (`voldemort.VoldemortClientShell`) run over `commands`: its
/// output, one entry per command, keyed by the command.
fn java_shell(own: &OwnServer, commands: &[String]) -> Vec<(String, Vec<String>)> {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("commands.txt");
    std::fs::write(&file, commands.join("\n") + "\n").unwrap();
    let bootstrap = own
        .url
        .trim_start_matches("voldemort://")
        .split([',', '/'])
        .next()
        .unwrap()
        .to_string();
    let out = StdCommand::new("timeout")
        .args(["120", "java", "-cp", &own.classpath()])
        .arg("voldemort.VoldemortClientShell")
        .args(["hatshop", &format!("tcp://{bootstrap}")])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in text(&out.stdout).lines() {
        let command = line.strip_prefix("> ").map(str::trim);
        if let Some(command) = command.filter(|c| commands.iter().any(|g| g == c)) {
            sections.push((command.to_string(), Vec::new()));
        } else if let Some((_, lines)) = sections.last_mut() {
            lines.push(line.trim().to_string());
        }
    }
    sections
}

#[test]
#[ignore = "needs javac and mvn: ./test.sh installs them"]
fn one_node_builds_from_the_vendored_archive_and_verifies() {
    let own = OwnServer::start(&[]);
    assert_eq!(own.url, own.url.split(',').next().unwrap(), "one node");
    let status = server_ok(own.home.path(), &["status"]);
    // The server's row: running, one node of one up.
    assert!(
        status.lines().any(|l| l.starts_with("voldemort ")
            && l.contains(" running ")
            && l.contains(" 1 of 1 ")),
        "{status}"
    );
    let tmp = TempDir::new().unwrap();
    let home = own.home.path().display().to_string();
    let out = run_and_verify(
        &tmp,
        &own.url,
        &[
            "-w",
            "kv-50w-50r",
            "--records",
            "500",
            "--events",
            "2000",
            "--home",
            &home,
        ],
    );
    let run = json(&out.join("run.json"));
    let store = &run["database"]["store"]["settings"];
    assert_eq!(store["replication_factor"], "1", "{store}");
    assert_eq!(store["routing"], "client", "{store}");
    // What was built is recorded: the source's commit and hash, je, the patches.
    let server = &run["database"]["server"]["settings"];
    let source = server["build.source"].as_str().unwrap();
    assert!(source.contains("99127eab3"), "{server}");
    assert_eq!(server["build.je"], "5.0.73", "{server}");
    assert!(
        server["build.patches"]
            .as_str()
            .unwrap()
            .contains("CheckSumMetadata"),
        "{server}"
    );
    assert_eq!(server["build.source_sha256"].as_str().unwrap().len(), 64);
}

#[test]
#[ignore = "needs the suite's Voldemort: ./test.sh starts it"]
fn three_nodes_at_n3_r2_w2_verify_key_value_presets_and_orders() {
    let _suite = lock(&SUITE_SERVER);
    let db = url("HATSHOP_TEST_VOLDEMORT");
    key_value_presets(&db, &[]);
    // The study's values: 15,000 bytes.
    let tmp = TempDir::new().unwrap();
    run_and_verify(
        &tmp,
        &db,
        &[
            "-w",
            "kv-90rw-10r",
            "--records",
            "300",
            "--events",
            "1000",
            "--value-size",
            "15000",
        ],
    );
    // The order workload: an order is one value holding its items.
    let out = orders(&tmp, &db, &[]);
    let store = &json(&out.join("run.json"))["database"]["store"]["settings"];
    assert_eq!(store["nodes"], "3", "{store}");
    assert_eq!(store["required_reads"], "2", "{store}");
    assert_eq!(store["required_writes"], "2", "{store}");
}

#[test]
#[ignore = "needs javac and mvn: ./test.sh installs them"]
fn keys_land_on_the_replicas_upstreams_java_client_routes_them_to() {
    // Replication 2 of 3 nodes: each key on two of them, so routing shows.
    let own = OwnServer::start(&["--nodes", "3", "--set", "replication_factor=2"]);
    let tmp = TempDir::new().unwrap();
    run_and_verify(
        &tmp,
        &own.url,
        &["-w", "kv-50w-50r", "--records", "200", "--events", "400"],
    );
    let partitions = (0..12).map(|p| p.to_string()).collect::<Vec<_>>().join(",");
    let fetches: Vec<String> = (0..3)
        .map(|node| format!("fetchkeys {node} hatshop {partitions}"))
        .collect();
    let mut holders: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (node, (_, keys)) in java_shell(&own, &fetches).into_iter().enumerate() {
        for key in keys.into_iter().filter(|k| k.starts_with("user")) {
            holders.entry(key).or_default().insert(node);
        }
    }
    assert!(holders.len() >= 200, "{} keys found", holders.len());
    let sample: Vec<&String> = holders.keys().step_by(holders.len() / 40).collect();
    let preflists: Vec<String> = sample.iter().map(|k| format!("preflist \"{k}\"")).collect();
    let routed = java_shell(&own, &preflists);
    assert_eq!(routed.len(), sample.len());
    for (key, (_, lines)) in sample.iter().zip(routed) {
        let nodes: BTreeSet<usize> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("Node ")?.trim().parse().ok())
            .collect();
        assert_eq!(nodes.len(), 2, "{key}: {lines:?}");
        assert_eq!(&holders[*key], &nodes, "{key}: held by, routed to");
    }
}

#[test]
#[ignore = "needs the suite's Voldemort: ./test.sh starts it"]
fn concurrent_rewrites_of_one_key_count_conflicts_and_lose_no_acknowledged_write() {
    let _suite = lock(&SUITE_SERVER);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let db = DbUrl::parse(&url("HATSHOP_TEST_VOLDEMORT")).unwrap();
        let options = ConnectOptions {
            concurrency: 4,
            settings: Settings::default(),
            connect_timeout: Duration::from_secs(10),
            op_timeout: Duration::from_secs(10),
            existing_only: false,
            key_value_only: false,
        };
        let store = std::sync::Arc::new(AnyStore::connect(&db, &options).await.unwrap());
        let owner = Ownership {
            recreate: true,
            note: "conflict test".into(),
        };
        store.setup(&owner).await.unwrap();
        let key = KeyText::of(7);
        store.kv_write(&key, b"start").await.unwrap();
        let writers = (0..4).map(|writer| {
            let store = store.clone();
            tokio::spawn(async move {
                let (mut acked, mut conflicts) = (Vec::new(), 0);
                for i in 0..150 {
                    let value = format!("{writer}-{i:04}");
                    match store.kv_rewrite(&key, value.as_bytes()).await {
                        Ok(Applied::Yes) => {
                            // Read-your-writes: this value or another writer's, never an
                            // older one of this writer's.
                            let seen = store.kv_read(&key).await.unwrap().unwrap();
                            let seen = String::from_utf8(seen).unwrap();
                            assert!(
                                seen == value || !seen.starts_with(&format!("{writer}-")),
                                "wrote {value}, then read {seen}"
                            );
                            acked.push(value);
                        }
                        Ok(other) => panic!("{value}: {other:?}"),
                        Err(e) if e.kind == ErrorKind::Conflict => conflicts += 1,
                        Err(e) => panic!("{value}: {e}"),
                    }
                }
                (acked, conflicts)
            })
        });
        let mut acked = BTreeSet::new();
        let mut conflicts = 0;
        for writer in writers.collect::<Vec<_>>() {
            let (values, lost) = writer.await.unwrap();
            acked.extend(values);
            conflicts += lost;
        }
        assert!(conflicts > 0, "four writers on one key never raced");
        assert_eq!(
            acked.len() + conflicts,
            600,
            "every rewrite acknowledged or conflicted"
        );
        let last = store.kv_read(&key).await.unwrap().unwrap();
        assert!(
            acked.contains(&String::from_utf8(last.clone()).unwrap()),
            "the final value {} was acknowledged",
            String::from_utf8_lossy(&last)
        );
    });
}

/// A run of `seconds` with `faults` (TOML) on the suite's server.
fn faulted_run(tmp: &TempDir, name: &str, faults: &str, seconds: &str) -> PathBuf {
    let file = tmp.path().join(format!("{name}.toml"));
    std::fs::write(&file, faults).unwrap();
    let home = std::env::var("HATSHOP_HOME").expect("HATSHOP_HOME: run ./test.sh");
    common::run_ok(
        tmp,
        name,
        &[
            "--db",
            &url("HATSHOP_TEST_VOLDEMORT"),
            "-w",
            "kv-50rw-50r",
            "--records",
            "500",
            "--warmup",
            "0",
            "--events",
            "1000000",
            "--duration",
            seconds,
            "--op-timeout",
            "5",
            "--faults",
            file.to_str().unwrap(),
            "--home",
            &home,
        ],
    )
}

#[test]
#[ignore = "needs the suite's Voldemort: ./test.sh starts it"]
fn one_killed_node_of_three_keeps_quorums_two_give_counted_errors() {
    let _suite = lock(&SUITE_SERVER);
    let home = PathBuf::from(std::env::var("HATSHOP_HOME").expect("run ./test.sh"));
    let tmp = TempDir::new().unwrap();

    // Node 2 killed 1.5 s in: R=2 and W=2 are still met by nodes 1 and 3.
    let kill_one = "[[faults]]\nat = \"1.5s\"\naction = \"kill\"\nnode = 2\n";
    let out = faulted_run(&tmp, "kill-one", kill_one, "5");
    let summary = json(&out.join("summary.json"));
    let ops = summary["ops"].as_u64().unwrap();
    let run = json(&out.join("run.json"));
    assert_eq!(
        op_rows(&out).len() as u64,
        logged_calls(&run),
        "every operation is logged"
    );
    assert!(summary["errors"].as_u64().unwrap() * 20 < ops, "{summary}");
    // The last third of the run (by timestamp) came after the kill, and succeeded.
    let mut rows = op_rows(&out);
    rows.sort_by(|a, b| a.timestamp.cmp(&b.timestamp));
    let last_third = &rows[rows.len() * 2 / 3..];
    let after = last_third.iter().filter(|r| r.success).count();
    assert!(
        after > 50 && after * 10 > last_third.len() * 9,
        "{after} of {} succeeded after the kill",
        last_third.len()
    );
    server_ok(&home, &["start", "voldemort", "--node", "2"]);
    verify_ok(tmp.path(), &out);

    // Nodes 2 and 3 killed: no quorum; errors counted by kind, the run completes.
    let kill_two = "[[faults]]\nat = \"1s\"\naction = \"kill\"\nnode = 2\n\n\
                    [[faults]]\nat = \"1s\"\naction = \"kill\"\nnode = 3\n";
    let out = faulted_run(&tmp, "kill-two", kill_two, "4");
    let summary = json(&out.join("summary.json"));
    let unavailable = errors_of(&summary, "unavailable");
    assert!(unavailable > 100, "{summary}");
    assert_eq!(
        op_rows(&out).len() as u64,
        logged_calls(&json(&out.join("run.json"))),
        "every operation is logged"
    );
    let log = common::exported_csv(&out);
    assert!(
        log.contains("required, but only"),
        "the cause is in the op log"
    );
    // Back up, the nodes rejoin: a new run on all three verifies. (The killed run is not
    // judged: with upstream's default bdb.flush.transactions=false a node killed with
    // SIGKILL loses its last writes, and two of three can lose an acknowledged one.)
    server_ok(&home, &["start", "voldemort", "--node", "2"]);
    server_ok(&home, &["start", "voldemort", "--node", "3"]);
    run_and_verify(
        &tmp,
        &url("HATSHOP_TEST_VOLDEMORT"),
        &["-w", "kv-50rw-50r", "--records", "300", "--events", "600"],
    );
}

#[test]
#[ignore = "needs the suite's Voldemort: ./test.sh starts it"]
fn a_dead_address_or_a_missing_store_is_one_line() {
    let tmp = TempDir::new().unwrap();
    common::assert_one_line_error(
        tmp.path(),
        &[
            "run",
            "--events",
            "10",
            "--db",
            "voldemort://127.0.0.1:1/hatshop",
        ],
        "no Voldemort node answered",
    );
    let db = url("HATSHOP_TEST_VOLDEMORT");
    let elsewhere = format!("{}/nosuchstore", db.rsplit_once('/').unwrap().0);
    common::assert_one_line_error(
        tmp.path(),
        &["run", "--events", "10", "--db", &elsewhere],
        "the cluster has no store named 'nosuchstore'",
    );
}
