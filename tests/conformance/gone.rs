//! A server that cannot be reached, or that dies mid-run and stays dead: one line, in
//! good time, and a folder that holds every operation that ran.

use std::time::{Duration, Instant};

use super::common::{
    OwnHome, assert_ran_on_the_asked_wire, each_client_stack, hatshop, json, logged_calls,
    op_journal, op_rows, server, spawn, text, wait_for_bytes,
};
use tempfile::TempDir;

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
/// line, its folder whole; over each client stack the store has, a server each.
fn a_server_gone_for_good_ends_the_run(kind: &str) {
    let mut stack = 0;
    loop {
        let (home, url) = OwnHome::with_server(&[kind]);
        let stacks = each_client_stack(&url);
        killed_mid_run(&home, kind, &stacks[stack]);
        stack += 1;
        if stack == stacks.len() {
            break;
        }
    }
}

/// Runs on `url` until a run is under way, kills the `kind` server of `home`, and
/// checks how the run ends.
fn killed_mid_run(home: &OwnHome, kind: &str, url: &str) {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("run");
    let out_arg = out.to_str().unwrap();
    let mut child = spawn(
        tmp.path(),
        &[
            "run",
            "--quiet",
            "--db",
            url,
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
    wait_for_bytes(&op_journal(&out), 10_000);
    let killed = server(home.0.path(), &["kill", kind]);
    assert!(killed.status.success(), "{}", text(&killed.stderr));
    let since_kill = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if since_kill.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("{url}: the run went on for a minute against a dead server");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // Three connect timeouts of 1 s, and the calls in flight.
    assert!(
        since_kill.elapsed() < Duration::from_secs(15),
        "{url}: {:?}",
        since_kill.elapsed()
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{url}: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{url}: {stderr}");
    assert!(
        errors[0].starts_with("error: the run failed: no operation reached the store for 3 s"),
        "{url}: {stderr}"
    );
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "failed", "{run}");
    assert_ran_on_the_asked_wire(&out, url);
    let measured = run["measured_ops"].as_u64().unwrap();
    assert_eq!(op_rows(&out).len() as u64, logged_calls(&run), "{kind}");
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
